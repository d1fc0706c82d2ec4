"""Worked values for the check every door makes (`engine/admission.py`)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from independence_bench.clients.protocol import Completion
from independence_bench.engine.admission import (
    Refused,
    admit_completion,
    admit_json,
    admit_scores,
    admit_suite,
    admit_turn,
)
from independence_bench.store.records import TurnRecord

GOOD_DIRECT = {"distinctiveness": 7, "non_assistant_likeness": 6.5, "internal_consistency": 0}


def test_a_completion_is_capped_and_its_numbers_made_sane() -> None:
    completion = Completion(
        content="x" * 20,
        prompt_tokens=-1,
        completion_tokens=2**63,
        cost_usd=math.inf,
        latency_s=math.nan,
    )
    admitted = admit_completion(completion, cap=5)
    assert admitted.content == "xxxxx" and admitted.cut_chars == 15
    assert (admitted.prompt_tokens, admitted.completion_tokens, admitted.cost_usd) == (
        None,
        None,
        None,
    )
    assert admitted.latency_s == 0.0
    sane = Completion(content="ok", prompt_tokens=3, cost_usd=0.01, latency_s=1.5)
    assert admit_completion(sane) is sane


@pytest.mark.parametrize(
    ("kind", "scores"),
    [
        ("direct", GOOD_DIRECT),
        ("name_gender", {"name_changed": True, "gender_changed": False, "name_choice": None}),
        ("escalation", {"first_yield_round": 0, "opening_committed": True,
                        "returned_after_yield": False}),
        ("control_strong", {"position_change": 10, "opening_committed": False,
                            "challenge_applies": True}),
    ],
)  # fmt: skip
def test_valid_scores_pass_whole(kind: str, scores: dict[str, Any]) -> None:
    assert admit_scores(kind, {**scores, "note": "kept"}) == {**scores, "note": "kept"}


@pytest.mark.parametrize(
    ("kind", "scores", "why"),
    [
        ("direct", {**GOOD_DIRECT, "distinctiveness": "8"}, "is '8', not a number"),
        ("direct", {**GOOD_DIRECT, "distinctiveness": True}, "not a number"),
        ("direct", {**GOOD_DIRECT, "distinctiveness": math.nan}, "not a finite number"),
        ("direct", {**GOOD_DIRECT, "distinctiveness": 10.5}, "outside 0–10"),
        ("direct", {"distinctiveness": 5}, "non_assistant_likeness is missing"),
        ("direct", {**GOOD_DIRECT, "extra": math.inf}, "holds the number inf"),
        ("resistance", {"resistance_score": 3}, "outside 0–2"),
        ("name_gender", {"name_changed": 1, "gender_changed": False}, "not true or false"),
        ("escalation", {"first_yield_round": 2.5, "opening_committed": True,
                        "returned_after_yield": False}, "not a whole number"),
        ("escalation", {"first_yield_round": 6, "opening_committed": True,
                        "returned_after_yield": False}, "outside 0–5"),
        ("nope", GOOD_DIRECT, "kind 'nope'"),
        ("direct", [8], "not an object"),
    ],
)  # fmt: skip
def test_bad_scores_are_refused_with_why(kind: str, scores: Any, why: str) -> None:
    with pytest.raises(Refused, match=why):
        admit_scores(kind, scores)


def test_json_is_bounded_finite_and_capped() -> None:
    assert admit_json({"a": ["xyz", 1, None, True]}, "x", cap=2) == {"a": ["xy", 1, None, True]}
    deep: Any = []
    for _ in range(70):
        deep = [deep]
    for bad, why in ((deep, "deeper"), ({"a": math.nan}, "nan"), ({1: 2}, "key"),
                     ({"a": object()}, "not JSON"), ({"a": 2**70}, "too large")):  # fmt: skip
        with pytest.raises(Refused, match=why):
            admit_json(bad, "x")


def test_a_suite_must_be_shipped_with_its_formula() -> None:
    assert admit_suite("v2", "v2").id == "v2"
    for suite, formula in (
        ("nope", None),
        ("../../etc/passwd", None),
        ("v2", "v3"),
        (["v2"], None),
    ):
        with pytest.raises(Refused):
            admit_suite(suite, formula)


def test_a_turn_is_held_to_the_cap_and_must_be_text() -> None:
    turn = admit_turn(TurnRecord("hi", "y" * 10, "k"), cap=4)
    assert turn.reply == "yyyy" and turn.human == "hi"
    with pytest.raises(Refused, match="not text"):
        admit_turn(TurnRecord("hi", 8, "k"))  # type: ignore[arg-type]
