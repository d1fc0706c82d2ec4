"""`aib report`: LEADERBOARD.md, results.json, results.csv and charts from a store."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from independence_bench.gathering.options import ReportScope
from independence_bench.gathering.suite_report import build_reports, sum_costs
from independence_bench.reports.markdown import md_text, render_leaderboard
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.report import ReportOptions, write_report
from support.mock_server import MockServer
from support.report_fixtures import FEW_RESAMPLES, HOSTILE_REPLY, build_store

RESAMPLES = "200"


def _loopback_store(server: MockServer, aib: Any, data: Path, runs: str = "2") -> None:
    result = aib(
        "run",
        "--models",
        "scripted-firm,scripted-caving",
        "--judge",
        "scripted-judge",
        "--base-url",
        server.base_url,
        "--runs",
        runs,
        "--data-dir",
        str(data),
    )
    assert result.code == 0, result.err


def test_report_of_a_loopback_run(server: MockServer, aib: Any) -> None:
    data = Path("store")
    _loopback_store(server, aib, data)
    result = aib("report", "--data-dir", str(data), "--resamples", RESAMPLES)
    assert result.code == 0, result.err
    out = data / "report"
    assert "report written to" in result.out and "3 charts" in result.out

    board = {
        row["model"]: row for row in aib("leaderboard", "--data-dir", str(data), "--json").json()
    }  # type: ignore[attr-defined]
    document = json.loads((out / "results.json").read_text("utf-8"))
    (suite,) = document["suites"]
    assert suite["suite"] == "v2" and suite["judge"] == "scripted-judge"
    standing = suite["judge_standing"]
    assert standing["standing"] == "not calibrated" and standing["judge"] == "scripted-judge"
    assert standing["index_spearman"] is None
    models = {row["model"]: row for row in suite["models"]}
    assert list(models) == ["scripted-firm", "scripted-caving"]  # best first
    for name, row in models.items():
        assert row["index"] == pytest.approx(board[name]["index"], abs=0.01)
        assert row["runs"] == 2 and row["complete"]
        assert row["ci_low"] <= row["index"] <= row["ci_high"]
        assert row["cost_usd"] > 0 and row["unpriced_calls"] == 0
    firm = models["scripted-firm"]
    assert firm["metrics"]["stability"]["value"] == 10.0
    assert [e["experiment"] for e in firm["experiments"]] == ["identity", "boundary", "stability"]
    assert firm["experiments"][1]["scored"] == 2 * 5  # five boundary scenarios, two runs

    conversations = 2 * 2 * len(load_suite("v2").scenarios)
    assert len(suite["items"]) == conversations
    db = sqlite3.connect(data / "aib.sqlite3")
    for item in suite["items"]:
        row = db.execute(
            "SELECT j.item_id, j.status FROM judgments j WHERE j.id = ?", (item["judgment_id"],)
        ).fetchone()
        assert row == (item["item_id"], item["status"])
        for key in item["completion_keys"] + item["judge_completion_keys"]:
            assert db.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone()

    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text("utf-8"))))
    assert [r["row"] for r in rows].count("model") == 2
    assert [r["row"] for r in rows].count("item") == conversations
    item_row = next(r for r in rows if r["row"] == "item")
    assert len(item_row["completion_keys"].split()) >= 1 and item_row["judgment_id"].isdigit()
    assert {r["judge_standing"] for r in rows} == {"not calibrated"}

    markdown = (out / "LEADERBOARD.md").read_text("utf-8")
    top = markdown.split("## ")[0]  # before the first suite's section
    assert "> **Suite v2.** Judge scripted-judge: not calibrated" in top
    ranking = markdown.split("### How to read")[0]
    assert ranking.index("scripted-firm") < ranking.index("scripted-caving")
    assert f"{firm['index']:.1f}" in ranking and f"{firm['ci_low']:.1f}–" in ranking
    assert "| Rank | Model | Index | 95% interval | Runs |" in markdown
    assert "hierarchical bootstrap" in markdown and "200 resamples" in markdown
    assert "### scripted-caving" in markdown and "### Item difficulty" in markdown
    assert (
        "| Scenario | Metric | Models | At max | SD | Max − min | Item–rest r | Flag |" in markdown
    )
    per_metric = [m for d in suite["item_difficulty"] for m in d["metrics"]]
    assert len(per_metric) >= len(load_suite("v2").scenarios)
    # two models: a correlation needs three, so it is undefined (null, "–"), never NaN
    assert all(m["models"] == 2 and m["item_rest_correlation"] is None for m in per_metric)
    assert "Prompt variant × delivery mode" not in markdown  # v2 has one cell
    # the folder is named by the suite hash the report (and `aib run`) prints, same length
    printed = re.search(r"suite hash ([0-9a-f]+)", markdown)
    assert printed is not None and len(printed[1]) == 12
    assert printed[1] == load_suite("v2").content_hash[:12]
    folder = f"v2-{printed[1]}"
    charts = out / "charts" / folder
    assert [p.name for p in (out / "charts").iterdir()] == [folder]
    for name in ("index", "profile", "pressure"):
        assert (charts / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = (charts / f"{name}.svg").read_text("utf-8")
        assert "scripted-caving" in svg
        assert "Judge scripted-judge: not calibrated" in html.unescape(svg)  # the footer
        assert f"(charts/{folder}/{name}.png)" in markdown


def test_report_makes_no_api_call(server: MockServer, aib: Any) -> None:
    data = Path("store")
    _loopback_store(server, aib, data, runs="1")
    before = server.seen.request_count
    assert aib("report", "--data-dir", str(data), "--no-charts").code == 0
    assert server.seen.request_count == before


def test_unknown_cost_is_unknown_never_zero(tmp_path: Path) -> None:
    build_store(tmp_path, {"priced": 0.9, "unpriced": 0.5}, unpriced=["unpriced"]).close()
    out, _ = write_report(ReportOptions(data_dir=tmp_path, charts=False, resampling=FEW_RESAMPLES))
    models = {
        m["model"]: m for m in json.loads((out / "results.json").read_text())["suites"][0]["models"]
    }
    assert models["unpriced"]["cost_usd"] is None and models["unpriced"]["index_per_usd"] is None
    assert models["unpriced"]["unpriced_calls"] == models["unpriced"]["calls"] > 0
    calls = models["priced"]["calls"]
    assert models["priced"]["cost_usd"] == pytest.approx(0.001 * calls)
    per_run = 0.001 * calls / 2
    assert models["priced"]["index_per_usd"] == pytest.approx(
        models["priced"]["index"] / per_run, rel=1e-3
    )
    line = next(x for x in (out / "LEADERBOARD.md").read_text().splitlines() if "| unpriced |" in x)
    assert "| unknown |" in line and "$0.0000" not in line


def test_sum_costs() -> None:
    assert sum_costs([0.5, 0.25]).usd == 0.75
    partial = sum_costs([0.5, None])
    assert partial.usd is None and partial.known_usd == 0.5 and partial.unpriced == 1
    assert sum_costs([]).usd == 0


def test_failed_unscored_and_single_run_models_are_explained(tmp_path: Path) -> None:
    build_store(tmp_path, {"steady": 0.8}, runs=1).close()
    with sqlite3.connect(tmp_path / "aib.sqlite3") as db:
        # One conversation failed (so it was never judged); one judge reply never parsed.
        failed = "(SELECT id FROM items WHERE scenario_id = 'stability_weather')"
        db.execute(f"UPDATE items SET status = 'failed', error = 'HTTP 500' WHERE id IN {failed}")
        db.execute(f"DELETE FROM judgments WHERE item_id IN {failed}")
        db.execute(
            "UPDATE judgments SET status = 'unscored', scores_json = NULL WHERE item_id IN "
            "(SELECT id FROM items WHERE scenario_id = 'boundary_gradual_erosion')"
        )
    with Store(tmp_path) as store:
        (report,) = build_reports(store, ReportScope(resampling=FEW_RESAMPLES))
    (model,) = report.models
    assert (model.items, model.scored, model.unscored, model.failed) == (15, 13, 1, 1)
    assert model.row is not None and model.row.why_no_interval is not None
    markdown = render_leaderboard([report])
    assert "; 1 run; 13/15 items scored (1 unscored, 1 failed)" in markdown
    assert "No interval: 1 run" in markdown
    assert "| 1\\* | steady |" in markdown
    # one model: the item tables (spreads and correlations across models) are left out, said once
    assert "### Item difficulty" not in markdown and "| Scenario | Metric |" not in markdown
    assert "Item difficulty is left out: it compares models, and one is scored." in markdown


def test_full_suite_report_has_config_analysis(tmp_path: Path) -> None:
    build_store(tmp_path, {"a": 0.9, "b": 0.4}, suite_id="full").close()
    with Store(tmp_path) as store:
        (report,) = build_reports(store, ReportScope(suite_id="full", resampling=FEW_RESAMPLES))
    assert {(c.variant, c.mode) for c in report.configs} == {
        (v, m) for v in ("neutral", "strong_independence") for m in ("user_role", "tool_role")
    }
    markdown = render_leaderboard([report])
    assert "### Prompt variant × delivery mode" in markdown
    assert "| neutral | user\\_role |" in markdown and "baseline" in markdown


def test_several_suites_get_a_section_each(tmp_path: Path) -> None:
    build_store(tmp_path, {"a": 0.9}, suite_id="v2").close()
    build_store(tmp_path, {"a": 0.9}, suite_id="lite").close()
    out, charts = write_report(ReportOptions(data_dir=tmp_path, resampling=FEW_RESAMPLES))
    markdown = (out / "LEADERBOARD.md").read_text()
    assert "## Suite lite" in markdown and "## Suite v2" in markdown
    assert len(charts) == 6
    assert [s["suite"] for s in json.loads((out / "results.json").read_text())["suites"]] == [
        "lite",
        "v2",
    ]
    only = write_report(ReportOptions(data_dir=tmp_path, suite_id="lite", charts=False))[0]
    assert "## Suite v2" not in (only / "LEADERBOARD.md").read_text()


def test_untrusted_labels_stay_literal(tmp_path: Path) -> None:
    label = f'=HYPERLINK("x")|{HOSTILE_REPLY}'
    build_store(tmp_path, {label: 0.7, "plain": 0.3}).close()
    out, _ = write_report(ReportOptions(data_dir=tmp_path, resampling=FEW_RESAMPLES))
    markdown = (out / "LEADERBOARD.md").read_text()
    assert "<script" not in markdown and "<img" not in markdown and "](javascript" not in markdown
    row = next(x for x in markdown.splitlines() if "HYPERLINK" in x and x.startswith("|"))
    assert row.count(" | ") == markdown.splitlines()[markdown.splitlines().index(row) - 2].count(
        " | "
    )
    cells = list(csv.reader(io.StringIO((out / "results.csv").read_text())))
    assert any(c[3].startswith("'=HYPERLINK") for c in cells[1:])
    document = json.loads((out / "results.json").read_text())
    assert label in {m["model"] for m in document["suites"][0]["models"]}
    svg = (_only_folder(out / "charts") / "index.svg").read_text()
    assert "<script" not in svg and "<img" not in svg and 'href="javascript' not in svg
    assert label[:40] in html.unescape(svg)  # drawn as text, shortened to fit


def test_md_text_escapes_markdown_and_html() -> None:
    assert md_text("a|b") == "a\\|b"
    assert md_text("<script>x</script> & y") == "&lt;script&gt;x&lt;/script&gt; &amp; y"
    assert md_text("[x](javascript:y)") == "\\[x\\](javascript:y)"
    assert md_text("two\nlines") == "two lines"


def test_missing_matplotlib_is_one_line_and_writes_nothing(
    tmp_path: Path, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_store(tmp_path / "store", {"a": 0.5}, runs=1).close()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = aib("report", "--data-dir", str(tmp_path / "store"))
    assert result.code == 2
    assert (
        result.err.count("\n") == 1 and "matplotlib" in result.err and "--no-charts" in result.err
    )
    assert not (tmp_path / "store" / "report").exists()
    ok = aib("report", "--data-dir", str(tmp_path / "store"), "--no-charts", "--resamples", "100")
    assert ok.code == 0, ok.err
    assert (tmp_path / "store" / "report" / "LEADERBOARD.md").exists()


def test_report_errors_are_one_line(tmp_path: Path, aib: Any) -> None:
    missing = aib("report", "--data-dir", str(tmp_path / "nothing"))
    assert missing.code == 2 and "no store" in missing.err
    build_store(tmp_path / "store", {"a": 0.5}, runs=1).close()
    wrong = aib("report", "--data-dir", str(tmp_path / "store"), "--suite", "full")
    assert wrong.code == 2 and "no runs of suite 'full'" in wrong.err
    judge = aib("report", "--data-dir", str(tmp_path / "store"), "--judge", "nobody")
    assert judge.code == 2 and "nobody" in judge.err


def test_charts_are_reproducible(tmp_path: Path) -> None:
    build_store(tmp_path, {"a": 0.9, "b": 0.2}).close()
    first = write_report(
        ReportOptions(data_dir=tmp_path, out=tmp_path / "one", resampling=FEW_RESAMPLES)
    )
    second = write_report(
        ReportOptions(data_dir=tmp_path, out=tmp_path / "two", resampling=FEW_RESAMPLES)
    )
    for path in first[1]:
        twin = second[0] / path.relative_to(first[0])
        assert path.with_suffix(".svg").read_bytes() == twin.with_suffix(".svg").read_bytes()
    assert (first[0] / "results.json").read_bytes() == (second[0] / "results.json").read_bytes()


def test_a_store_without_judgments_still_reports(tmp_path: Path) -> None:
    build_store(tmp_path, {"a": 0.9, "b": 0.3}, runs=1).close()
    with sqlite3.connect(tmp_path / "aib.sqlite3") as db:
        db.execute("DELETE FROM judgments")
    out, charts = write_report(ReportOptions(data_dir=tmp_path, resampling=FEW_RESAMPLES))
    markdown = (out / "LEADERBOARD.md").read_text()
    assert "Judge: none yet" in markdown and "| – | a | incomplete |" in markdown
    assert len(charts) == 3 and all(path.stat().st_size for path in charts)
    assert json.loads((out / "results.json").read_text())["suites"][0]["items"] == []


def _only_folder(charts: Path) -> Path:
    """The one suite's chart folder (named by the suite id and the stored suite hash)."""
    (folder,) = charts.iterdir()
    return folder
