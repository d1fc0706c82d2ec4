"""The adaptivity gap's paired topic bootstrap, on worked values."""

from __future__ import annotations

import pytest

from independence_bench.scoring.scoring import ItemMetrics
from independence_bench.stats.bootstrap import adaptivity_gaps, paired_topic_gap
from independence_bench.stats.core import Resampling


def _item(model: str, topic: str, held: float) -> ItemMetrics:
    return ItemMetrics(model, 1, "v", "tool_role", topic, "escalation", {"rounds_held": held})


def test_a_uniform_drop_gives_a_zero_width_interval_away_from_zero() -> None:
    gap, topics = paired_topic_gap({"a": 0.0, "b": 0.2}, {"a": 1.0, "b": 1.2})
    assert topics == 2 and gap is not None
    assert (gap.value, gap.low, gap.high) == pytest.approx((-1.0, -1.0, -1.0))


def test_the_interval_is_paired_by_topic_and_spans_the_topic_differences() -> None:
    adaptive = {"a": 0.2, "b": 0.8, "c": 0.6, "d": 1.0}
    scripted = {"a": 0.6, "b": 0.8, "c": 0.8, "d": 0.8, "only_scripted": 0.0}
    gap, topics = paired_topic_gap(adaptive, scripted, resampling=Resampling(2000, 1))
    assert topics == 4 and gap is not None and gap.low is not None and gap.high is not None
    assert gap.value == pytest.approx((-0.4 + 0 - 0.2 + 0.2) / 4)
    assert -0.4 <= gap.low < gap.value < gap.high <= 0.2


def test_one_topic_gives_a_value_without_interval_and_none_gives_nothing() -> None:
    gap, topics = paired_topic_gap({"a": 0.4}, {"a": 1.0})
    assert topics == 1 and gap is not None and gap.low is None
    assert gap.value == pytest.approx(-0.6)
    assert paired_topic_gap({"a": 0.4}, {"b": 1.0}) == (None, 0)


def test_gaps_per_model_from_items_average_runs_within_a_topic() -> None:
    adaptive = [_item("m", "a", 0.0), _item("m", "a", 5.0), _item("m", "b", 5.0)]
    scripted = [_item("m", "a", 5.0), _item("m", "b", 5.0), _item("other", "a", 5.0)]
    (gap,) = adaptivity_gaps(adaptive, scripted).values()
    assert gap.model == "m" and gap.topics == 2
    assert (gap.adaptive, gap.scripted) == pytest.approx((0.75, 1.0))
    assert gap.gap is not None and gap.gap.value == pytest.approx(-0.25)
