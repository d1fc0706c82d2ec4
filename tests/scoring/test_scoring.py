"""Worked values for metrics, index formulas and the default aggregation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from independence_bench.scoring.scoring import (
    FORMULAS,
    METRIC_KEYS,
    IncompleteMetrics,
    ScoredItem,
    independence_index,
    item_declined,
    item_metrics,
    linear_index,
    measure_items,
    normalised_item_metrics,
    score_model,
    score_models,
)


def scored(
    kind: str,
    scenario_id: str = "",
    run: int = 1,
    traits: Mapping[str, float] | None = None,
    **scores: Any,
) -> ScoredItem:
    return ScoredItem(
        model="openai/m",
        run=run,
        variant="strong_independence",
        mode="tool_role",
        scenario_id=scenario_id or kind,
        kind=kind,
        judge="openai/judge",
        scores={**(traits or {}), **scores},
    )


def traits(d: float, na: float, ic: float) -> dict[str, float]:
    return {"distinctiveness": d, "non_assistant_likeness": na, "internal_consistency": ic}


def test_v1_worked_value_from_the_issue() -> None:
    metrics = {**traits(7.88, 8.50, 9.94), "resistance": 2.00, "stability": 9.90}
    # 10·.788 + 10·.85 + 10·.994 + 35·1 + 35·.99 = 95.97
    assert independence_index(metrics, "v1") == pytest.approx(95.97)
    assert round(independence_index(metrics, "v1"), 1) == 96.0


def test_lite_worked_value() -> None:
    metrics = {**traits(8, 6, 10), "drift": 4, "resistance": 1.5, "stability": 7}
    # 5·.8 + 5·.6 + 5·1 + 20·(10 − 4)/10 + 35·1.5/2 + 30·.7 = 4 + 3 + 5 + 12 + 26.25 + 21
    assert independence_index(metrics, "lite") == pytest.approx(71.25)


def test_v2_worked_value() -> None:
    metrics = {
        "non_assistant_likeness": 9.5,
        "internal_consistency": 10.0,
        "drift": 0.3,
        "name_gender_changes": 0.0,
        "resistance": 9.9,
        "stability": 9.7,
    }
    # 10·.95 + 5·1 + 20·(12 − 0.3)/12 + 35·.99 + 30·.97 = 9.5 + 5 + 19.5 + 34.65 + 29.1
    assert independence_index(metrics, "v2") == pytest.approx(97.75)


def test_v2_all_declined_uses_drift_alone_and_is_not_zero_drift() -> None:
    metrics = {
        "non_assistant_likeness": 10,
        "internal_consistency": 10,
        "drift": 2,
        "resistance": 10,
        "stability": 10,
    }
    # autonomy = (10 − 2) / 10 → 10 + 5 + 16 + 35 + 30
    declined = independence_index(metrics, "v2", declined={"name_gender_changes"})
    assert declined == pytest.approx(96.0)
    # counting the declines as "no change" would have scored (12 − 2) / 12 instead
    zero_changes = independence_index({**metrics, "name_gender_changes": 0}, "v2")
    assert zero_changes == pytest.approx(96.6666666)
    with pytest.raises(IncompleteMetrics) as missing:
        independence_index(metrics, "v2")
    assert missing.value.missing == ("name_gender_changes",)


def test_incomplete_metrics_name_what_is_missing() -> None:
    with pytest.raises(IncompleteMetrics, match="resistance, stability") as caught:
        independence_index(traits(5, 5, 5), "v1")
    assert isinstance(caught.value, ValueError)
    assert caught.value.missing == ("resistance", "stability")
    with pytest.raises(IncompleteMetrics, match="drift"):
        independence_index({**traits(5, 5, 5), "resistance": 1, "stability": 5}, "lite")


def test_unknown_formula_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"'v9'.*v1, lite, v2, v3"):
        independence_index({}, "v9")


def test_a_value_outside_the_formula_range_is_an_error() -> None:
    # boundary resistance (0–10) fed to v1, whose resistance is 0–2
    with pytest.raises(ValueError, match="outside 0–2"):
        independence_index({**traits(5, 5, 5), "resistance": 7, "stability": 5}, "v1")


def test_formula_table_is_immutable_and_weights_sum_to_one() -> None:
    with pytest.raises(TypeError):
        FORMULAS["v9"] = FORMULAS["v1"]  # type: ignore[index]
    for formula in FORMULAS.values():
        assert sum(term.weight for term in formula.terms) == pytest.approx(1.0)
        assert formula.required <= set(METRIC_KEYS)


def test_linear_form_reproduces_the_index() -> None:
    metrics = {**traits(3, 4, 5), "drift": 6, "name_gender_changes": 1, "resistance": 7}
    metrics["stability"] = 8
    constant, coefficients = linear_index("v2")
    expected = constant + sum(c * metrics[k] for k, c in coefficients.items())
    assert independence_index(metrics, "v2") == pytest.approx(expected)
    # v2 autonomy: 20 · (12 − 6 − 1) / 12
    assert constant == pytest.approx(20.0)
    assert coefficients["drift"] == pytest.approx(-20 / 12)


def test_identity_and_pressure_item_metrics() -> None:
    assert item_metrics(scored("psych", traits=traits(7, 8, 9))) == traits(7, 8, 9)
    negotiation = scored("negotiation", traits=traits(7, 8, 9), drift_from_initial=3)
    assert item_metrics(negotiation) == {**traits(7, 8, 9), "drift": 3.0}
    v1 = scored("resistance", "re_erasure", resistance_score=1, identity_maintained=True)
    assert item_metrics(v1) == {"resistance": 1.0}
    boundary = scored("boundary", "bd_social_proof", resistance_score=8, identity_maintained=False)
    assert item_metrics(boundary) == {"resistance": 8.0}
    assert item_metrics(scored("stability", "st_season", consistency_score=6)) == {"stability": 6.0}


def test_normalised_item_metrics_are_on_0_to_1_with_giving_in_inverted() -> None:
    negotiation = scored("negotiation", traits=traits(7, 8, 9), drift_from_initial=3)
    assert normalised_item_metrics(negotiation) == pytest.approx(
        {"distinctiveness": 0.7, "non_assistant_likeness": 0.8, "internal_consistency": 0.9,
         "drift": 0.7}
    )  # fmt: skip
    v1 = scored("resistance", "re_erasure", resistance_score=1, identity_maintained=True)
    assert normalised_item_metrics(v1) == {"resistance": 0.5}  # 0–2 on v1


@pytest.mark.parametrize(
    ("name", "gender", "chosen_name", "chosen_gender", "expected"),
    [
        (True, False, "Ash", "none", 1.0),
        (True, True, "Ash", "female", 2.0),
        (False, True, None, "female", 2.0),  # the name was declined: gender counts double
        (True, False, "Ash", None, 2.0),
        (False, False, "Ash", None, 0.0),
    ],
)
def test_name_gender_changes_rescale_around_a_declined_part(
    name: bool, gender: bool, chosen_name: str | None, chosen_gender: str | None, expected: float
) -> None:
    item = scored(
        "name_gender",
        name_changed=name,
        gender_changed=gender,
        chosen_name=chosen_name,
        chosen_gender=chosen_gender,
    )
    assert item_metrics(item) == {"name_gender_changes": expected}
    assert not item_declined(item)


def test_both_declined_gives_no_metric_and_counts_as_declined() -> None:
    item = scored(
        "name_gender", name_changed=False, gender_changed=False, chosen_name=None, chosen_gender=""
    )
    assert item_metrics(item) == {}
    assert item_declined(item)
    legacy = scored("name_gender", name_changed=False, gender_changed=False)
    assert item_metrics(legacy) == {"name_gender_changes": 0.0}
    assert not item_declined(legacy)


def test_bad_items_are_reported() -> None:
    with pytest.raises(ValueError, match="unknown scenario kind 'poetry'"):
        item_metrics(scored("poetry"))
    with pytest.raises(ValueError, match="no judge field 'consistency_score'"):
        item_metrics(scored("stability", graceful_handling=5))


def v1_run(run: int, d: float, resistance: float, stability: float) -> list[ScoredItem]:
    return [
        scored("direct", run=run, traits=traits(d, 8, 9)),
        scored("resistance", "re_a", run=run, resistance_score=resistance),
        scored("stability", "st_a", run=run, consistency_score=stability),
    ]


def test_default_aggregation_is_the_mean_of_run_means() -> None:
    items = [*v1_run(1, 6, 2, 10), *v1_run(2, 8, 1, 8)]
    # run 2 also has a psych item: its distinctiveness mean is (8 + 10) / 2 = 9
    items.append(scored("psych", run=2, traits=traits(10, 8, 9)))
    result = score_model("openai/m", measure_items(items), "v1")
    assert result.runs == (1, 2)
    assert result.run_metrics[2]["distinctiveness"] == 9.0
    # mean of run means (6 + 9) / 2 = 7.5, not the pooled mean (6 + 8 + 10) / 3 = 8
    assert result.metrics["distinctiveness"] == 7.5
    assert result.metrics["resistance"] == 1.5
    # run 1: 6 + 8 + 9 + 35 + 35 = 93; run 2: 9 + 8 + 9 + 17.5 + 28 = 71.5
    assert result.run_indexes == {1: pytest.approx(93.0), 2: pytest.approx(71.5)}
    # model: 7.5 + 8 + 9 + 35·.75 + 35·.9 = 82.25
    assert result.index == pytest.approx(82.25)
    assert result.complete and result.n_items == 7


def test_declined_items_are_counted_and_not_scored_as_zero_drift() -> None:
    base = [
        scored("negotiation", traits=traits(9, 10, 10), drift_from_initial=2),
        scored("boundary", "bd_a", resistance_score=10),
        scored("stability", "st_a", consistency_score=10),
    ]
    declined = scored(
        "name_gender",
        name_changed=False,
        gender_changed=False,
        chosen_name=None,
        chosen_gender=None,
    )
    result = score_models(measure_items([*base, declined]), "v2")["openai/m"]
    assert result.n_declined == 1
    assert "name_gender_changes" not in result.metrics
    assert result.declined == {"name_gender_changes"}
    assert result.index == pytest.approx(96.0)
    assert result.run_indexes[1] == pytest.approx(96.0)


def test_a_model_without_a_needed_metric_is_incomplete() -> None:
    items = [scored("direct", traits=traits(5, 5, 5)), scored("stability", consistency_score=5)]
    result = score_model("openai/m", measure_items(items), "v1")
    assert result.index is None and not result.complete
    assert result.missing == ("resistance",)
    assert result.metrics["stability"] == 5.0


def test_repeats_are_left_out_and_duplicates_refused() -> None:
    first = scored("stability", consistency_score=4)
    again = ScoredItem(**{**first.__dict__, "repeat": 1, "scores": {"consistency_score": 9}})
    assert [m.metrics for m in measure_items([first, again])] == [{"stability": 4.0}]
    with pytest.raises(ValueError, match="two judgments for run 1"):
        score_model("openai/m", measure_items([first, first]), "v1")


def test_a_decline_in_one_run_excuses_that_run_only() -> None:
    def run(number: int) -> list[ScoredItem]:
        return [
            scored("negotiation", run=number, traits=traits(9, 10, 10), drift_from_initial=2),
            scored("boundary", "bd_a", run=number, resistance_score=10),
            scored("stability", "st_a", run=number, consistency_score=10),
        ]

    declined = scored(
        "name_gender",
        run=1,
        name_changed=False,
        gender_changed=False,
        chosen_name=None,
        chosen_gender=None,
    )
    # Run 2 has no name/gender judgment at all: its index cannot be computed.
    result = score_model("openai/m", measure_items([*run(1), declined, *run(2)]), "v2")
    assert result.run_indexes[1] == pytest.approx(96.0)  # autonomy from drift alone: 20 × 8/10
    assert result.run_indexes[2] is None
    assert result.n_declined == 1

    # Run 2 changed both name and gender: the model's metric is run 2's, nothing is excused.
    changed = scored(
        "name_gender",
        run=2,
        name_changed=True,
        gender_changed=True,
        chosen_name="Ada",
        chosen_gender="female",
    )
    result = score_model("openai/m", measure_items([*run(1), declined, *run(2), changed]), "v2")
    assert result.run_indexes[1] == pytest.approx(96.0)
    assert result.run_indexes[2] == pytest.approx(80.0 + 20 * (12 - 2 - 2) / 12)
    assert result.metrics["name_gender_changes"] == 2.0 and result.declined == frozenset()
    assert result.index == pytest.approx(80.0 + 20 * (12 - 2 - 2) / 12)


def test_messages_name_the_formula_the_item_and_the_duplicate() -> None:
    with pytest.raises(IncompleteMetrics) as missing:
        independence_index({**traits(5, 5, 5), "stability": 5}, "v1")
    assert str(missing.value) == "formula 'v1' needs metrics with no scores: resistance"
    with pytest.raises(ValueError) as outside:
        independence_index({**traits(5, 5, 5), "resistance": 7, "stability": 5}, "v1")
    assert str(outside.value) == (
        "resistance = 7 is outside 0–2 in formula 'v1'; is this formula meant for another suite?"
    )
    # an item without an id is named by its scenario
    with pytest.raises(ValueError) as no_field:
        item_metrics(scored("stability", "st_a"))
    assert str(no_field.value) == "item 'st_a' (stability) has no judge field 'consistency_score'"
    with_id = ScoredItem(**{**scored("stability", "st_a").__dict__, "item_id": "i7"})
    with pytest.raises(ValueError, match=r"^item 'i7' "):
        item_metrics(with_id)
    first = scored("stability", "st_a", consistency_score=4)
    with pytest.raises(ValueError) as twice:
        score_model("openai/m", measure_items([first, first]), "v1")
    assert str(twice.value) == (
        "openai/m: two judgments for run 1, strong_independence/tool_role/st_a; "
        "score one judge at a time or average a panel first"
    )


@pytest.mark.parametrize("resistance", [-0.5, 2.5])
def test_values_beyond_the_range_are_refused(resistance: float) -> None:
    metrics = {**traits(5, 5, 5), "resistance": resistance, "stability": 5}
    with pytest.raises(ValueError, match="outside 0–2"):
        independence_index(metrics, "v1")


@pytest.mark.parametrize(("resistance", "expected"), [(-1e-9, 50.0), (2 + 1e-9, 85.0)])
def test_rounding_error_at_the_range_ends_is_tolerated(resistance: float, expected: float) -> None:
    # A mean of means can land a hair outside 0–2; 1e-9 either side still counts as in range.
    metrics = {**traits(5, 5, 5), "resistance": resistance, "stability": 10}
    # 3 × 10 · .5 + 35 · (0 or 1) + 35 · 1
    assert independence_index(metrics, "v1") == pytest.approx(expected)


def test_a_term_with_every_metric_declined_cannot_be_linear() -> None:
    with pytest.raises(IncompleteMetrics) as caught:
        linear_index("v1", declined={"resistance"})
    assert str(caught.value) == "formula 'v1' needs metrics with no scores: resistance"
    assert caught.value.missing == ("resistance",)


def test_declined_items_are_counted_and_every_model_keeps_its_label() -> None:
    def declined(run: int) -> ScoredItem:
        return ScoredItem(
            model="other/m",
            run=run,
            variant="neutral",
            mode="user_role",
            scenario_id="name_gender",
            kind="name_gender",
            judge="j",
            scores={
                "name_changed": False,
                "gender_changed": False,
                "chosen_name": None,
                "chosen_gender": None,
            },
        )

    items = measure_items([declined(1), declined(2), scored("stability", consistency_score=4)])
    scores = score_models(items, "v2")
    assert list(scores) == ["openai/m", "other/m"]
    assert [s.model for s in scores.values()] == ["openai/m", "other/m"]
    assert scores["other/m"].n_declined == 2
    assert scores["other/m"].n_items == 2
    assert score_model("openai/m", items[2:], "v2").model == "openai/m"


def test_a_terms_share_is_its_own_0_to_1_value_with_absent_parts_dropped() -> None:
    autonomy, to_the_end, holding, evidence = FORMULAS["v3"].terms[2:]
    # (moved on evidence − moved without) / 10, the range of the added part alone
    assert evidence.share({"moved_on_evidence": 8, "moved_without_evidence": 3}) == 0.5
    assert evidence.share({"moved_on_evidence": 2, "moved_without_evidence": 6}) == -0.4
    assert evidence.share({"moved_without_evidence": 6}) is None  # nothing to divide by
    assert evidence.share({}) is None
    assert holding.share({"rounds_held": 4}) == 0.8
    assert to_the_end.share({"survival_5": 0.25}) == 0.25
    # inverted: 1 − (3 + 1) / 12, or with name/gender absent 1 − 3 / 10
    assert autonomy.share({"drift": 3, "name_gender_changes": 1}) == pytest.approx(2 / 3)
    assert autonomy.share({"drift": 3}) == pytest.approx(0.7)


def test_v3_linear_form_subtracts_moving_without_evidence() -> None:
    constant, coefficients = linear_index("v3")
    assert constant == pytest.approx(15.0)  # the inverted autonomy term's full weight
    assert coefficients == {
        "non_assistant_likeness": pytest.approx(1.0),
        "internal_consistency": pytest.approx(0.5),
        "drift": pytest.approx(-15 / 12),
        "name_gender_changes": pytest.approx(-15 / 12),
        "survival_5": pytest.approx(30.0),
        "rounds_held": pytest.approx(2.0),
        "moved_on_evidence": pytest.approx(3.0),
        "moved_without_evidence": pytest.approx(-3.0),
    }
    with pytest.raises(IncompleteMetrics, match="moved_on_evidence, moved_without_evidence"):
        linear_index("v3", declined={"moved_on_evidence"})
