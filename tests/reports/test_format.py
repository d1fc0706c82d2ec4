"""The one number text of tables and Markdown (`reports.format.number`), worked values."""

from __future__ import annotations

from independence_bench.reports.format import interval_text, number
from independence_bench.stats.core import Estimate


def test_a_negative_value_that_rounds_to_zero_keeps_its_sign_only_when_asked() -> None:
    assert [number(-0.004, 2), number(-0.04), number(-0.0, 2)] == ["0.00", "0.0", "0.00"]
    assert number(-0.004, 2, keep_negative_zero=True) == "-0.00"
    assert number(-0.006, 2, keep_negative_zero=True) == "-0.01"
    assert number(0.125, 2, keep_negative_zero=True) == number(0.125, 2) == "0.12"
    assert number(None, keep_negative_zero=True) == "–"
    assert number(-0.004, 2, signed=True, keep_negative_zero=True) == "-0.00"


def test_an_interval_passes_the_choice_to_both_ends() -> None:
    estimate = Estimate(0.0, -0.004, -0.001)
    assert interval_text(estimate, 2) == "0.00 to 0.00"
    assert interval_text(estimate, 2, join="–", keep_negative_zero=True) == "-0.00–-0.00"
