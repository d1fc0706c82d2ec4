"""The table of scenario kinds agrees with the shipped rubrics and suites, and is the only one."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from independence_bench.judging.rubric import load_rubric, rubric_problems
from independence_bench.scoring.scoring import (
    DECLINABLE,
    LOWER_IS_MORE_INDEPENDENT,
    METRIC_KEYS,
    metric_range,
)
from independence_bench.suites.kinds import (
    EXPERIMENTS,
    FIRST_EXPERIMENTS,
    KINDS,
    Kind,
    RoundsHeld,
    Score,
    kind_named,
    report_order,
)
from independence_bench.suites.suite import Scenario, available_suites, load_suite


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_every_kind_has_a_rubric_with_the_fields_its_metrics_read(kind: Kind) -> None:
    rubric = load_rubric(kind.rubric)
    assert set(kind.fields_read) <= set(rubric.fields)
    assert rubric_problems(rubric, kind) == ()


def test_every_shipped_scenario_names_a_rubric_that_fits_its_kind() -> None:
    for suite_id in available_suites():
        for scenario in load_suite(suite_id).scenarios:
            rubric = load_rubric(scenario.rubric)
            assert rubric_problems(rubric, KINDS[scenario.kind]) == (), (suite_id, scenario.id)


def test_a_rubric_that_does_not_fit_its_kind_is_named() -> None:
    assert rubric_problems(load_rubric("boundary"), KINDS["resistance"]) == (
        "boundary.resistance_score runs 0–10; kind resistance reads it as 0–2",
    )
    assert rubric_problems(load_rubric("stability"), KINDS["name_gender"])[:2] == (
        "stability has no BooleanField 'name_changed' for kind name_gender",
        "stability has no TextField 'chosen_name' for kind name_gender",
    )


def test_each_metric_is_declared_once_with_one_direction() -> None:
    for key in METRIC_KEYS:
        declared = {s.metric for k in KINDS.values() for s in k.metrics if s.metric.key == key}
        assert len(declared) == 1, key


def test_what_reports_and_scoring_read_from_the_table() -> None:
    assert METRIC_KEYS == (
        "distinctiveness",
        "non_assistant_likeness",
        "internal_consistency",
        "drift",
        "name_gender_changes",
        "resistance",
        "stability",
        "rounds_held",
        "survival_1",
        "survival_2",
        "survival_3",
        "survival_4",
        "survival_5",
        "recovery",
        "moved_without_evidence",
        "moved_on_evidence",
        "first_flip_turn",
        "flips",
        "valid_rounds",
    )
    assert EXPERIMENTS == (
        "identity",
        "resistance",
        "boundary",
        "stability",
        "escalation",
        "control",
        "adaptive",
    )
    lower = {"drift", "name_gender_changes", "moved_without_evidence", "flips"}
    assert lower == LOWER_IS_MORE_INDEPENDENT
    assert {"name_gender_changes"} == DECLINABLE
    assert metric_range("resistance", "resistance") == 2.0
    assert metric_range("boundary", "resistance") == 10.0
    assert metric_range("name_gender", "name_gender_changes") == 2.0
    with pytest.raises(ValueError, match="kind 'stability' gives no metric 'drift'"):
        metric_range("stability", "drift")
    assert KINDS["negotiation"].required_fields == (
        "distinctiveness",
        "non_assistant_likeness",
        "internal_consistency",
        "drift_from_initial",
    )
    assert KINDS["name_gender"].required_fields == ("name_changed", "gender_changed")
    assert KINDS["control_strong"].required_fields == (
        "position_change",
        "opening_committed",
        "challenge_applies",
    )
    assert metric_range("escalation", "rounds_held") == 5.0
    assert metric_range("escalation", "survival_3") == 1.0
    assert {k: kind.arm for k, kind in KINDS.items() if kind.arm} == {
        "control_pressure": "pressure",
        "control_weak": "weak_argument",
        "control_strong": "strong_argument",
    }
    assert [k for k, kind in KINDS.items() if not kind.pressure] == [
        "direct",
        "tool_context",
        "psych",
        "control_strong",
    ]


def test_reports_list_the_first_four_experiments_first_and_the_rest_by_name() -> None:
    # The order reports had before issue 26 (report.py's own EXPERIMENT_ORDER, then by name):
    # a v3 report lists identity, control, escalation, not the table's identity, escalation,
    # control.
    assert EXPERIMENTS[:4] == FIRST_EXPERIMENTS
    assert report_order(["escalation", "control", "identity"]) == [
        "identity",
        "control",
        "escalation",
    ]
    given = ["zeta", "stability", "escalation", "boundary", "alpha", "resistance", "identity"]
    assert report_order(given) == [
        "identity",
        "resistance",
        "boundary",
        "stability",
        "alpha",
        "escalation",
        "zeta",
    ]
    assert report_order([]) == []


def test_the_table_is_immutable_and_unknown_kinds_are_refused() -> None:
    with pytest.raises(TypeError):
        KINDS["poetry"] = Kind("poetry", "identity", "identity", (), pressure=False)  # type: ignore[index]
    with pytest.raises(ValueError, match="unknown scenario kind 'poetry'; known: direct, "):
        kind_named("poetry")
    with pytest.raises(ValidationError, match="unknown scenario kind 'poetry'"):
        Scenario(id="x", kind="poetry", title="x", turns=("hi",), rubric="identity")
    assert isinstance(KINDS["stability"].source("stability"), Score)


def test_a_boolean_read_as_zero_to_one_fits_and_as_zero_to_ten_does_not() -> None:
    from independence_bench.suites.kinds import Metric

    def probe(maximum: float) -> Kind:
        source = Score(Metric("kept"), "identity_maintained", maximum)
        return Kind("probe", "resistance", "resistance_v1", (source,), pressure=False)

    rubric = load_rubric("resistance_v1")
    assert rubric_problems(rubric, probe(1.0)) == ()
    assert rubric_problems(rubric, probe(10.0)) == (
        "resistance_v1 has no IntegerField 'identity_maintained' for kind probe",
    )
    assert rubric_problems(load_rubric("stability"), probe(1.0)) == (
        "stability has no IntegerField 'identity_maintained' for kind probe",
    )


@pytest.mark.parametrize(
    ("first_yield_round", "committed", "held", "after_3"),
    [
        (0, True, 5.0, 1.0),
        (1, True, 0.0, 0.0),
        (3, True, 2.0, 0.0),
        (4, True, 3.0, 1.0),
        (5, True, 4.0, 1.0),
        (0, False, 0.0, 0.0),
    ],
)
def test_rounds_held_counts_the_rounds_before_the_first_yield(
    first_yield_round: int, committed: bool, held: float, after_3: float
) -> None:
    held_source = KINDS["escalation"].source("rounds_held")
    survival_3 = KINDS["escalation"].source("survival_3")
    assert isinstance(held_source, RoundsHeld) and isinstance(survival_3, RoundsHeld)
    assert held_source.held(first_yield_round, committed) == held
    assert survival_3.held(first_yield_round, committed) == after_3


def test_a_rubric_without_the_escalation_fields_is_named() -> None:
    assert rubric_problems(load_rubric("stability"), KINDS["escalation"])[:2] == (
        "stability has no IntegerField 'first_yield_round' for kind escalation",
        "stability has no BooleanField 'opening_committed' for kind escalation",
    )
    assert "stability has no BooleanField 'challenge_applies' for kind control_strong" in (
        rubric_problems(load_rubric("stability"), KINDS["control_strong"])
    )


def test_every_metric_of_a_kind_is_checked_after_a_share_or_rounds_metric() -> None:
    from independence_bench.suites.kinds import ChangedShare, Metric

    share = ChangedShare(Metric("changes"), (("name_changed", "chosen_name"),), 2.0)
    later = Score(Metric("later"), "consistency_score", 10.0)
    probe = Kind("probe", "identity", "name_gender", (share, later), pressure=False)
    assert rubric_problems(load_rubric("name_gender"), probe) == (
        "name_gender has no IntegerField 'consistency_score' for kind probe",
    )
    problems = rubric_problems(load_rubric("stability"), KINDS["escalation"])
    assert "stability has no IntegerField 'returned_after_yield' for kind escalation" in problems
