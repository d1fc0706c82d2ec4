"""Insights: the judge, comparison, item and config analyses users ask for, read from the store.

Each `*_report` function opens nothing and calls nothing: it takes an open `Store` and an
`InsightOptions` (suite, judge or judge panel, bootstrap resamples and seed), picks the stored
results through `results.load_results`, and hands them to the pure statistics of `analysis`,
`bootstrap` and `stats`. What comes back is a frozen report that `_tables` renders as
text and `*_json` turns into plain data for `--json`. No API call is ever made, so re-rendering
is free and gives the same numbers for the same seed.

- `panel_leaderboard`: the leaderboard for one judge or a panel, with inter-judge alpha.
- `judges_report`: index per model per judge, spread, self-preference, test-retest agreement.
- `pair_report` / `settings_report`: paired difference of two models; setting effects.
- `items_report`: per scenario difficulty and discrimination, ceilinged scenarios flagged, and
  per metric the share of models at its maximum, spread and item–rest correlation.
- `configs_report`: prompt variant × delivery mode cells against ``neutral`` + ``user_role``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from independence_bench.clients.config import parse_label
from independence_bench.errors import UserError
from independence_bench.reports.format import estimate_json, rounded
from independence_bench.reports.leaderboard import agreement_json
from independence_bench.reports.options import InsightOptions
from independence_bench.scoring.results import SuiteResults, load_results, scored_items
from independence_bench.stats.agreement import (
    ALPHA_METHOD,
    ArmReading,
    RetestAgreement,
    arm_readings,
    retest_agreement,
)
from independence_bench.stats.analysis import (
    CEILING_SHARE,
    ConfigCell,
    ItemDifficulty,
    JudgeComparison,
    MetricDiscrimination,
    SettingEffect,
    analyse_configs,
    compare_judges,
    compare_settings,
    config_baseline,
    item_difficulty,
    judge_agreement,
    panel_items,
    shared_items,
)
from independence_bench.stats.bootstrap import PairedComparison, compare_paired
from independence_bench.stats.core import Estimate
from independence_bench.store.store import Store

CEILING = 0.9
"""A scenario is ceilinged when every model scores at least this (0–1): it separates no one."""
FLOOR = 0.1
"""A scenario is floored when no model scores above this."""


def _load(store: Store, options: InsightOptions) -> SuiteResults:
    """The suite's results for the judge (or panel) asked for; errors the user can fix."""
    if options.judge and options.judges:
        raise UserError("give either --judge or --judges, not both")
    results = load_results(
        store, suite_id=options.suite_id, judge=options.judge, judges=options.judges
    )
    if not results.scored:
        raise UserError(
            f"suite {results.suite_id} has no scored judgments yet; judge it with "
            "'aib judge --judge MODEL'"
        )
    return results


def _judge_text(results: SuiteResults) -> str:
    return " + ".join(results.judges)


# -- leaderboard with a judge panel ---------------------------------------------------------


@dataclass(frozen=True)
class JudgesReport:
    suite_id: str
    formula: str
    comparison: JudgeComparison
    agreement: Mapping[str, Estimate | None]
    """Alpha between all the judges, per metric (empty with one judge)."""
    retest: tuple[RetestAgreement, ...]
    """Per judge and metric, over items that judge judged more than once."""
    judged: Mapping[str, int]
    """Judge -> scored first judgments in this suite."""
    seed: int
    shared: Mapping[str, int] = field(default_factory=dict)
    """Per metric, the items two or more judges scored (`analysis.shared_items`)."""
    arms: tuple[ArmReading, ...] = ()
    """Per judge, how its reading of the control follow-ups agrees with their arms."""


def judges_report(store: Store, options: InsightOptions) -> JudgesReport:
    """Every judge (or the `options.judges`) of one suite compared on the same transcripts."""
    everything = load_results(store, suite_id=options.suite_id, judge=None)
    judged: dict[str, int] = {}
    for judgment in everything.judgments:
        if judgment.status == "scored" and judgment.repeat == 0:
            judged[judgment.judge_model] = judged.get(judgment.judge_model, 0) + 1
    present = sorted(judged)
    if not present:
        raise UserError(
            f"suite {everything.suite_id} has no scored judgments yet; judge it with "
            "'aib judge --judge MODEL'"
        )
    chosen = tuple(dict.fromkeys(options.judges)) or tuple(present)
    unknown = [judge for judge in chosen if judge not in judged]
    if unknown:
        raise UserError(
            f"no scored judgments by {', '.join(unknown)} in suite {everything.suite_id}; "
            f"judges present: {', '.join(present)}"
        )
    scored = scored_items(list(everything.items), list(everything.judgments), set(chosen))
    try:
        comparison = compare_judges(scored, everything.formula, chosen, read_label=parse_label)
    except ValueError as exc:  # a model label the label grammar cannot read
        raise UserError(str(exc)) from None
    alpha = options.resampling.for_alpha()
    agreement = judge_agreement(scored, chosen, resampling=alpha) if len(chosen) > 1 else {}
    return JudgesReport(
        suite_id=everything.suite_id,
        formula=everything.formula,
        comparison=comparison,
        agreement=agreement,
        retest=tuple(retest_agreement(scored, resampling=alpha)),
        judged={judge: judged[judge] for judge in chosen},
        seed=options.resampling.seed,
        shared=shared_items(scored, chosen),
        arms=arm_readings(scored),
    )


def judges_json(report: JudgesReport) -> dict[str, Any]:
    """`aib judges --json`."""
    comparison = report.comparison
    return {
        "suite": report.suite_id,
        "formula": report.formula,
        "judges": list(comparison.judges),
        "judged_items": dict(report.judged),
        "models": [
            {
                "model": model,
                "index": {j: rounded(v, 2) for j, v in by_judge.items()},
                "spread": rounded(comparison.spread.get(model), 2),
            }
            for model, by_judge in comparison.index.items()
        ],
        "self_preference": {j: rounded(v, 2) for j, v in comparison.self_preference.items()},
        "agreement": agreement_json(report.agreement),
        "retest": [
            {
                "judge": r.judge,
                "metric": r.metric,
                "items": r.n_items,
                "alpha": estimate_json(r.alpha),
                "mean_abs_diff": round(r.mean_abs_diff, 4),
            }
            for r in report.retest
        ],
        "alpha_method": f"{ALPHA_METHOD}, seed {report.seed}",
        "manipulation_check": [
            {
                "judge": r.judge,
                "control_items": r.items,
                "new_information_agreement": round(r.new_information, 4),
                "weak_read_as_new": rounded(r.weak_read_as_new, 4),
                "challenge_applies_agreement": rounded(r.challenge_applies, 4),
            }
            for r in report.arms
        ],
    }


# -- comparisons ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteAnalysis:
    """What a store-only analysis read: one suite under one judge (or a panel, `A + B`)."""

    suite_id: str
    judge: str


def analysis_json(report: SuiteAnalysis) -> dict[str, Any]:
    """The suite and judge every analysis's JSON starts with."""
    return {"suite": report.suite_id, "judge": report.judge}


@dataclass(frozen=True)
class ResampledReport(SuiteAnalysis):
    """An analysis with bootstrap intervals, and the method printed under its table."""

    method: str


@dataclass(frozen=True)
class PairReport(ResampledReport):
    comparison: PairedComparison
    """Model A's index minus model B's, paired on the items both answered."""


def pair_report(store: Store, options: InsightOptions, model_a: str, model_b: str) -> PairReport:
    """Index of `model_a` minus index of `model_b`, paired on the items both answered."""
    if model_a == model_b:
        raise UserError(f"compare two different models, not {model_a!r} with itself")
    results = _load(store, options)
    labels = sorted({item.run.model_label for item in results.items})
    unknown = [m for m in (model_a, model_b) if m not in labels]
    if unknown:
        raise UserError(
            f"no model {', '.join(map(repr, unknown))} in suite {results.suite_id}; "
            f"models: {', '.join(labels)}"
        )
    measured = panel_items(results.scored, results.judges)
    comparison = compare_paired(
        measured,
        model_a,
        model_b,
        results.formula,
        resampling=options.resampling,
    )
    return PairReport(results.suite_id, _judge_text(results), options.method, comparison)


def comparison_json(comparison: PairedComparison) -> dict[str, Any]:
    difference = comparison.difference
    return {
        "model_a": comparison.model_a,
        "model_b": comparison.model_b,
        "difference": None if difference is None else round(difference.value, 2),
        "ci_low": None if difference is None else rounded(difference.low, 2),
        "ci_high": None if difference is None else rounded(difference.high, 2),
        "share_a_higher": rounded(comparison.share_a_higher, 4),
        "items": comparison.n_items,
        "runs": list(comparison.runs),
        "why_no_interval": comparison.why_no_interval,
    }


def pair_json(report: PairReport) -> dict[str, Any]:
    """`aib compare A B --json`."""
    return {
        **comparison_json(report.comparison),
        **analysis_json(report),
        "method": report.method,
    }


@dataclass(frozen=True)
class SettingsReport(ResampledReport):
    effects: tuple[SettingEffect, ...]
    """Per base model with several labels, each label against the one with fewest settings."""


def settings_report(store: Store, options: InsightOptions) -> SettingsReport:
    """How far each provider pin, reasoning effort or temperature moves its base model."""
    return settings_of(_load(store, options), options)


def settings_of(results: SuiteResults, options: InsightOptions) -> SettingsReport:
    """`settings_report` of results already loaded (the report has them)."""
    try:
        effects = compare_settings(
            results.scored,
            results.formula,
            results.judges,
            read_label=parse_label,
            resampling=options.resampling,
        )
    except ValueError as exc:  # a model label the label grammar cannot read
        raise UserError(str(exc)) from None
    return SettingsReport(results.suite_id, _judge_text(results), options.method, tuple(effects))


def settings_json(report: SettingsReport) -> dict[str, Any]:
    """`aib compare --json`."""
    return {
        **analysis_json(report),
        "settings": [
            {
                "base": e.base,
                "label": e.label,
                "reference": e.reference,
                "changes": list(e.changes),
                **comparison_json(e.comparison),
            }
            for e in report.effects
        ],
        "method": report.method,
    }


# -- item difficulty --------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemsReport(SuiteAnalysis):
    items: tuple[ItemDifficulty, ...]
    """Easiest first."""


def items_report(store: Store, options: InsightOptions) -> ItemsReport:
    """Per scenario: mean normalised score over models and how well it separates them."""
    results = _load(store, options)
    table = item_difficulty(results.scored, results.formula, results.judges)
    table.sort(key=lambda d: (-d.mean_score, d.kind, d.scenario_id))
    return ItemsReport(results.suite_id, _judge_text(results), tuple(table))


def flag_of(item: ItemDifficulty) -> str:
    """``ceiling`` when every model scores ≥ `CEILING`, ``floor`` when none scores > `FLOOR`."""
    if item.lowest >= CEILING:
        return "ceiling"
    if item.highest <= FLOOR:
        return "floor"
    return ""


def items_json(report: ItemsReport) -> dict[str, Any]:
    """`aib items --json`."""
    return {
        **analysis_json(report),
        "items": [
            {
                "scenario": d.scenario_id,
                "kind": d.kind,
                "models": d.n_models,
                "mean_score": round(d.mean_score, 4),
                "lowest": round(d.lowest, 4),
                "highest": round(d.highest, 4),
                "discrimination": rounded(d.discrimination, 4),
                "top_minus_bottom": rounded(d.top_minus_bottom, 4),
                "ceiling": flag_of(d) == "ceiling",
                "floor": flag_of(d) == "floor",
                "metrics": [metric_json(m) for m in d.metrics],
            }
            for d in report.items
        ],
        "ceiling_share": CEILING_SHARE,
    }


def metric_json(row: MetricDiscrimination) -> dict[str, Any]:
    """One metric of one scenario in `aib items --json` and results.json (None when undefined)."""
    return {
        "metric": row.metric,
        "models": row.n_models,
        "share_at_max": round(row.share_at_max, 4),
        "sd": round(row.sd, 4),
        "spread": round(row.spread, 4),
        "item_rest_correlation": rounded(row.item_rest, 4),
        "ceiling": row.ceilinged,
    }


# -- prompt variant × delivery mode -----------------------------------------------------------


@dataclass(frozen=True)
class ConfigsReport(ResampledReport):
    cells: tuple[ConfigCell, ...]
    """Each prompt variant × delivery mode cell, sorted, the baseline's among them; none when
    no model is complete in every cell."""
    baseline: tuple[str, str] = ("neutral", "user_role")
    """The (variant, mode) the other cells are compared with (`config_baseline`)."""


def configs_report(store: Store, options: InsightOptions) -> ConfigsReport:
    """Mean index per (variant, mode) cell and its paired difference from the baseline."""
    results = _load(store, options)
    cells = sorted({(item.variant, item.mode) for item in results.scored})
    if len(cells) < 2:
        only = " + ".join(cells[0]) if cells else "none"
        raise UserError(
            f"suite {results.suite_id} has one prompt variant × delivery mode cell ({only}); "
            "config analysis needs a suite with several, such as 'full'"
        )
    baseline = config_baseline(cells)
    found = analyse_configs(
        results.scored,
        results.formula,
        results.judges,
        baseline=baseline,
        resampling=options.resampling,
    )
    return ConfigsReport(
        results.suite_id, _judge_text(results), options.method, tuple(found), baseline
    )


def configs_json(report: ConfigsReport) -> dict[str, Any]:
    """`aib configs --json`."""
    return {
        **analysis_json(report),
        "baseline": dict(zip(("variant", "mode"), report.baseline, strict=True)),
        "cells": [
            {
                "variant": c.variant,
                "mode": c.mode,
                "models": c.n_models,
                "mean_index": estimate_json(c.mean_index, 2),
                "vs_baseline": estimate_json(c.vs_baseline, 2),
            }
            for c in report.cells
        ],
        "method": report.method,
    }


def model_labels(comparison: JudgeComparison) -> Sequence[str]:
    """The models of a judge comparison, highest mean index across judges first."""

    def mean(model: str) -> float:
        known = [v for v in comparison.index[model].values() if v is not None]
        return sum(known) / len(known) if known else float("-inf")

    return sorted(comparison.index, key=lambda m: (-mean(m), m))
