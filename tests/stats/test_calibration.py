"""Worked values for `stats.agreement.calibrate_judges`: judges compared per metric."""

from __future__ import annotations

from typing import Any

import pytest

from independence_bench.scoring.scoring import ScoredItem
from independence_bench.stats.agreement import INDEX, calibrate_judges
from independence_bench.stats.core import Resampling

REF, JUDGE, OTHER = "ref/judge", "embedded:small", "other/judge"


def item(judge: str, model: str, scenario: str, kind: str, scores: dict[str, Any]) -> ScoredItem:
    return ScoredItem(model, 1, "v", "m", scenario, kind, judge, scores, item_id=model + scenario)


def boundary(judge: str, model: str, scenario: str, score: int) -> ScoredItem:
    return item(judge, model, scenario, "boundary", {"resistance_score": score})


def test_each_metric_compares_the_items_both_judges_scored() -> None:
    items = [
        boundary(REF, "a", "b1", 10), boundary(JUDGE, "a", "b1", 8),
        boundary(REF, "a", "b2", 6), boundary(JUDGE, "a", "b2", 8),
        boundary(REF, "b", "b1", 2), boundary(JUDGE, "b", "b1", 4),
        boundary(REF, "b", "b2", 4),  # the judge did not score it: left out
        boundary(JUDGE, "c", "b1", 9),  # the reference did not: left out
    ]  # fmt: skip
    (found,) = calibrate_judges(items, REF, "v2", resampling=Resampling(200))
    assert (found.judge, found.reference, found.n_items) == (JUDGE, REF, 3)
    assert list(found.metrics) == ["resistance"]
    resistance = found.metrics["resistance"]
    assert resistance.n_items == 3
    # on 0–1: judge .8 .8 .4, reference 1 .6 .2 -> differences −.2, +.2, +.2
    assert resistance.mean_difference.value == pytest.approx(0.2 / 3)
    # ranks: judge 2.5 2.5 1, reference 3 2 1 -> r = 1.5 / sqrt(1.5 · 2)
    assert resistance.spearman is not None
    assert resistance.spearman.value == pytest.approx(1.5 / 3**0.5)
    (order,) = found.models  # two models, no index (the v2 formula needs every metric)
    assert order.metric == "resistance" and order.spearman is None
    assert order.judge_values == {"a": 8.0, "b": 4.0}
    assert order.reference_values == {"a": 8.0, "b": 2.0}


def test_a_declined_name_gender_item_is_left_out_of_that_metric_only() -> None:
    chose = {"chosen_name": "Quill", "chosen_gender": None, "name_changed": True}
    declined = {"chosen_name": None, "chosen_gender": None, "name_changed": False}
    items = [
        item(REF, "a", "ng", "name_gender", {**chose, "gender_changed": False}),
        item(JUDGE, "a", "ng", "name_gender", {**declined, "gender_changed": False}),
        boundary(REF, "a", "b1", 10), boundary(JUDGE, "a", "b1", 10),
    ]  # fmt: skip
    (found,) = calibrate_judges(items, REF, "v2", resampling=Resampling(100))
    assert found.n_items == 2
    assert list(found.metrics) == ["resistance"]


def test_judges_that_share_nothing_are_left_out_and_the_index_is_compared() -> None:
    unchanged = {"name_changed": False, "gender_changed": False}

    def complete(judge: str, model: str, level: int) -> list[ScoredItem]:
        traits = {"distinctiveness": level, "non_assistant_likeness": level}
        return [
            item(judge, model, "neg", "negotiation",
                 {**traits, "internal_consistency": level, "drift_from_initial": 10 - level}),
            item(judge, model, "ng", "name_gender", unchanged),
            boundary(judge, model, "b1", level),
            item(judge, model, "s1", "stability", {"consistency_score": level}),
        ]  # fmt: skip

    items = [
        *complete(REF, "a", 9), *complete(REF, "b", 5), *complete(REF, "c", 2),
        *complete(JUDGE, "a", 6), *complete(JUDGE, "b", 7), *complete(JUDGE, "c", 3),
        boundary(OTHER, "z", "b9", 5),
    ]  # fmt: skip
    (found,) = calibrate_judges(items, REF, "v2", resampling=Resampling(100))
    assert found.judge == JUDGE
    index = found.models[0]
    assert index.metric == INDEX and set(index.judge_values) == {"a", "b", "c"}
    # the judge orders b > a > c, the reference a > b > c: ranks (2, 3, 1) against (3, 2, 1)
    assert index.spearman == pytest.approx(0.5)
    assert calibrate_judges(items, REF, "v2", [OTHER]) == []


def test_the_models_table_counts_one_model_in_the_singular() -> None:
    from rich.console import Console

    from independence_bench.reports.analyses._calibration import _models_table
    from independence_bench.stats.agreement import JudgeCalibration, ModelOrder

    one = ModelOrder("resistance", {"m": 8.0}, {"m": 3.0}, None)
    three = ModelOrder("stability", dict.fromkeys("abc", 1.0), dict.fromkeys("abc", 2.0), 0.5)
    console = Console(width=200, record=True)
    console.print(_models_table(JudgeCalibration("j", "r", 4, {}, (one, three))))
    text = console.export_text()
    assert " 1 model │" in text and "1 models" not in text and "3 models" in text
