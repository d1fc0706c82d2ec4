"""Published names of imported configurations, read from the earlier implementation's models.yaml.

That implementation named each configuration on its leaderboard by its `configs/models.yaml`
entry: `display_label` when given, else the model id without its provider prefix followed by
`@<reasoning>-t<temperature>` (`gemini-3-flash-preview@none-t0.7`). Its result folders sit in
`cache/` beside `configs/`, named `<provider>--<model>[+<pin>]@<reasoning>-t<temperature>`.
A folder the file does not list was published as its bare model id (the folder name before
`@`, its first `--` read as `/`), or under the one entry of that model id when there is exactly
one. Model ids with more than one `/` (`nvidia/moonshotai/kimi-k2.5`) became folder names with
every `/` as `--`, which no reading of the folder name can undo, so entries are matched to
folders in that folder-name form. `published_labels` maps each folder name to the published
name, so `aib import` can store the runs under the names readers know; `models_yaml_beside`
finds that file for a `cache/` tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from independence_bench.errors import UserError, read_user_text
from independence_bench.legacy.format import label_of_folder, parse_config_folder


class PublishedModel(BaseModel):
    """One entry of the earlier implementation's `configs/models.yaml` (its other fields,
    such as `active`, do not change a name and are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    model_id: str
    temperature: float
    reasoning_effort: str
    provider: str | None = None
    display_label: str | None = None

    @field_validator("reasoning_effort", mode="before")
    @classmethod
    def _effort_text(cls, value: object) -> object:
        return "none" if value is None else value

    @property
    def label(self) -> str:
        """The name that implementation's leaderboard shows for this configuration."""
        if self.display_label:
            return self.display_label
        name = self.model_id.split("/", 1)[-1]
        return f"{name}@{self.reasoning_effort}-t{self.temperature}"

    def matches(self, folder: str) -> bool:
        """Whether result folder `folder` holds this configuration's runs."""
        parsed = parse_config_folder(folder)
        if parsed.temperature is None or _slug(parsed.model_id) != _slug(self.model_id):
            return False
        effort = parsed.reasoning_effort or ""
        pin = parsed.provider[0] if parsed.provider else None
        wanted_pin = self.provider.replace("/", "-") if self.provider else None
        same_pin = (pin.replace("/", "-") if pin else None) == wanted_pin
        return (
            effort == self.reasoning_effort.lower()
            and parsed.temperature == self.temperature
            and same_pin
        )


def _slug(model_id: str) -> str:
    """A model id as it appears in a folder name: every `/` as `--`."""
    return model_id.replace("/", "--")


def bare_model_id(folder: str) -> str:
    """The name that leaderboard gave a folder its models.yaml does not list: the folder name
    before `@`, its first `--` read as `/` (`acme--m+pin@low-t1.0` → `acme/m+pin`)."""
    return label_of_folder(folder.split("@", 1)[0])


class PublishedModels(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    models: tuple[PublishedModel, ...]


def read_published_models(path: Path) -> PublishedModels:
    """The earlier implementation's models.yaml; `UserError` naming the file when unreadable."""
    text = read_user_text(path, str(path), "check the --labels path")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise UserError(f"{path} is not valid YAML; fix it or leave out --labels") from None
    try:
        return PublishedModels.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(
            f"{path}: {where}: {first['msg']}; expected the earlier implementation's models.yaml "
            "(models: [{model_id, temperature, reasoning_effort, …}])"
        ) from None


def published_labels(path: Path, folders: Sequence[str]) -> dict[str, str]:
    """Folder name → published name: for every folder one entry of `path` matches, its label;
    for the others, the bare model id (or the label of the one entry with that model id), as
    that leaderboard named them. A name already given keeps a second folder out (that
    leaderboard showed one row per name): such a folder keeps its folder name."""
    entries = read_published_models(path).models
    out: dict[str, str] = {}
    for folder in folders:
        found = [entry for entry in entries if entry.matches(folder)]
        if len(found) == 1:
            out[folder] = found[0].label
    for folder in folders:
        if folder in out:
            continue
        model_id = bare_model_id(folder)
        same = [entry for entry in entries if entry.model_id == model_id]
        label = same[0].label if len(same) == 1 else model_id
        if label not in out.values():
            out[folder] = label
    return out


def models_yaml_beside(config_dirs: Sequence[Path]) -> Path | None:
    """`<repo>/configs/models.yaml` for result folders in `<repo>/cache/`, when it exists."""
    if not config_dirs:
        return None
    candidate = config_dirs[0].parent.parent / "configs" / "models.yaml"
    return candidate if candidate.is_file() else None


def unnamed(labels: Mapping[str, str], folders: Sequence[str]) -> list[str]:
    """The folders no entry names (they keep the label read from the folder name)."""
    return [folder for folder in folders if folder not in labels]
