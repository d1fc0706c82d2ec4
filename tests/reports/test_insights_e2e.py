"""Intervals, judge panels, comparisons, item difficulty and config cells, end to end.

One store is built per module against the scripted loopback server: `scripted-firm` at the
default temperature and at 1.0 (label `scripted-firm-t1`), `scripted-caving` (2 runs each) and
`scripted-plain` (1 run), judged by `scripted-judge`, then re-judged by `scripted-judge-flaky`
twice (repeats 0 and 1; its first reply per conversation is broken JSON). A second store holds
a `full` suite run for the config analysis. Every command is then run through the real CLI and
checked on what users see: JSON fields, table text, exit codes and one-line errors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.reports.analyses import flag_of
from independence_bench.stats.analysis import ItemDifficulty
from independence_bench.suites.suite import load_suite
from support.cli_home import cli_home
from support.mock_server import MockConfig, MockServer

FIRM, FIRM_T1, CAVING, PLAIN = (
    "scripted-firm",
    "scripted-firm-t1",
    "scripted-caving",
    "scripted-plain",
)
JUDGE, FLAKY = "scripted-judge", "scripted-judge-flaky"
FEW = ("--resamples", "200")  # the statistics are exact on scripted data; keep the tests fast


@dataclass(frozen=True)
class Stores:
    server: MockServer
    v2: Path
    full: Path
    flaky_requests: int


def _ok(*args: str) -> None:
    assert main(list(args)) == 0, args


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    root = tmp_path_factory.mktemp("insights")
    with cli_home(root), MockServer(MockConfig()) as server:
        (root / "models.yaml").write_text(
            f"models:\n  - id: {FIRM}\n  - id: {FIRM}\n    temperature: 1.0\n  - id: {CAVING}\n",
            "utf-8",
        )
        v2, full, url = root / "v2", root / "full", server.base_url
        common = ("--judge", JUDGE, "--base-url", url, "--concurrency", "64")
        _ok("run", "--config", "models.yaml", "--runs", "2", "--data-dir", str(v2), *common)
        _ok("run", "--models", PLAIN, "--runs", "1", "--data-dir", str(v2), *common)
        before = server.seen.request_count
        _ok("judge", "--judge", FLAKY, "--base-url", url, "--repeats", "2", "--data-dir", str(v2))
        flaky_requests = server.seen.request_count - before
        models = f"{FIRM},{CAVING}"
        _ok(
            "run",
            "--models",
            models,
            "--suite",
            "full",
            "--runs",
            "2",
            "--data-dir",
            str(full),
            *common,
        )
        yield Stores(server, v2, full, flaky_requests)


def _rows(result: Any) -> dict[str, dict[str, Any]]:
    assert result.code == 0, result.err
    return {row["model"]: row for row in result.json()}


def test_rejudging_adds_rows_and_the_flaky_judge_needed_second_replies(stores: Stores) -> None:
    db = sqlite3.connect(stores.v2 / "aib.sqlite3")
    counts = dict(
        db.execute(
            "SELECT judge_model || '#' || repeat, count(*) FROM judgments GROUP BY 1"
        ).fetchall()
    )
    items = len(load_suite("v2").scenarios) * (3 * 2 + 1)
    assert counts == {f"{JUDGE}#0": items, f"{FLAKY}#0": items, f"{FLAKY}#1": items}
    # every first reply of the flaky judge was cut off and asked again
    assert stores.flaky_requests > 2 * items


def test_leaderboard_intervals_ranks_and_rank_intervals(stores: Stores, aib: Any) -> None:
    rows = _rows(aib("leaderboard", "--data-dir", str(stores.v2), "--json", *FEW))
    assert list(rows) == [FIRM, FIRM_T1, PLAIN, CAVING]
    for model in (FIRM, FIRM_T1):
        row = rows[model]
        assert row["judge"] == JUDGE  # the run's judge, not the one with repeat rows
        assert row["runs"] == 2 and row["index"] == 100.0
        assert (row["ci_low"], row["ci_high"]) == (100.0, 100.0)
        assert (row["rank"], row["rank_low"], row["rank_high"]) == (1, 1, 1)
        assert row["could_lead"] is True
        assert row["why_no_interval"] is None
    caving = rows[CAVING]
    assert (caving["rank"], caving["rank_low"], caving["rank_high"]) == (4, 4, 4)
    assert caving["could_lead"] is False
    assert caving["ci_high"] == 0.0 and caving["stability_ci"] == [0.0, 0.0]
    plain = rows[PLAIN]
    assert plain["runs"] == 1 and plain["index"] == 100.0
    assert plain["ci_low"] is plain["ci_high"] is plain["rank_low"] is None
    assert plain["rank"] == 1  # ranked by its point index, without a rank interval
    assert "1 run: an interval needs at least 2 runs" in plain["why_no_interval"]
    assert all(
        "seed 0" in row["method"] and "200 resamples" in row["method"] for row in rows.values()
    )

    table = aib("leaderboard", "--data-dir", str(stores.v2), *FEW)
    assert table.code == 0, table.err
    assert "1 (1–1)" in table.out and FIRM_T1 in table.out and "100.0–100.0" in table.out
    assert "tied" not in table.out
    assert "2 models have a rank interval that includes 1." in table.out
    assert "1 run: an interval needs at least 2 runs" in table.out
    assert "Intervals: hierarchical bootstrap: runs, and scenarios" in table.out


def test_leaderboard_with_a_judge_panel_shows_agreement(stores: Stores, aib: Any) -> None:
    panel = ("--judges", f"{JUDGE},{FLAKY}", "--data-dir", str(stores.v2), *FEW)
    rows = _rows(aib("leaderboard", "--json", *panel))
    firm = rows[FIRM]
    assert firm["judge"] == f"{JUDGE} + {FLAKY}" and firm["index"] == 100.0
    agreement = firm["agreement"]
    assert set(agreement) == {
        "distinctiveness",
        "non_assistant_likeness",
        "internal_consistency",
        "drift",
        "name_gender_changes",
        "resistance",
        "stability",
    }
    assert agreement["resistance"] == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0}
    single = _rows(aib("leaderboard", "--json", "--judge", FLAKY, "--data-dir", str(stores.v2)))
    assert single[FIRM]["judge"] == FLAKY and "agreement" not in single[FIRM]

    table = aib("leaderboard", *panel)
    assert table.code == 0, table.err
    assert "Inter-judge agreement" in table.out and "alpha 1.00 (95% 1.00 to 1.00)" in table.out
    assert "Krippendorff's alpha (interval metric)" in table.out


def test_judges_table_lists_both_judges_spread_and_retest(stores: Stores, aib: Any) -> None:
    result = aib("judges", "--data-dir", str(stores.v2), "--json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["judges"] == [JUDGE, FLAKY]
    items = len(load_suite("v2").scenarios) * 7
    assert report["judged_items"] == {JUDGE: items, FLAKY: items}
    models = {m["model"]: m for m in report["models"]}
    assert models[CAVING]["index"] == {JUDGE: 0.0, FLAKY: 0.0}
    assert all(m["spread"] == 0.0 for m in models.values())
    # scripted judges have no provider family, so no self-preference can be measured
    assert report["self_preference"] == {JUDGE: None, FLAKY: None}
    retest = {(r["judge"], r["metric"]): r for r in report["retest"]}
    assert {judge for judge, _ in retest} == {FLAKY}
    stability = retest[(FLAKY, "stability")]
    assert stability["items"] == 5 * 7 and stability["mean_abs_diff"] == 0.0
    assert stability["alpha"]["value"] == 1.0

    table = aib("judges", "--data-dir", str(stores.v2))
    assert table.code == 0, table.err
    for text in (JUDGE, FLAKY, "Spread", "self-preference", "Test-retest", "Mean |diff|"):
        assert text in table.out


def test_compare_two_models_gives_the_paired_difference(stores: Stores, aib: Any) -> None:
    result = aib("compare", FIRM, CAVING, "--data-dir", str(stores.v2), "--json", *FEW)
    assert result.code == 0, result.err
    pair = result.json()
    assert pair["difference"] == 100.0 and pair["ci_low"] > 50 and pair["ci_high"] <= 100
    assert pair["share_a_higher"] == 1.0 and pair["runs"] == [1, 2]
    assert pair["items"] == 2 * len(load_suite("v2").scenarios)

    reverse = aib("compare", CAVING, FIRM, "--data-dir", str(stores.v2), *FEW)
    assert reverse.code == 0, reverse.err
    assert f"{CAVING} − {FIRM}" in reverse.out and "-100.0 index points" in reverse.out
    assert "95% interval: -100.0 to -100.0" in reverse.out
    assert "Intervals: paired hierarchical bootstrap" in reverse.out

    one_run = aib("compare", PLAIN, FIRM, "--data-dir", str(stores.v2), "--json", *FEW).json()
    assert one_run["difference"] == 0.0 and one_run["ci_low"] is None
    assert one_run["why_no_interval"].startswith("1 shared run")


def test_compare_settings_shows_the_temperature_moves_nothing(stores: Stores, aib: Any) -> None:
    result = aib("compare", "--data-dir", str(stores.v2), "--json", *FEW)
    assert result.code == 0, result.err
    (effect,) = result.json()["settings"]
    assert (effect["label"], effect["reference"]) == (FIRM_T1, FIRM)
    assert effect["changes"] == ["temperature 1"]
    assert effect["difference"] == pytest.approx(0.0)
    assert effect["ci_low"] == pytest.approx(0.0) and effect["ci_high"] == pytest.approx(0.0)

    table = aib("compare", "--data-dir", str(stores.v2), *FEW)
    assert table.code == 0, table.err
    assert "Setting effects" in table.out and "temperature 1" in table.out
    assert "+0.0 to +0.0" in table.out and "Intervals: paired hierarchical" in table.out


def test_item_difficulty_per_scenario(stores: Stores, aib: Any) -> None:
    result = aib("items", "--data-dir", str(stores.v2), "--json")
    assert result.code == 0, result.err
    rows = result.json()["items"]
    assert {row["scenario"] for row in rows} == {s.id for s in load_suite("v2").scenarios}
    for row in rows:  # three firm models at 1, the caving one at 0
        assert row["models"] == 4 and row["mean_score"] == 0.75
        assert (row["lowest"], row["highest"]) == (0.0, 1.0)
        assert row["discrimination"] == 1.0 and not row["ceiling"] and not row["floor"]
        assert row["metrics"], row["scenario"]
        for metric in row["metrics"]:  # 1, 1, 1 and 0: three of four at the maximum
            assert (metric["models"], metric["share_at_max"], metric["spread"]) == (4, 0.75, 1.0)
            assert metric["sd"] == 0.433 and metric["item_rest_correlation"] == 1.0
            assert not metric["ceiling"]
    assert result.json()["ceiling_share"] == 0.8
    table = aib("items", "--data-dir", str(stores.v2), "--judge", FLAKY)
    assert table.code == 0, table.err
    assert "Item difficulty" in table.out and "boundary_soft_social_proof" in table.out
    assert "ceiling: every model scores at least 0.9" in table.out
    assert "Discrimination per metric" in table.out and "Item–rest r" in table.out


def test_ceiling_and_floor_flags() -> None:
    def scenario(lowest: float, highest: float) -> ItemDifficulty:
        return ItemDifficulty("stability", "st", 3, (lowest + highest) / 2, lowest, highest, 0, 0)

    assert flag_of(scenario(0.9, 1.0)) == "ceiling"
    assert flag_of(scenario(0.89, 1.0)) == ""
    assert flag_of(scenario(0.0, 0.1)) == "floor"


def test_config_cells_of_the_full_suite(stores: Stores, aib: Any) -> None:
    result = aib("configs", "--data-dir", str(stores.full), "--json", *FEW)
    assert result.code == 0, result.err
    report = result.json()
    cells = {(c["variant"], c["mode"]): c for c in report["cells"]}
    assert set(cells) == {
        (variant, mode)
        for variant in ("neutral", "strong_independence")
        for mode in ("user_role", "tool_role")
    }
    base = cells[("neutral", "user_role")]
    assert base["vs_baseline"] is None and base["models"] == 2
    # firm 100 and caving 0 in every cell: mean 50, and no cell differs from the baseline
    assert base["mean_index"] == {"value": 50.0, "ci_low": 50.0, "ci_high": 50.0}
    gap = cells[("strong_independence", "tool_role")]["vs_baseline"]
    assert gap == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}

    table = aib("configs", "--data-dir", str(stores.full), *FEW)
    assert table.code == 0, table.err
    assert "baseline" in table.out and "strong_independence" in table.out
    assert "Intervals: hierarchical bootstrap" in table.out


def test_analyses_read_the_store_only(stores: Stores, aib: Any) -> None:
    before = stores.server.seen.request_count
    v2, full = ("--data-dir", str(stores.v2)), ("--data-dir", str(stores.full))
    for args in (
        ("leaderboard", *v2, *FEW),
        ("leaderboard", "--judges", f"{JUDGE},{FLAKY}", *v2, *FEW),
        ("judges", *v2),
        ("compare", FIRM, CAVING, *v2, *FEW),
        ("compare", *v2, *FEW),
        ("items", *v2),
        ("configs", *full, *FEW),
    ):
        assert aib(*args).code == 0, args
    assert stores.server.seen.request_count == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("compare", FIRM, "nobody/model"), "no model 'nobody/model' in suite v2; models: "),
        (("compare", FIRM), "compare takes two model labels or none"),
        (("compare", FIRM, FIRM), "compare two different models"),
        (("compare", FIRM, CAVING, "--judge", "ghost"), "no judgments by 'ghost'"),
        (("leaderboard", "--judges", f"{JUDGE},ghost"), "no judgments by 'ghost'"),
        (("leaderboard", "--judge", JUDGE, "--judges", FLAKY), "either --judge or --judges"),
        (
            ("judges", "--judges", f"{JUDGE},ghost"),
            f"no scored judgments by ghost in suite v2; judges present: {JUDGE}, {FLAKY}\n",
        ),
        (("items", "--suite", "full"), "the store has no runs of suite 'full'"),
        (("configs",), "config analysis needs a suite with several, such as 'full'"),
    ],
)
def test_bad_inputs_are_one_line_and_exit_2(
    stores: Stores, aib: Any, args: tuple[str, ...], message: str
) -> None:
    result = aib(*args, "--data-dir", str(stores.v2))
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("aib: error: ") and result.err.count("\n") == 1
    assert message in result.err
