"""`aib judges --reference`: a judge's agreement with a reference judge, end to end.

`scripted-firm`, `scripted-plain` and `scripted-caving` (one run each of the v2 suite) are
judged by `scripted-judge` (the reference: maximum scores for firm replies, minimum for caving
ones) and re-judged by `scripted-judge-lenient`, which gives caving replies the middle of each
scale instead. So on every metric the lenient judge orders the conversations as the reference
does (ρ = 1) but scores caving ones 0.5 higher on the 0–1 scale: with k caving items and 2k firm
ones, alpha = 1 − (6k − 1)/(21k) and the mean difference is +1/6 (hand-computed below).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.store.store import Store
from independence_bench.workflows.judge import JudgeOptions, judge_stored_async
from support.cli_home import cli_home
from support.mock_server import MockConfig, MockServer

REFERENCE, LENIENT = "scripted-judge", "scripted-judge-lenient"
MODELS = "scripted-firm,scripted-plain,scripted-caving"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, MockServer]]:
    root = tmp_path_factory.mktemp("calibration")
    with cli_home(root), MockServer(MockConfig()) as server:
        data, url = root / "data", server.base_url
        run = ("run", "--models", MODELS, "--judge", REFERENCE, "--base-url", url)
        assert main([*run, "--runs", "1", "--data-dir", str(data)]) == 0
        judge = ("judge", "--judge", LENIENT, "--base-url", url, "--data-dir", str(data))
        assert main(list(judge)) == 0
        yield data, server


def _alpha(k: int) -> float:
    # units: 2k × (1, 1) and k × (0.5, 0); n = 6k values, sum 4.5k, squares 4.25k;
    # expected = 2·(6k·4.25k − (4.5k)²) = 10.5k², observed = k·2·0.5² = 0.5k
    return 1 - (6 * k - 1) * 0.5 * k / (10.5 * k * k)


def test_reference_agreement_per_metric(store: tuple[Path, MockServer], aib: Any) -> None:
    data, _ = store
    result = aib("judges", "--reference", REFERENCE, "--json", "--data-dir", str(data))
    assert result.code == 0, result.err
    report = result.json()
    assert report["reference"] == REFERENCE
    (lenient,) = report["judges"]
    assert lenient["judge"] == LENIENT
    metrics = lenient["metrics"]
    assert {"resistance", "stability", "drift", "non_assistant_likeness"} <= set(metrics)
    for name in ("resistance", "stability"):
        found = metrics[name]
        k = found["items"] // 3
        assert found["items"] == 3 * k and k >= 1
        assert found["spearman"]["value"] == 1.0
        assert found["alpha"]["value"] == pytest.approx(_alpha(k), abs=1e-3)
        assert found["mean_difference"]["value"] == pytest.approx(1 / 6, abs=1e-3)
        low, high = found["mean_difference"]["ci_low"], found["mean_difference"]["ci_high"]
        assert 0 < low <= 1 / 6 <= high <= 0.5
    models = lenient["models"]
    index = models["index"]
    assert index["models"] == 3 and index["spearman"] == 1.0
    assert index["reference"] == {
        "scripted-caving": 0.0,
        "scripted-firm": 100.0,
        "scripted-plain": 100.0,
    }
    assert 0 < index["judge"]["scripted-caving"] < 100.0
    assert index["judge"]["scripted-firm"] == 100.0
    assert models["resistance"]["reference"]["scripted-caving"] == 0.0
    assert models["resistance"]["judge"]["scripted-caving"] == 5.0


def test_reference_table_and_errors(store: tuple[Path, MockServer], aib: Any) -> None:
    data, _ = store
    table = aib("judges", "--reference", REFERENCE, "--data-dir", str(data))
    assert table.code == 0, table.err
    assert f"{LENIENT} against {REFERENCE}: items" in table.out
    assert "Spearman ρ" in table.out and "Judge − ref." in table.out
    assert "paired, 1,000 resamples, seed 0" in table.out
    missing = aib("judges", "--reference", "nobody", "--data-dir", str(data))
    assert missing.code == 2 and missing.err == (
        "aib: error: no scored judgments by nobody in suite v2; "
        f"judges present: {REFERENCE}, {LENIENT}\n"
    )
    alone = aib("judges", "--reference", REFERENCE, "--judges", REFERENCE, "--data-dir", str(data))
    assert alone.code == 2 and "no other judge scored the items" in alone.err


def test_judging_only_some_items(store: tuple[Path, MockServer]) -> None:
    data, server = store
    with Store(data, create=False) as opened:
        chosen = frozenset(item.id for item in opened.items(status="done")[:4])
    options = JudgeOptions(
        judge="scripted-judge-flaky",
        base_url=server.base_url,
        data_dir=data,
        show_progress=False,
        item_ids=chosen,
    )
    summary = asyncio.run(judge_stored_async(options))
    assert summary.judged == 4
    db = sqlite3.connect(data / "aib.sqlite3")
    judged = {
        row[0]
        for row in db.execute(
            "SELECT item_id FROM judgments WHERE judge_model = 'scripted-judge-flaky'"
        )
    }
    assert judged == chosen


def test_reference_run_records_the_standing(store: tuple[Path, MockServer], aib: Any) -> None:
    """Before `judges --reference` neither judge is calibrated; after it the lenient judge's
    measured index rho (1.00 over the 3 models) is in the store and under its leaderboard."""
    data, _ = store
    board = ("leaderboard", "--data-dir", str(data), "--judge")
    with Store(data) as opened:
        opened.connection.execute("DELETE FROM judge_standings")
    before = aib(*board, LENIENT)
    assert f"Judge {LENIENT}: not calibrated" in before.out
    assert aib("judges", "--reference", REFERENCE, "--data-dir", str(data)).code == 0
    after = aib(*board, LENIENT)
    assert (
        f"Judge {LENIENT}: calibrated — this judge ranks models much as a strong one does (index "
        f"Spearman ρ +1.00 against {REFERENCE} over 3" in " ".join(after.out.split())
    )
    assert f"Judge {REFERENCE}: not calibrated" in aib(*board, REFERENCE).out


def test_every_output_names_its_judge_and_the_others(
    store: tuple[Path, MockServer], aib: Any, tmp_path: Path
) -> None:
    """Both judges scored every item: the default is the first to judge (the run's), and each
    output says so, lists the other with its count and names `--judge`."""
    data, server = store
    where = ("--data-dir", str(data))
    note = f"Scores of judge {REFERENCE} (the judge with the most scored items). Also judged by: "
    pair = ("compare", "scripted-firm", "scripted-caving")  # configs: same path as items
    for command in (("leaderboard",), ("items",), pair):
        result = aib(*command, *where)
        assert result.code == 0, result.err
        flat = " ".join(result.out.split())
        assert note + LENIENT in flat and "pick one with --judge NAME." in flat, command
    asked = aib("leaderboard", "--judge", LENIENT, *where)
    assert f"Scores of judge {LENIENT} (asked for with --judge). Also judged by: {REFERENCE}" in (
        " ".join(asked.out.split())
    )
    viewer = aib("view", "--out", str(tmp_path / "viewer"), *where)
    assert note + LENIENT in viewer.out
    run = ("run", "--models", MODELS, "--judge", LENIENT, "--base-url", server.base_url)
    rerun = aib(*run, "--runs", "1", *where)  # everything cached: no call
    assert rerun.code == 0, rerun.err
    assert f"Scores of judge {LENIENT} (the judge of this run;" in " ".join(rerun.out.split())
    assert f"Also judged by: {REFERENCE}" in " ".join(rerun.out.split())


def test_a_report_of_another_judge_never_replaces_one_silently(
    store: tuple[Path, MockServer], aib: Any
) -> None:
    data, _ = store
    where = ("--data-dir", str(data), "--no-charts", "--resamples", "100")
    first = aib("report", *where)
    assert first.code == 0, first.err
    markdown = (data / "report" / "LEADERBOARD.md").read_text("utf-8")
    assert f"Also judged by: {LENIENT}" in markdown.split("## ")[0]
    second = aib("report", "--judge", LENIENT, *where)
    assert second.code == 0, second.err
    assert f"{data / 'report'} holds judge {REFERENCE}'s report and is kept" in second.out
    (kept,) = json.loads((data / "report" / "results.json").read_text("utf-8"))["suites"]
    assert kept["judge"] == REFERENCE
    (folder,) = data.glob("report-scripted-judge-lenient-*")
    (other,) = json.loads((folder / "results.json").read_text("utf-8"))["suites"]
    assert other["judge"] == LENIENT
