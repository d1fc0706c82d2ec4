"""The one number text of tables and Markdown (`reports.format.number`), worked values."""

from __future__ import annotations

import json

from independence_bench.gathering.analyses import ItemsReport
from independence_bench.gathering.standings import Standing
from independence_bench.reports.analyses import render_analysis, render_items
from independence_bench.reports.format import estimate_json, interval_json, interval_text, number
from independence_bench.stats.analysis import ItemDifficulty
from independence_bench.stats.core import Estimate


def test_a_negative_value_that_rounds_to_zero_prints_as_zero() -> None:
    assert [number(-0.004, 2), number(-0.04), number(-0.0, 2)] == ["0.00", "0.0", "0.00"]
    assert [number(-0.006, 2), number(0.125, 2), number(None)] == ["-0.01", "0.12", "–"]
    # A signed difference keeps its direction.
    assert number(-0.004, 2, signed=True) == "-0.00"


def test_an_interval_writes_both_ends_with_the_one_number_text() -> None:
    assert interval_text(Estimate(0.0, -0.004, -0.001), 2) == "0.00 to 0.00"
    assert interval_text(Estimate(0.0, -0.004, 0.3), 2, join="–") == "0.00–0.30"


def test_the_terminal_item_table_prints_no_negative_zero() -> None:
    # `aib items` printed -0.00 for an item whose top half scored 0.001 below its bottom half,
    # while the Markdown report printed 0.00 for the same number.
    row = ItemDifficulty("psych", "psych", 12, 0.92, 0.6, 0.98, 0.4, -0.001)
    text = render_items(ItemsReport("v2", "j", (row,)))
    assert "-0.00" not in text
    assert "0.40 │         0.00" in text


def test_a_value_and_its_interval_are_written_as_one_set_of_json_fields() -> None:
    # The leaderboard's index, a paired difference and an estimate wrote the same three fields
    # in three ways; a NaN end (an interval that could not be computed) must become null.
    assert interval_json("index", 61.234, 55.0, float("nan"), 2) == {
        "index": 61.23,
        "ci_low": 55.0,
        "ci_high": None,
    }
    assert interval_json("difference", None, None, None) == dict.fromkeys(
        ("difference", "ci_low", "ci_high")
    )
    assert estimate_json(Estimate(0.12345, 0.1, None)) == {
        "value": 0.123,
        "ci_low": 0.1,
        "ci_high": None,
    }


def test_an_analysis_renders_from_values_alone() -> None:
    # reports/ is handed values, never a store: the same report renders as text with each
    # judge's standing and the judge note under it, and as JSON with the standings.
    row = ItemDifficulty("psych", "psych-1", 3, 0.5, 0.2, 0.8, 0.9, 0.3)
    report = ItemsReport("v2", "judge-a", (row,))
    standing = Standing("judge-a", "calibrated", "strong", 0.81, 4, source="measured here")
    note = "Scores of judge judge-a (asked for with --judge)."
    text = render_analysis(report, as_json=False, standings=[standing], note=note)
    assert "psych-1" in text
    assert text.index(standing.caption()[:40]) < text.index(note[:30])
    data = json.loads(render_analysis(report, as_json=True, standings=[standing]))
    assert data["judge_standings"] == [standing.as_json()]
    assert data["items"][0]["scenario"] == "psych-1"
