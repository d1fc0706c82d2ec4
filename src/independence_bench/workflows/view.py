"""`aib view`: the static transcript viewer, written from the store and optionally served.

`build_viewer` is the Python API (no API call; `reports/viewer/` writes the files);
`view_command` adds the line the terminal shows and, with `--serve`, serves the folder on
127.0.0.1 until interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from independence_bench.gathering.options import ReportScope
from independence_bench.gathering.suite_report import build_reports
from independence_bench.gathering.transcripts import viewer_transcripts
from independence_bench.reports.viewer import serve_viewer, write_viewer
from independence_bench.store.store import Store
from independence_bench.workflows import Echo


@dataclass(frozen=True)
class ViewOptions(ReportScope):
    """`aib view`: which suites and judge (`ReportScope`), and where to write the viewer."""

    data_dir: Path = Path("aib-data")
    out: Path | None = None
    """Default: `<data_dir>/viewer`."""


def build_viewer(options: ViewOptions) -> Path:
    """Write the static viewer folder from the store (no API call); return its index.html."""
    return _write(options)[0]


def _write(options: ViewOptions) -> tuple[Path, list[str]]:
    out = options.out or options.data_dir / "viewer"
    with Store(options.data_dir, read_only=True) as store:
        reports = build_reports(store, options)
        notes = [r.judge_note for r in reports if r.judge_note]
        return write_viewer(viewer_transcripts(store, reports), out), notes


def view_command(options: ViewOptions, *, serve: bool, port: int, echo: Echo) -> None:
    """`aib view`: write the viewer, say where (and which judge's scores), and serve it."""
    index, notes = _write(options)
    echo(f"viewer written to {index}; open it in a browser (works from file://)")
    for note in notes:
        echo(note)
    if serve:
        serve_viewer(index.parent, port, echo=echo)
