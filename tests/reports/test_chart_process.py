"""Charts drawn beside the report: every model labelled at many rows, same files with or
without a worker process, and a drawing error is one line."""

from __future__ import annotations

import html
import json
import multiprocessing
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from independence_bench.reports.charts import ROW_HEIGHT
from independence_bench.workflows.report import ReportOptions, write_report
from support.report_fixtures import FEW_RESAMPLES, build_store

MODELS = {f"vendor-{n % 4}/model-{n:02d}": 0.2 + n / 70 for n in range(45)}


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("many")
    build_store(data, MODELS, runs=1).close()
    return data


def _png_height(path: Path) -> int:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return int(struct.unpack(">I", header[20:24])[0])


def test_every_model_has_its_own_labelled_row(many: Path) -> None:
    out, charts = write_report(
        ReportOptions(data_dir=many, out=many / "rep", resampling=FEW_RESAMPLES)
    )
    assert [p.stem for p in charts] == ["index", "profile", "pressure"]
    for chart in charts:
        svg = html.unescape(chart.with_suffix(".svg").read_text("utf-8"))
        assert all(label in svg for label in MODELS), chart.name
        # 0.3 inches per row at 150 dpi: rows are never squeezed to fit a page
        assert _png_height(chart) >= len(MODELS) * ROW_HEIGHT * 150
    index = html.unescape((_only_folder(out / "charts") / "index.svg").read_text("utf-8"))
    drawn = [m.group() for m in re.finditer(r"vendor-\d/model-\d\d", index)]
    (suite,) = json.loads((out / "results.json").read_text("utf-8"))["suites"]
    assert drawn == [row["model"] for row in suite["models"]]  # leaderboard order, best on top


def test_charts_drawn_inline_match_the_worker_process(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forked = write_report(
        ReportOptions(data_dir=many, out=many / "forked", resampling=FEW_RESAMPLES)
    )
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    inline = write_report(
        ReportOptions(data_dir=many, out=many / "inline", resampling=FEW_RESAMPLES)
    )
    assert [p.relative_to(forked[0]) for p in forked[1]] == [
        p.relative_to(inline[0]) for p in inline[1]
    ]
    for path in forked[1]:
        twin = inline[0] / path.relative_to(forked[0])
        assert path.with_suffix(".svg").read_bytes() == twin.with_suffix(".svg").read_bytes()


def test_a_chart_that_cannot_be_written_is_one_line(tmp_path: Path, aib: Any) -> None:
    build_store(tmp_path / "store", {"a": 0.8, "b": 0.3}, runs=1).close()
    out = tmp_path / "out"
    out.mkdir()
    (out / "charts").write_text("a file where the charts folder goes")
    result = aib("report", "--data-dir", str(tmp_path / "store"), "--out", str(out),
                 "--resamples", "100")  # fmt: skip
    assert result.code == 2
    assert result.err.count("\n") == 1 and "cannot write the report to" in result.err
    assert "choose another --out" in result.err and "Traceback" not in result.err


def _only_folder(charts: Path) -> Path:
    """The one suite's chart folder (named by the suite id and the stored suite hash)."""
    (folder,) = charts.iterdir()
    return folder
