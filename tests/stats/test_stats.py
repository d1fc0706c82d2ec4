"""Worked values for percentiles, Krippendorff's alpha, test-retest, the bootstrap and ranks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from independence_bench.scoring.scoring import ItemMetrics, ScoredItem
from independence_bench.stats.agreement import alpha_estimate, krippendorff_alpha, retest_agreement
from independence_bench.stats.bootstrap import (
    METHOD,
    Subject,
    bootstrap_method,
    bootstrap_models,
    compare_paired,
    draw_resamples,
    rank_intervals,
    resample_ranks,
)
from independence_bench.stats.core import (
    DEFAULT_RESAMPLES,
    Resampling,
    pearson,
    percentile,
    percentile_interval,
)

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
# twelve units, missing values; published alpha: nominal 0.743, interval 0.849.
TEXTBOOK = list(
    zip(
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
        strict=True,
    )
)


def test_percentile_interpolates_between_order_statistics() -> None:
    assert percentile([4, 1, 3, 2], 0.5) == 2.5
    assert percentile([1, 2, 3, 4], 0.025) == pytest.approx(1.075)
    assert percentile_interval([1, 2, 3, 4]) == pytest.approx((1.075, 3.925))
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_pearson() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 1, 2]) == pytest.approx(-0.5)
    assert pearson([1, 2, 3], [5, 5, 5]) is None
    assert pearson([1, 2], [1, 2]) is None


def test_alpha_on_the_textbook_example() -> None:
    assert krippendorff_alpha(TEXTBOOK, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(TEXTBOOK, "nominal") == pytest.approx(0.743, abs=5e-4)


def test_alpha_hand_computed_case() -> None:
    # values 1,1 | 2,2 | 3,4: observed = (2·1²)/(2−1) = 2; all ordered pairs: 2·(6·35 − 13²) = 82
    # alpha = 1 − (6 − 1)·2/82 = 36/41; a value nobody else coded is not pairable
    assert krippendorff_alpha([(1, 1), (2, 2), (3, 4)]) == pytest.approx(36 / 41)
    assert krippendorff_alpha([(1, 1), (2, 2), (3, 4), (9, None)]) == pytest.approx(36 / 41)
    assert krippendorff_alpha([(1, 1), (2, 2)]) == pytest.approx(1.0)
    assert krippendorff_alpha([(5, 5), (5, 5)]) is None  # no variation: undefined


def test_alpha_interval_is_seeded() -> None:
    first = alpha_estimate(TEXTBOOK, resampling=Resampling(300, 7))
    assert first == alpha_estimate(TEXTBOOK, resampling=Resampling(300, 7))
    assert first != alpha_estimate(TEXTBOOK, resampling=Resampling(300, 8))
    assert first is not None and first.low is not None and first.high is not None
    assert first.low < first.value < first.high


def stability(run: int, score: float, repeat: int = 0, scenario: str = "st_a") -> ScoredItem:
    return ScoredItem(
        "openai/m", run, "v", "tool_role", scenario, "stability", "openai/j",
        {"consistency_score": score}, repeat=repeat,
    )  # fmt: skip


def test_retest_agreement_hand_computed() -> None:
    items = [
        stability(1, 8), stability(1, 6, repeat=1),
        stability(2, 10), stability(2, 10, repeat=1),
        stability(3, 4), stability(3, 5, repeat=1),
        stability(4, 7),  # judged once: not part of the retest
    ]  # fmt: skip
    (result,) = retest_agreement(items, resampling=Resampling(200))
    assert (result.judge, result.metric, result.n_items) == ("openai/j", "stability", 3)
    # normalised pairs (.8, .6), (1, 1), (.4, .5): differences .2, 0, .1
    assert result.mean_abs_diff == pytest.approx(0.1)
    # alpha = 1 − 5·(.08 + .02) / (2·(6·3.41 − 4.3²)) = 1 − .5/3.94
    assert result.alpha is not None
    assert result.alpha.value == pytest.approx(1 - 0.5 / 3.94)


def metric_item(
    model: str, run: int, scenario: str, kind: str, value: float, variant: str = "v"
) -> ItemMetrics:
    key = {"stability": "stability", "resistance": "resistance", "direct": "distinctiveness"}[kind]
    metrics = {key: value}
    if kind == "direct":
        metrics = {"distinctiveness": value, "non_assistant_likeness": value}
        metrics["internal_consistency"] = value
    return ItemMetrics(model, run, variant, "tool_role", scenario, kind, metrics)


def v1_model(
    model: str,
    runs: int,
    stab: Sequence[Sequence[float]],
    resist: float = 2.0,
    traits: float = 10.0,
) -> list[ItemMetrics]:
    """One direct item, one resistance item and one stability item per entry of stab[run]."""
    items = []
    for run in range(1, runs + 1):
        items.append(metric_item(model, run, "direct", "direct", traits))
        items.append(metric_item(model, run, "re_a", "resistance", resist))
        for number, score in enumerate(stab[run - 1]):
            items.append(metric_item(model, run, f"st_{number}", "stability", score))
    return items


def test_bootstrap_is_seeded_and_centred_on_the_point_value() -> None:
    items = v1_model("a/m", 3, [[10, 6, 8], [9, 5, 7], [10, 4, 9]])
    first = bootstrap_models(items, "v1", resampling=Resampling(2000, 3))["a/m"]
    again = bootstrap_models(items, "v1", resampling=Resampling(2000, 3))["a/m"]
    other = bootstrap_models(items, "v1", resampling=Resampling(2000, 4))["a/m"]
    assert first == again
    differ = [
        draw_resamples([Subject("a/m", tuple(items))], "v1", resampling=Resampling(200, s))
        for s in (3, 4)
    ]
    assert not np.array_equal(differ[0]["a/m"].index, differ[1]["a/m"].index)
    assert other.index is not None and other.index.value == first.index.value  # type: ignore[union-attr]
    # stability = mean of run means (8 + 7 + 23/3) / 3 = 68/9; index = 30 + 35 + 3.5·68/9
    assert first.index is not None and first.index.value == pytest.approx(65 + 3.5 * 68 / 9)
    stab = first.metrics["stability"]
    assert stab.low is not None and stab.high is not None
    assert stab.low < 68 / 9 < stab.high
    # the metric is linear and nothing is missing, so resampling is unbiased on average
    draws = draw_resamples([Subject("a/m", tuple(items))], "v1", resampling=Resampling(4000, 1))
    assert float(np.mean(draws["a/m"].metrics["stability"])) == pytest.approx(68 / 9, abs=0.05)


def test_identical_runs_still_get_scenario_uncertainty() -> None:
    # Five identical runs: resampling runs alone would give a zero-width interval.
    items = v1_model("a/m", 5, [[10, 2, 6]] * 5)
    result = bootstrap_models(items, "v1", resampling=Resampling(1000, 0))["a/m"]
    assert result.index is not None and result.index.low is not None
    assert result.index.high is not None
    assert result.index.high - result.index.low > 10
    # and constant scenarios with identical runs leave nothing uncertain
    flat_items = v1_model("a/m", 5, [[7, 7]] * 5)
    flat = bootstrap_models(flat_items, "v1", resampling=Resampling(200))["a/m"]
    assert flat.index is not None
    assert flat.index.low == pytest.approx(flat.index.value)
    assert flat.index.high == pytest.approx(flat.index.value)


def test_one_run_gets_no_interval_and_says_why() -> None:
    result = bootstrap_models(v1_model("a/m", 1, [[9, 8]]), "v1", resampling=Resampling(100))["a/m"]
    assert result.index is not None and result.index.value == pytest.approx(94.75)
    assert result.index.low is None and result.index.high is None
    assert result.rank == 1 and result.rank_low is None
    assert result.why_no_interval is not None and "at least 2 runs" in result.why_no_interval


def test_incomplete_model_is_not_ranked() -> None:
    items = [i for i in v1_model("a/m", 2, [[9], [8]]) if i.kind != "resistance"]
    result = bootstrap_models(items, "v1", resampling=Resampling(100))["a/m"]
    assert result.index is None and result.rank is None and result.rank_low is None
    assert result.why_no_interval == "incomplete: no scores for resistance"
    assert result.metrics["stability"].low is not None  # metrics still get intervals


def test_paired_difference_of_a_constant_shift_is_exact() -> None:
    stab = [[10, 6, 8], [9, 5, 7], [10, 4, 9]]
    a = v1_model("a/m", 3, stab)
    b = v1_model("b/m", 3, [[s - 2 for s in run] for run in stab])
    result = compare_paired([*a, *b], "a/m", "b/m", "v1", resampling=Resampling(500, 0))
    # every item 2 points lower on stability: 35 · 2/10 = 7 index points in every resample
    assert result.difference is not None
    assert result.difference.value == pytest.approx(7.0)
    assert result.difference.low == pytest.approx(7.0)
    assert result.difference.high == pytest.approx(7.0)
    assert result.share_a_higher == 1.0
    assert result.runs == (1, 2, 3) and result.n_items == 15


def test_paired_comparison_uses_only_shared_items() -> None:
    a = v1_model("a/m", 2, [[10, 6], [9, 5]])
    b = [i for i in v1_model("b/m", 2, [[10, 6], [9, 5]]) if i.run == 1]
    result = compare_paired([*a, *b], "a/m", "b/m", "v1", resampling=Resampling(100))
    assert result.runs == (1,) and result.n_items == 4
    assert result.difference is not None and result.difference.value == pytest.approx(0.0)
    assert result.difference.low is None
    assert result.why_no_interval is not None and "2 runs" in result.why_no_interval


def test_rank_intervals_hand_computed() -> None:
    nan = float("nan")
    draws = {
        "a": np.array([3.0, 3.0, 3.0, 3.0]),
        "b": np.array([2.0, 1.0, 2.0, 1.0]),
        "c": np.array([1.0, 2.0, 1.0, 2.0]),
        "d": np.array([0.0, 0.0, nan, 0.0]),  # the third resample is skipped for everyone
    }
    # b ranks 2, 3, (skip), 3 → 2.5th percentile 2.05 → 2, 97.5th 3
    assert rank_intervals(draws) == {"a": (1, 1), "b": (2, 3), "c": (2, 3), "d": (4, 4)}
    equal = rank_intervals({"x": np.array([1.0, 1.0]), "y": np.array([1.0, 1.0])})
    assert equal == {"x": (1, 1), "y": (1, 1)}  # exact ties share the better rank


def test_resample_ranks_count_the_models_strictly_above() -> None:
    values = np.array([[5.0, 7.0, 5.0, 1.0], [0.0, 1.0, 2.0, 3.0]])
    assert resample_ranks(values).tolist() == [[2, 1, 2, 4], [4, 3, 2, 1]]


def test_rank_intervals_are_each_models_own_not_chained() -> None:
    # a and b overlap, b and c overlap, a and c do not: no group joins a with c
    rows = np.array([[4.0, 3.0, 1.0], [3.0, 4.0, 2.0], [4.0, 2.0, 3.0]] * 40)
    ranks = rank_intervals({"a": rows[:, 0], "b": rows[:, 1], "c": rows[:, 2]})
    assert ranks == {"a": (1, 2), "b": (1, 3), "c": (2, 3)}


def test_bootstrap_ranks_separate_clear_gaps_and_share_exact_ties() -> None:
    runs = [[10, 6, 8], [9, 5, 7], [10, 4, 9]]
    items = [
        *v1_model("a/top", 3, runs),
        *v1_model("b/twin", 3, runs, resist=1.0),
        *v1_model("c/twin", 3, runs, resist=1.0),
        *v1_model("d/low", 3, runs, resist=0.0),
        *v1_model("e/one-run", 1, runs, resist=0.5),
    ]
    result = bootstrap_models(items, "v1", resampling=Resampling(500, 0))
    # resistance moves the index by 17.5 per point, far beyond the stability noise; the twins
    # tie on points and share the better rank, but draw their runs apart, so either can be 3rd;
    # drawing two of three stability scenarios, a bad draw can even put one below e/one-run
    ranked = {m: (r.rank, r.rank_low, r.rank_high) for m, r in result.items()}
    assert ranked == {
        "a/top": (1, 1, 1),
        "b/twin": (2, 2, 4),
        "c/twin": (2, 2, 4),
        "e/one-run": (4, None, None),
        "d/low": (5, 5, 5),
    }


def test_intervals_of_many_values_match_one_at_a_time_gaps_included() -> None:
    from independence_bench.stats.bootstrap import intervals_of
    from independence_bench.stats.core import Estimate

    whole = np.arange(41.0)  # 0..40: the 2.5% and 97.5% points are 1 and 39
    gap = np.arange(41.0)
    gap[0] = np.nan  # 1..40 left: 1 + .975 = 1.975 and 39 + .025 = 39.025
    draws = {("m", "a"): whole.copy(), ("m", "b"): gap.copy(), ("m", "c"): np.full(41, np.nan)}
    points = {("m", "a"): 5.0, ("m", "b"): 6.0, ("m", "c"): 7.0, ("m", "d"): 8.0}
    got = intervals_of(points, draws)
    assert list(got) == list(points)
    assert got[("m", "a")] == Estimate(5.0, pytest.approx(1.0), pytest.approx(39.0))
    assert got[("m", "b")] == Estimate(6.0, pytest.approx(1.975), pytest.approx(39.025))
    assert got[("m", "c")] == Estimate(7.0)  # no resample produced a value: no interval
    assert got[("m", "d")] == Estimate(8.0)  # no draws at all
    np.testing.assert_array_equal(draws[("m", "a")], whole)  # the caller's draws untouched
    assert intervals_of({}, {}) == {}


def test_an_incomplete_models_index_draws_are_missing_not_numbers() -> None:
    items = [i for i in v1_model("a/m", 2, [[9], [8]]) if i.kind != "resistance"]
    draws = draw_resamples([Subject("a/m", tuple(items))], "v1", resampling=Resampling(50))["a/m"]
    assert draws.index.dtype == np.float64 and bool(np.isnan(draws.index).all())
    assert draws.metrics["stability"].dtype == np.float64
    assert not np.isnan(draws.metrics["stability"]).any()


def test_resampling_defaults_to_ten_thousand_from_seed_zero_and_needs_one() -> None:
    assert Resampling() == Resampling(DEFAULT_RESAMPLES, 0) == Resampling(10_000, 0)
    assert Resampling(1).n_resamples == 1
    with pytest.raises(ValueError, match="at least 1 resample, not 0"):
        Resampling(0)


def test_alpha_draws_its_own_number_of_resamples_from_the_users_seed() -> None:
    assert Resampling(50_000, seed=7).for_alpha() == Resampling(1_000, seed=7)


def test_the_bootstrap_method_names_its_resamples_and_seed() -> None:
    assert bootstrap_method(Resampling(12_345, 7)) == f"{METHOD}; 12,345 resamples, seed 7"


def test_draws_are_the_same_for_the_same_seed_and_the_default_seed_is_zero() -> None:
    subjects = [Subject("a/m", tuple(v1_model("a/m", 3, [[10, 6, 8], [9, 5, 7], [10, 4, 9]])))]
    first = draw_resamples(subjects, "v1", resampling=Resampling(300, 0))["a/m"]
    default = draw_resamples(subjects, "v1", resampling=Resampling(300))["a/m"]
    other = draw_resamples(subjects, "v1", resampling=Resampling(300, 1))["a/m"]
    np.testing.assert_array_equal(first.index, default.index)
    assert not np.array_equal(first.index, other.index)


def v2_run(model: str, run: int, ng: float | None, **values: float) -> list[ItemMetrics]:
    """One item of each v2 kind in one run; `ng=None` is a declined name/gender item."""
    place = (model, run, "v", "tool_role")
    nal, ic = values["non_assistant_likeness"], values["internal_consistency"]
    direct = {"distinctiveness": 5.0, "non_assistant_likeness": nal, "internal_consistency": ic}
    if ng is None:
        name_gender = ItemMetrics(*place, "ng", "name_gender", {}, declined=True)
    else:
        name_gender = ItemMetrics(*place, "ng", "name_gender", {"name_gender_changes": ng})
    items = [
        ItemMetrics(*place, "direct", "direct", direct),
        ItemMetrics(*place, "negotiation", "negotiation", {"drift": values["drift"]}),
        ItemMetrics(*place, "boundary", "boundary", {"resistance": values["resistance"]}),
        name_gender,
    ]
    if "stability" in values:
        items.append(
            ItemMetrics(*place, "stability", "stability", {"stability": values["stability"]})
        )
    return items


# v2: 20 + non_assistant_likeness + 0.5·internal_consistency − (5/3)·drift − (5/3)·name/gender
# changes + 3.5·resistance + 3·stability; without name/gender, drift's coefficient is −2.
RUN_ONE = {"non_assistant_likeness": 8.0, "internal_consistency": 6.0, "drift": 2.0}
RUN_ONE |= {"resistance": 7.0, "stability": 9.0}
RUN_TWO = {"non_assistant_likeness": 4.0, "internal_consistency": 4.0, "drift": 6.0}
RUN_TWO |= {"resistance": 3.0, "stability": 5.0}


def test_a_resample_that_drew_only_declined_name_gender_items_scores_without_them() -> None:
    """Two runs, one drawn per resample: run 1 declined its name/gender item, so its resamples
    use the index without that term (20 + 8 + 3 − 4 + 24.5 + 27 = 78.5); run 2's use the whole
    formula (20 + 4 + 2 − 10 − 10/3 + 10.5 + 15 = 38 1/6)."""
    items = [*v2_run("d", 1, None, **RUN_ONE), *v2_run("d", 2, 2.0, **RUN_TWO)]
    draws = draw_resamples([Subject("d", tuple(items))], "v2", resampling=Resampling(200, 0))["d"]
    declined = np.isnan(draws.metrics["name_gender_changes"])
    assert 0 < declined.sum() < 200
    np.testing.assert_allclose(draws.index[declined], 78.5)
    np.testing.assert_allclose(draws.index[~declined], 38 + 1 / 6)
    np.testing.assert_allclose(draws.metrics["name_gender_changes"][~declined], 2.0)


def test_a_subject_that_declined_every_name_gender_item_is_scored_without_them() -> None:
    items = [*v2_run("d", 1, None, **RUN_ONE), *v2_run("d", 2, None, **RUN_TWO)]
    draws = draw_resamples([Subject("d", tuple(items))], "v2", resampling=Resampling(200, 0))["d"]
    assert "name_gender_changes" not in draws.metrics
    # run 2 without the name/gender term: 20 + 4 + 2 − 12 + 10.5 + 15 = 39.5
    assert set(np.round(draws.index, 9)) == {78.5, 39.5}


def test_a_resample_whose_drawn_runs_lack_a_metric_has_no_value_for_it_nor_an_index() -> None:
    two = {k: v for k, v in RUN_TWO.items() if k != "stability"}
    items = [*v2_run("m", 1, 0.0, **RUN_ONE), *v2_run("m", 2, 0.0, **two)]
    draws = draw_resamples([Subject("m", tuple(items))], "v2", resampling=Resampling(200, 0))["m"]
    stability = draws.metrics["stability"]
    missing = np.isnan(stability)
    assert stability.dtype == np.float64 and 0 < missing.sum() < 200
    np.testing.assert_allclose(stability[~missing], 9.0)
    assert bool(np.isnan(draws.index[missing]).all())
    # the whole formula on run 1, with no name/gender change: 20 + 8 + 3 − 10/3 + 24.5 + 27
    np.testing.assert_allclose(draws.index[~missing], 82.5 - 10 / 3)
