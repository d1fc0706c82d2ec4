"""Presets: starter model lists shipped as data (`data/presets/<name>.yaml`).

A preset has exactly the schema of a `models.yaml` (`config.ModelsFile`) and is read through the
same validation, so `aib run --preset NAME` and `aib run --config FILE` plan the same run from the
same lists. The ids are OpenRouter's at the time of writing; they change as models are renamed
or retired, which is why a preset is data, not code.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from independence_bench.clients.config import ModelsFile, load_models_file, parse_models_file
from independence_bench.clients.redact import without_url_credentials
from independence_bench.errors import UserError
from independence_bench.text.counts import count_of


def available_presets() -> tuple[str, ...]:
    """Names of the shipped presets, sorted."""
    folder = resources.files("independence_bench").joinpath("data", "presets")
    names = (p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))
    return tuple(sorted(names))


def preset_text(name: str) -> str:
    """The YAML text of preset `name`; `UserError` naming the presets there are otherwise."""
    known = available_presets()
    if name not in known:
        raise UserError(f"unknown preset {name!r}; choose one of: {', '.join(known)}")
    resource = resources.files("independence_bench").joinpath("data", "presets", f"{name}.yaml")
    return resource.read_text(encoding="utf-8")


def load_preset(name: str) -> ModelsFile:
    """Preset `name`, validated like a `models.yaml`."""
    return parse_models_file(preset_text(name), f"preset {name}")


def describe_presets() -> str:
    """`aib models` with no option: every preset, its models and how to use it."""
    lines = ["presets (aib models --preset NAME to list one, aib run --preset NAME to run it):"]
    for name in available_presets():
        preset = load_preset(name)
        ids = ", ".join(spec.display_label for spec in preset.models)
        lines.append(f"  {name:<10} {count_of(len(preset.models), 'model')}: {ids}")
    return "\n".join(lines)


def describe_models(path: Path | None, preset: str | None = None) -> str:
    """`aib models`: a models.yaml or a preset checked and listed; with neither, the presets."""
    if path is not None and preset is not None:
        raise UserError("give either --config or --preset, not both")
    if path is None and preset is None:
        return describe_presets()
    models_file = load_models_file(path) if path is not None else load_preset(str(preset))
    source = path if path is not None else f"preset {preset}"
    lines = [f"{source}: {count_of(len(models_file.models), 'model')}"]
    for spec in models_file.models:
        where = without_url_credentials(", ".join(spec.base_urls) or spec.base_url or "OpenRouter")
        lines.append(f"  {spec.display_label:<40} {spec.id} on {where}")
    if models_file.judge is not None:
        lines.append(f"  judge: {models_file.judge.display_label}")
    return "\n".join(lines)
