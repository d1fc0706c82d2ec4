"""`aib report`: LEADERBOARD.md, results.json, results.csv and charts, written from the store.

`write_report` is the Python API: it reads the store only (no API call), gathers one
`SuiteReport` per suite (`reports/report/`) and writes each rendering beside the others;
`report_command` adds the line the terminal shows.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from independence_bench.errors import UserError
from independence_bench.reports.charts import ChartDrawing, require_matplotlib
from independence_bench.reports.exports import results_csv, results_document
from independence_bench.reports.markdown import render_leaderboard
from independence_bench.reports.options import ReportScope
from independence_bench.reports.report import build_reports
from independence_bench.store.store import Store
from independence_bench.suites.selection import EVERYTHING, Selection
from independence_bench.text.lossless import json_document
from independence_bench.workflows import Echo


@dataclass(frozen=True)
class ReportOptions(ReportScope):
    """`aib report`: which suites and judge (`ReportScope`), where to write, and charts."""

    data_dir: Path = Path("aib-data")
    out: Path | None = None
    """Default: `<data_dir>/report`."""
    charts: bool = True
    selection: Selection = EVERYTHING
    """Only these experiments, variants and modes (no index when an experiment is left out)."""


def write_report(options: ReportOptions) -> tuple[Path, list[Path]]:
    """Write LEADERBOARD.md, results.json, results.csv and charts; return the folder and charts.

    Reads the store only (no API call). Checks for matplotlib before writing anything. The
    charts are drawn in a second process from the moment each leaderboard exists
    (`reports/charts/`).
    """
    if options.charts:
        require_matplotlib()
    out = options.out or options.data_dir / "report"
    with ChartDrawing(out) if options.charts else nullcontext() as drawing:
        with Store(options.data_dir, read_only=True) as store:
            reports = build_reports(
                store,
                options,
                selection=options.selection,
                on_chart_data=drawing.draw if drawing else None,
            )
        try:
            out.mkdir(parents=True, exist_ok=True)
            # no indent: json's C encoder runs only without one (indent=1 took seconds)
            document = json_document(results_document(reports))
            (out / "results.json").write_text(document + "\n", "utf-8")
            (out / "results.csv").write_text(results_csv(reports), "utf-8")
            charts = drawing.paths() if drawing else {}
            relative = {
                suite: [p.relative_to(out) for p in paths] for suite, paths in charts.items()
            }
            (out / "LEADERBOARD.md").write_text(render_leaderboard(reports, relative), "utf-8")
        except OSError as exc:
            raise UserError(
                f"cannot write the report to {out}: {exc}; choose another --out"
            ) from None
    return out, [path for paths in charts.values() for path in paths]


def report_command(options: ReportOptions, *, echo: Echo) -> None:
    """`aib report`: write the report and say where."""
    out, charts = write_report(options)
    files = "LEADERBOARD.md, results.json, results.csv"
    echo(f"report written to {out}: {files} and {len(charts)} charts")
