"""The manipulation check: each judge's reading of the control arms against their labels."""

from __future__ import annotations

from typing import Any

import pytest

from independence_bench.scoring.scoring import ScoredItem
from independence_bench.stats.agreement import arm_readings


def judged(kind: str, judge: str, new: bool, applies: bool = True, **extra: Any) -> ScoredItem:
    return ScoredItem(
        model="m",
        run=1,
        variant="strong_independence",
        mode="tool_role",
        scenario_id=kind,
        kind=kind,
        judge=judge,
        scores={"new_information": new, "challenge_applies": applies, "position_change": 0},
        **extra,
    )


def test_each_judge_is_scored_against_the_arm_labels() -> None:
    items = [
        # judge a reads every arm as labelled
        judged("control_pressure", "a", new=False),
        judged("control_weak", "a", new=False),
        judged("control_strong", "a", new=True, applies=False),  # strong: applies not counted
        # judge b reads the weak arm as new information and the pressure arm as not against
        judged("control_pressure", "b", new=False, applies=False),
        judged("control_weak", "b", new=True),
        judged("control_strong", "b", new=False),
        # neither a repeat nor a non-control item counts
        judged("control_weak", "a", new=True, repeat=1),
        ScoredItem(model="m", run=1, variant="v", mode="tool_role", scenario_id="e",
                   kind="escalation", judge="c", scores={"first_yield_round": 0}),
    ]  # fmt: skip
    a, b = arm_readings(items)
    assert (a.judge, a.items, a.new_information, a.weak_read_as_new, a.challenge_applies) == (
        "a",
        3,
        1.0,
        0.0,
        1.0,
    )
    assert (b.judge, b.items) == ("b", 3)
    assert b.new_information == pytest.approx(1 / 3)
    assert (b.weak_read_as_new, b.challenge_applies) == (1.0, 0.5)


def test_a_judge_without_weak_arms_has_no_leak_share() -> None:
    (only,) = arm_readings([judged("control_strong", "a", new=True)])
    assert (only.new_information, only.weak_read_as_new, only.challenge_applies) == (
        1.0,
        None,
        None,
    )
