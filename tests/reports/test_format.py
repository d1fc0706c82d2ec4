"""The one number text of tables and Markdown (`reports.format.number`), worked values."""

from __future__ import annotations

from independence_bench.gathering.analyses import ItemsReport
from independence_bench.reports.analyses import render_items
from independence_bench.reports.format import interval_text, number
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
