"""`aib report`: LEADERBOARD.md, results.json, results.csv and charts, written from the store.

`write_report` is the Python API: it reads the store only (no API call), gathers one
`SuiteReport` per suite (`gathering/suite_report.py`) and writes each rendering beside the others;
`report_command` adds the line the terminal shows.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from independence_bench.errors import UserError
from independence_bench.gathering.options import ReportScope
from independence_bench.gathering.suite_report import build_reports, suite_ids
from independence_bench.reports.charts import ChartDrawing, require_matplotlib, safe_name
from independence_bench.reports.exports import results_csv, results_document
from independence_bench.reports.markdown import render_leaderboard
from independence_bench.store.standings import suite_judge_counts
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
    return _write_report(options)[:2]


def _write_report(options: ReportOptions) -> tuple[Path, list[Path], str | None]:
    if options.charts:
        require_matplotlib()
    out, note = report_folder(options)
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
    return out, [path for paths in charts.values() for path in paths], note


def _planned_judges(options: ReportOptions) -> dict[str, str]:
    """Per suite, the judge the report will show (`results.choose_scoring_judge`'s rule)."""
    with Store(options.data_dir, read_only=True) as store:
        planned = {}
        for suite in suite_ids(store, options.suite_id):
            counts = suite_judge_counts(store, suite)
            judge = options.judge or next(iter(counts), None)
            if judge is not None:
                planned[suite] = judge
    return planned


def _written_judges(folder: Path) -> dict[str, str]:
    """Per suite, the judge of the report already in `folder` (none: an empty dict)."""
    try:
        document = json.loads((folder / "results.json").read_text("utf-8"))
        return {str(s["suite"]): str(s["judge"]) for s in document["suites"] if s["judge"]}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def report_folder(options: ReportOptions) -> tuple[Path, str | None]:
    """Where the report goes, and a line when another judge's report is there.

    One report per judge: by default `<data_dir>/report`, but when that folder holds a report
    of another judge it is kept and this one goes to `<data_dir>/report-<judge>`. An `--out`
    folder is replaced, and the line says whose report was replaced."""
    planned = _planned_judges(options)
    out = options.out or options.data_dir / "report"
    written = _written_judges(out)
    changed = {s: (written[s], j) for s, j in planned.items() if s in written and written[s] != j}
    if not changed:
        return out, None
    before = ", ".join(sorted({old for old, _ in changed.values()}))
    now = ", ".join(sorted({new for _, new in changed.values()}))
    if options.out is not None:
        return out, f"replaced the report of judge {before} in {out} with judge {now}'s"
    folder = options.data_dir / f"report-{safe_name(now)}"
    return folder, (
        f"{out} holds judge {before}'s report and is kept; judge {now}'s goes to {folder} "
        "(--judge NAME picks the judge, --out DIR the folder)"
    )


def report_command(options: ReportOptions, *, echo: Echo) -> None:
    """`aib report`: write the report and say where (and whose report it did not replace)."""
    out, charts, note = _write_report(options)
    files = "LEADERBOARD.md, results.json, results.csv"
    echo(f"report written to {out}: {files} and {len(charts)} charts")
    if note:
        echo(note)
