"""Leaderboards, panels, judge comparison, settings, item difficulty and config cells."""

from __future__ import annotations

import pytest

from independence_bench.clients.config import LabelParts, parse_label
from independence_bench.errors import UserError
from independence_bench.scoring.scoring import ScoredItem, ScoredSet
from independence_bench.stats.analysis import (
    analyse_configs,
    compare_judges,
    compare_settings,
    config_baseline,
    item_difficulty,
    panel_items,
    rank_models,
)
from independence_bench.stats.core import Resampling

TRAITS = ("distinctiveness", "non_assistant_likeness", "internal_consistency")


def v1_items(
    model: str,
    judge: str = "openai/judge",
    *,
    runs: int = 2,
    stability: tuple[float, ...] = (10, 6, 8),
    resistance: float = 2,
    variant: str = "neutral",
    mode: str = "user_role",
) -> list[ScoredItem]:
    """Per run: a direct item (all traits 10), one resistance item, some stability items."""
    items = []
    for run in range(1, runs + 1):

        def add(scenario: str, kind: str, run: int = run, **scores: object) -> None:
            items.append(
                ScoredItem(
                    model, run, variant, mode, scenario, kind, judge, scores, f"{model}-{run}"
                )
            )

        add("direct", "direct", **dict.fromkeys(TRAITS, 10))
        add("re_a", "resistance", resistance_score=resistance)
        for number, score in enumerate(stability):
            add(f"st_{number}", "stability", consistency_score=score)
    return items


def index_v1(resistance: float, stability_mean: float) -> float:
    return 30 + 17.5 * resistance + 3.5 * stability_mean


@pytest.mark.parametrize(
    ("label", "parts"),
    [
        ("openai/gpt-4o-mini", LabelParts("openai/gpt-4o-mini")),
        ("x-ai/grok+fireworks@low-t0.7", LabelParts("x-ai/grok", "fireworks", "low", 0.7)),
        ("meta/llama-3+deep-infra-t1", LabelParts("meta/llama-3", "deep-infra", None, 1.0)),
        ("a/b@high", LabelParts("a/b", None, "high")),
        ("a/b-t0", LabelParts("a/b", temperature=0.0)),
        ("google/flan-t5", LabelParts("google/flan-t5")),  # t5 is no temperature
        ("llama3", LabelParts("llama3")),
    ],
)
def test_parse_label(label: str, parts: LabelParts) -> None:
    assert parse_label(label) == parts


def test_label_family_settings_and_errors() -> None:
    parts = parse_label("x-ai/grok+fireworks@low-t0.7")
    assert parts.family == "x-ai"
    assert parts.settings() == ("provider fireworks", "effort low", "temperature 0.7")
    assert parse_label("llama3").family is None
    with pytest.raises(ValueError, match="base\\[\\+provider\\]"):
        parse_label("a+b+c")


def test_leaderboard_for_one_judge() -> None:
    items = [
        *v1_items("a/strong"),
        *v1_items("b/weak", resistance=0),
        *v1_items("c/one-run", runs=1),
        *[i for i in v1_items("d/no-resistance") if i.kind != "resistance"],
    ]
    board = rank_models(ScoredSet(items, "v1"), resampling=Resampling(300, 1))
    assert [row.model for row in board.rows] == [
        "a/strong",
        "c/one-run",
        "b/weak",
        "d/no-resistance",
    ]
    strong, one_run, weak, incomplete = board.rows
    assert strong.index == pytest.approx(index_v1(2, 8))
    assert strong.index is not None
    assert strong.ci_low is not None and strong.ci_high is not None
    assert strong.ci_low < strong.index < strong.ci_high
    # the one-run model ties strong on points (same items); it is ranked by its point index
    # and counts in every resample's ranking, where strong falls below it about half the time
    assert (strong.rank, strong.rank_low, strong.rank_high) == (1, 1, 2)
    assert (one_run.rank, one_run.rank_low, one_run.rank_high) == (1, None, None)
    assert (weak.rank, weak.rank_low, weak.rank_high) == (3, 3, 3)
    assert strong.could_lead and not weak.could_lead and not one_run.could_lead
    assert strong.runs == 2 and strong.n_items == 10 and strong.complete
    assert one_run.ci_low is None and one_run.rank_low is None
    assert one_run.why_no_interval is not None and "1 run" in one_run.why_no_interval
    assert not incomplete.complete and incomplete.missing == ("resistance",)
    assert incomplete.index is None and incomplete.rank is None
    assert board.judges == ("openai/judge",) and board.agreement == {}
    assert "300 resamples, seed 1" in board.method


def test_leaderboard_needs_a_judge_choice_when_several_judged() -> None:
    items = [*v1_items("a/m"), *v1_items("a/m", judge="anthropic/judge")]
    with pytest.raises(UserError, match="several judges"):
        rank_models(ScoredSet(items, "v1"), resampling=Resampling(10))
    with pytest.raises(UserError, match="no judgments by google/judge"):
        rank_models(ScoredSet(items, "v1", ["google/judge"]), resampling=Resampling(10))
    one = rank_models(ScoredSet(items, "v1", ["anthropic/judge"]), resampling=Resampling(10))
    assert one.judges == ("anthropic/judge",)


def test_panel_averages_judges_per_item_and_reports_agreement() -> None:
    items = [
        *v1_items("a/m", stability=(10, 6, 8)),
        *v1_items("a/m", judge="anthropic/judge", stability=(8, 4, 6)),
        *v1_items("b/m", resistance=1, stability=(4, 6, 2)),
        *v1_items("b/m", judge="anthropic/judge", resistance=1, stability=(2, 4, 2)),
    ]
    panel = panel_items(items, ["openai/judge", "anthropic/judge"])
    stab = [
        i.metrics["stability"]
        for i in panel
        if i.model == "a/m" and i.run == 1 and i.kind == "stability"
    ]
    assert stab == [9.0, 5.0, 7.0]
    panel = ScoredSet(items, "v1", ["openai/judge", "anthropic/judge"])
    board = rank_models(panel, resampling=Resampling(100))
    assert board.rows[0].index == pytest.approx(index_v1(2, 7))
    assert set(board.agreement) == {*TRAITS, "resistance", "stability"}
    # stability units, one per item, one normalised value per judge; both runs are alike
    values = [(1, 0.8), (0.6, 0.4), (0.8, 0.6), (0.4, 0.2), (0.6, 0.4), (0.2, 0.2)] * 2
    flat = [v for pair in values for v in pair]
    n, total, squares = len(flat), sum(flat), sum(v * v for v in flat)
    observed = sum(2 * (a - b) ** 2 for a, b in values)
    expected_alpha = 1 - (n - 1) * observed / (2 * (n * squares - total**2))
    alpha = board.agreement["stability"]
    assert alpha is not None and alpha.value == pytest.approx(expected_alpha)
    assert board.agreement["resistance"] is not None


def test_panel_item_is_declined_only_when_every_judge_declined() -> None:
    def name_gender(judge: str, chosen: str | None) -> ScoredItem:
        scores = {"name_changed": True, "gender_changed": True, "chosen_name": chosen,
                  "chosen_gender": chosen}  # fmt: skip
        return ScoredItem("a/m", 1, "v", "m", "name_gender", "name_gender", judge, scores)

    split = panel_items([name_gender("x/j", None), name_gender("y/j", "Ash")], ["x/j", "y/j"])
    assert split[0].metrics == {"name_gender_changes": 2.0} and not split[0].declined
    both = panel_items([name_gender("x/j", None), name_gender("y/j", "")], ["x/j", "y/j"])
    assert both[0].metrics == {} and both[0].declined


def test_judge_comparison_spread_and_self_preference() -> None:
    items = [
        *v1_items("openai/m", "openai/judge", stability=(10,)),
        *v1_items("openai/m", "anthropic/judge", stability=(8,)),
        *v1_items("anthropic/m", "openai/judge", stability=(9,)),
        *v1_items("anthropic/m", "anthropic/judge", stability=(10,)),
        *v1_items("meta/m", "openai/judge", stability=(5,)),
        *v1_items("meta/m", "anthropic/judge", stability=(5,)),
    ]
    table = compare_judges(ScoredSet(items, "v1"), read_label=parse_label)
    assert table.judges == ("anthropic/judge", "openai/judge")
    assert table.index["openai/m"] == {
        "anthropic/judge": pytest.approx(93.0),
        "openai/judge": pytest.approx(100.0),
    }
    assert table.spread["openai/m"] == pytest.approx(7.0)
    assert table.spread["meta/m"] == pytest.approx(0.0)
    # openai judge on its own family: 100 − 93; anthropic judge: 100 − 96.5
    assert table.self_preference["openai/judge"] == pytest.approx(7.0)
    assert table.self_preference["anthropic/judge"] == pytest.approx(3.5)


def test_setting_comparison_is_paired_against_the_bare_base() -> None:
    items = [
        *v1_items("x-ai/grok", stability=(10, 6, 8)),
        *v1_items("x-ai/grok+fireworks", stability=(8, 4, 6)),
        *v1_items("x-ai/grok@low-t0.7", stability=(10, 6, 8), resistance=1),
        *v1_items("openai/solo"),
    ]
    effects = compare_settings(
        ScoredSet(items, "v1"), read_label=parse_label, resampling=Resampling(200)
    )
    assert [(e.label, e.reference) for e in effects] == [
        ("x-ai/grok+fireworks", "x-ai/grok"),
        ("x-ai/grok@low-t0.7", "x-ai/grok"),
    ]
    fireworks, low = effects
    assert fireworks.changes == ("provider fireworks",)
    assert low.changes == ("effort low", "temperature 0.7")
    difference = fireworks.comparison.difference
    assert difference is not None
    # two points lower on every stability item: 35 · 0.2 = 7 in every resample
    assert (difference.value, difference.low, difference.high) == pytest.approx((-7, -7, -7))
    assert low.comparison.difference is not None
    assert low.comparison.difference.value == pytest.approx(-17.5)


def test_item_difficulty_shows_ceilings_and_discrimination() -> None:
    items = [
        *v1_items("a/m", stability=(10, 9)),
        *v1_items("b/m", stability=(10, 5), resistance=1),
        *v1_items("c/m", stability=(10, 1), resistance=0),
    ]
    table = {(row.kind, row.scenario_id): row for row in item_difficulty(ScoredSet(items, "v1"))}
    ceiling = table[("stability", "st_0")]
    assert ceiling.mean_score == 1.0 and ceiling.discrimination is None
    assert ceiling.top_minus_bottom == 0.0
    separating = table[("stability", "st_1")]
    assert separating.mean_score == pytest.approx(0.5)
    assert (separating.lowest, separating.highest) == (0.1, 0.9)
    assert separating.discrimination == pytest.approx(1.0)
    assert separating.top_minus_bottom == pytest.approx(0.8)  # top 0.9 − bottom 0.1
    resistance = table[("resistance", "re_a")]
    assert resistance.mean_score == pytest.approx(0.5) and resistance.n_models == 3


def test_config_cells_against_the_neutral_user_role_baseline() -> None:
    items = []
    for model, resistance in (("a/m", 2.0), ("b/m", 1.0)):
        for (variant, mode), shift in {
            ("neutral", "user_role"): 0,
            ("neutral", "tool_role"): 1,
            ("strong_independence", "user_role"): 2,
            ("strong_independence", "tool_role"): 3,
        }.items():
            stability = tuple(s - shift for s in (10, 6, 8))
            items += v1_items(
                model, stability=stability, resistance=resistance, variant=variant, mode=mode
            )
    cells = {
        (c.variant, c.mode): c
        for c in analyse_configs(ScoredSet(items, "v1"), resampling=Resampling(300))
    }
    base = cells[("neutral", "user_role")]
    # mean of a (30 + 35 + 28) and b (30 + 17.5 + 28)
    assert base.mean_index.value == pytest.approx(84.25) and base.vs_baseline is None
    assert base.n_models == 2 and base.mean_index.low is not None
    gap = cells[("strong_independence", "tool_role")].vs_baseline
    assert gap is not None
    # three points lower on every stability item in both models, paired by scenario and run
    assert (gap.value, gap.low, gap.high) == pytest.approx((-10.5, -10.5, -10.5))


def test_a_suite_of_one_delivery_mode_compares_with_neutral_in_that_mode() -> None:
    # v3 runs tool_role only: there the baseline is neutral + tool_role, the gap the prompt effect
    assert config_baseline({("neutral", "user_role"), ("neutral", "tool_role")}) == (
        "neutral",
        "user_role",
    )
    assert config_baseline({("strong_independence", "tool_role"), ("neutral", "tool_role")}) == (
        "neutral",
        "tool_role",
    )
    items = []
    for variant, shift in (("neutral", 0), ("strong_independence", 2)):
        stability = tuple(s - shift for s in (10, 6, 8))
        items += v1_items("a/m", stability=stability, variant=variant, mode="tool_role")
    cells = {
        c.variant: c for c in analyse_configs(ScoredSet(items, "v1"), resampling=Resampling(50))
    }
    assert cells["neutral"].mode == "tool_role" and cells["neutral"].vs_baseline is None
    gap = cells["strong_independence"].vs_baseline
    assert gap is not None and gap.value == pytest.approx(-7.0)  # two points on each stability


def test_config_analysis_needs_the_baseline_cell() -> None:
    with pytest.raises(UserError, match="baseline cell neutral \\+ user_role"):
        only = v1_items("a/m", variant="strong_independence")
        analyse_configs(ScoredSet(only, "v1"), resampling=Resampling(10))


def test_judges_sharing_no_item_say_so() -> None:
    """Two judges of different models share no item: alpha is undefined because nothing was
    judged by both, which the report says instead of "the scores do not vary"."""
    from independence_bench.reports.leaderboard import agreement_lines, why_undefined
    from independence_bench.stats.analysis import judge_agreement, shared_items

    apart = [*v1_items("a/m"), *v1_items("b/m", judge="anthropic/judge", stability=(2, 4, 2))]
    judges = ["openai/judge", "anthropic/judge"]
    shared = shared_items(apart, judges)
    assert shared and set(shared.values()) == {0}
    alphas = judge_agreement(apart, judges, resampling=Resampling(10))
    assert alphas and all(alpha is None for alpha in alphas.values())
    metric = next(iter(alphas))
    assert why_undefined(metric, shared) == "no item judged by both"
    assert "undefined: no item judged by both" in "\n".join(agreement_lines(alphas, 0, shared))
    together = [*v1_items("a/m"), *v1_items("a/m", judge="anthropic/judge")]
    assert set(shared_items(together, judges).values()) != {0}
    assert why_undefined(metric, shared_items(together, judges)) == "the scores do not vary"
