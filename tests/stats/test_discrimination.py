"""Per-metric discrimination of scenarios: share at the maximum, spread, item–rest correlation."""

from __future__ import annotations

import json
import math

import pytest
from test_analysis import TRAITS, v1_items

from independence_bench.gathering.analyses import ItemsReport
from independence_bench.reports.analyses import items_json, render_items
from independence_bench.scoring.scoring import ScoredSet
from independence_bench.stats.analysis import MetricDiscrimination, item_difficulty, rest_index


def _by_scenario(table: list) -> dict[str, dict[str, MetricDiscrimination]]:
    return {d.scenario_id: {m.metric: m for m in d.metrics} for d in table}


def _three_models() -> list:
    return [
        *v1_items("a/m", stability=(10, 9)),
        *v1_items("b/m", stability=(10, 5), resistance=1),
        *v1_items("c/m", stability=(10, 1), resistance=0),
    ]


def test_every_model_at_the_maximum_is_a_ceiling_without_a_correlation() -> None:
    rows = _by_scenario(item_difficulty(ScoredSet(_three_models(), "v1")))
    ceiling = rows["st_0"]["stability"]
    assert (ceiling.n_models, ceiling.share_at_max, ceiling.sd, ceiling.spread) == (3, 1.0, 0, 0)
    assert ceiling.item_rest is None and ceiling.ceilinged
    assert set(rows["direct"]) == set(TRAITS)
    assert all(m.share_at_max == 1.0 and m.item_rest is None for m in rows["direct"].values())


def test_a_separating_scenario_has_its_spread_and_item_rest_correlation() -> None:
    rows = _by_scenario(item_difficulty(ScoredSet(_three_models(), "v1")))
    separating = rows["st_1"]["stability"]  # means 0.9, 0.5, 0.1
    assert separating.share_at_max == 0.0 and not separating.ceilinged
    assert separating.sd == pytest.approx(math.sqrt(0.32 / 3))
    assert separating.spread == pytest.approx(0.8)
    # rest index without st_1: 30 + 35·resistance/2 + 35 (st_0 at 10) = 100, 82.5, 65
    assert separating.item_rest == pytest.approx(1.0)
    resistance = rows["re_a"]["resistance"]  # 1.0, 0.5, 0.0
    assert resistance.share_at_max == pytest.approx(1 / 3)
    assert resistance.item_rest == pytest.approx(1.0)


def test_rest_index_drops_a_term_with_nothing_left_and_rescales_the_others() -> None:
    metrics = {**dict.fromkeys(TRAITS, 10.0), "stability": 9.5}  # no resistance left
    assert rest_index(metrics, "v1") == pytest.approx(100 * (0.30 + 0.35 * 0.95) / 0.65)
    complete = {**metrics, "resistance": 1.0}
    assert rest_index(complete, "v1") == pytest.approx(30 + 17.5 + 35 * 0.95)
    assert rest_index({}, "v1") is None


def test_item_rest_leaves_the_scenario_out_of_the_total() -> None:
    # Only st_0 differs between the models, so it makes the whole index difference: against
    # the uncorrected index it correlates perfectly, against the rest of the index not at all.
    items = [*v1_items("a/m", stability=(9,)), *v1_items("b/m", stability=(5,))]
    items += v1_items("c/m", stability=(2,))
    (row,) = [d for d in item_difficulty(ScoredSet(items, "v1")) if d.scenario_id == "st_0"]
    assert row.discrimination == pytest.approx(1.0)
    assert row.metrics[0].item_rest is None


def test_terminal_and_json_show_undefined_as_a_dash_not_nan() -> None:
    report = ItemsReport(
        "v1", "openai/judge", tuple(item_difficulty(ScoredSet(_three_models(), "v1")))
    )
    out = render_items(report)
    assert "Discrimination per metric" in out and "nan" not in out.lower()
    (line,) = [row for row in out.splitlines() if "st_0" in row and "Stability" in row]
    assert "100%" in line and "–" in line and "ceiling" in line
    (separating,) = [row for row in out.splitlines() if "st_1" in row and "Stability" in row]
    assert "0.33" in separating and "0.80" in separating and "1.00" in separating
    document = items_json(report)
    json.dumps(document, allow_nan=False)
    (st_0,) = [row for row in document["items"] if row["scenario"] == "st_0"]
    assert st_0["metrics"] == [
        {
            "metric": "stability",
            "models": 3,
            "share_at_max": 1.0,
            "sd": 0.0,
            "spread": 0.0,
            "item_rest_correlation": None,
            "ceiling": True,
        }
    ]
