"""`aib models`: check a models.yaml or a shipped preset and list its models, or list the presets.

The listing and the preset files are `clients/presets.py`'s.
"""

from __future__ import annotations

from pathlib import Path

from independence_bench.clients.presets import describe_models, preset_text
from independence_bench.workflows import Echo


def models_command(
    config_path: Path | None, preset: str | None, *, as_yaml: bool, echo: Echo
) -> None:
    """List the models of `config_path` or `preset` (validated), the presets when neither is
    given, or (`as_yaml`) the preset's YAML."""
    if as_yaml:
        echo(preset_text(str(preset)).rstrip())
        return
    echo(describe_models(config_path, preset))
