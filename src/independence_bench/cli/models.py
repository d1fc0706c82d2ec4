"""`aib models`: check a models.yaml or a shipped preset and list its models, or list the presets.

It calls `workflows/models.py`, imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The models.yaml to check.",
)
@click.option("--preset", default=None, help="A shipped model list to show.")
@click.option("--yaml", "as_yaml", is_flag=True, help="Print the preset's YAML (to edit a copy).")
def models(config_path: Path | None, preset: str | None, as_yaml: bool) -> None:
    """Validate a models.yaml or a preset and list it; with no option, list the presets."""
    if as_yaml and preset is None:
        raise click.UsageError("--yaml prints a preset; add --preset NAME")
    from independence_bench.cli.options import echo_for
    from independence_bench.workflows.models import models_command

    models_command(config_path, preset, as_yaml=as_yaml, echo=echo_for())
