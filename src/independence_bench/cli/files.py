"""`aib report`, `view` and `import`: the commands that write or read files beside the store.

Each parses its options into the options object of its workflow (`workflows/report.py`,
`view.py`, `imports.py`) and calls that workflow's `*_command`, imported when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from independence_bench.cli.options import (
    data_dir_of,
    data_dir_option,
    echo_for,
    every_suite_option,
    models_of,
    out_option,
    read_env,
    resamples_option,
    resampling_of,
    resolve_data_dir,
    scored_by_option,
    selection_of,
    shown_results_options,
)


def _written_from_store(values: Mapping[str, Any]) -> dict[str, Any]:
    """What `report` and `view` share: the store, the output folder and the report's scope."""
    return {
        "data_dir": data_dir_of(values),
        "out": values["out"],
        "suite_id": values["suite"],
        "judge": values["judge"],
        "resampling": resampling_of(values),
    }


@click.command()
@out_option("report")
@every_suite_option
@scored_by_option
@click.option(
    "--charts/--no-charts", default=True, show_default=True, help="Draw charts (needs matplotlib)."
)
@resamples_option
@shown_results_options
def report(**values: Any) -> None:
    """Write LEADERBOARD.md, results.json, results.csv and charts from the store."""
    from independence_bench.workflows.report import ReportOptions, report_command

    options = ReportOptions(
        **_written_from_store(values),
        charts=values["charts"],
        selection=selection_of(values),
        models=models_of(values),
    )
    report_command(options, echo=echo_for())


@click.command()
@out_option("viewer")
@every_suite_option
@scored_by_option
@click.option("--serve", is_flag=True, help="Also serve the viewer on 127.0.0.1 until Ctrl-C.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port for --serve (0 picks a free one).",
)
@resamples_option
@data_dir_option
def view(**values: Any) -> None:
    """Write the transcript viewer (a static folder that works offline); optionally serve it."""
    from independence_bench.workflows.view import ViewOptions, view_command

    options = ViewOptions(**_written_from_store(values))
    view_command(options, serve=values["serve"], port=values["port"], echo=echo_for())


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="That implementation's models.yaml naming the configurations "
    "(default: configs/models.yaml beside cache/).",
)
@data_dir_option
def import_(path: Path, labels: Path | None, data_dir: Path | None) -> None:
    """Import Inspect logs of our tasks (a .eval/.json file or folder) or result folders of the
    earlier implementation: transcripts, verdicts, tokens and costs, nothing asked again."""
    from independence_bench.workflows.imports import ImportOptions, import_command

    env = read_env(Path.cwd())
    options = ImportOptions(path=path, data_dir=resolve_data_dir(data_dir, env), labels=labels)
    import_command(options, echo=echo_for())
