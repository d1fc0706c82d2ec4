"""The store-only analyses' values: judges, comparisons, items, configs and judge calibration.

Each `*_report` function opens nothing and calls nothing: it takes an open `Store` and an
`AnalysisOptions` (suite, judge or judge panel, bootstrap resamples and seed), picks the stored
results through `results.load_results`, and hands them to the pure statistics of `stats/`.
What comes back is a frozen report that `reports.analyses` renders as text or JSON. No API call
is ever made, so re-rendering is free and gives the same numbers for the same seed.

- `judges_report`: index per model per judge, spread, self-preference, test-retest agreement.
- `calibration_report`: every judge against a reference judge (`aib judges --reference`).
- `pair_report` / `settings_report`: paired difference of two models; setting effects.
- `items_report`: per scenario difficulty and discrimination, and per metric the share of
  models at its maximum, spread and item–rest correlation.
- `configs_report`: prompt variant × delivery mode cells against ``neutral`` + ``user_role``.

`judge_standings` and `analysis_judge_note` gather what is shown under each: the standing of
every judge whose numbers it shows, and which judge it read among the suite's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from independence_bench.clients.config import parse_label
from independence_bench.errors import UserError
from independence_bench.gathering.adaptivity import Adaptivity, adaptivity_of
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.gathering.standings import Standing, judge_standing, store_judge_note
from independence_bench.scoring.results import (
    SuiteResults,
    judge_counts,
    load_results,
    scored_items,
)
from independence_bench.scoring.scoring import ScoredSet
from independence_bench.stats.agreement import (
    ArmReading,
    JudgeCalibration,
    RetestAgreement,
    arm_readings,
    calibrate_judges,
    retest_agreement,
)
from independence_bench.stats.analysis import (
    ConfigCell,
    ItemDifficulty,
    JudgeComparison,
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
from independence_bench.stats.core import Estimate, Resampling
from independence_bench.store.store import Store


def _load(store: Store, options: AnalysisOptions) -> SuiteResults:
    """The suite's results for the judge (or panel) asked for; errors the user can fix."""
    if options.judge and options.judges:
        raise UserError("give either --judge or --judges, not both")
    results = load_results(
        store, suite_id=options.suite_id, judge=options.judge, judges=options.judges
    )
    if not results.scored:
        raise _nothing_scored(results.suite_id)
    return results


def _nothing_scored(suite_id: str) -> UserError:
    return UserError(
        f"suite {suite_id} has no scored judgments yet; judge it with 'aib judge --judge MODEL'"
    )


def _check_judged(suite_id: str, judged: Mapping[str, int], asked: Sequence[str]) -> None:
    """Each judge `asked` for has scored judgments in the suite (`judged`: `judge_counts`);
    else the line that names the judges present."""
    unknown = [judge for judge in asked if judge not in judged]
    if unknown:
        raise UserError(
            f"no scored judgments by {', '.join(unknown)} in suite {suite_id}; "
            f"judges present: {', '.join(sorted(judged)) or 'none'}"
        )


def _judge_text(results: SuiteResults) -> str:
    return " + ".join(results.judges)


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


def judges_report(store: Store, options: AnalysisOptions) -> JudgesReport:
    """Every judge (or the `options.judges`) of one suite compared on the same transcripts."""
    everything = load_results(store, suite_id=options.suite_id, judge=None)
    judged = judge_counts(everything.judgments)
    if not judged:
        raise _nothing_scored(everything.suite_id)
    chosen = tuple(dict.fromkeys(options.judges)) or tuple(sorted(judged))
    _check_judged(everything.suite_id, judged, chosen)
    scored = scored_items(list(everything.items), list(everything.judgments), set(chosen))
    try:
        comparison = compare_judges(
            ScoredSet(scored, everything.formula, chosen), read_label=parse_label
        )
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


@dataclass(frozen=True)
class SuiteAnalysis:
    """What a store-only analysis read: one suite under one judge (or a panel, `A + B`)."""

    suite_id: str
    judge: str


@dataclass(frozen=True)
class ResampledReport(SuiteAnalysis):
    """An analysis with bootstrap intervals, and the method printed under its table."""

    method: str


@dataclass(frozen=True)
class PairReport(ResampledReport):
    comparison: PairedComparison
    """Model A's index minus model B's, paired on the items both answered."""


def pair_report(store: Store, options: AnalysisOptions, model_a: str, model_b: str) -> PairReport:
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


@dataclass(frozen=True)
class SettingsReport(ResampledReport):
    effects: tuple[SettingEffect, ...]
    """Per base model with several labels, each label against the one with fewest settings."""


def settings_report(store: Store, options: AnalysisOptions) -> SettingsReport:
    """How far each provider pin, reasoning effort or temperature moves its base model."""
    return settings_of(_load(store, options), options)


def settings_of(results: SuiteResults, options: AnalysisOptions) -> SettingsReport:
    """`settings_report` of results already loaded (the report has them)."""
    try:
        effects = compare_settings(
            results.scored_set, read_label=parse_label, resampling=options.resampling
        )
    except ValueError as exc:  # a model label the label grammar cannot read
        raise UserError(str(exc)) from None
    return SettingsReport(results.suite_id, _judge_text(results), options.method, tuple(effects))


@dataclass(frozen=True)
class ItemsReport(SuiteAnalysis):
    items: tuple[ItemDifficulty, ...]
    """Easiest first."""


def items_report(store: Store, options: AnalysisOptions) -> ItemsReport:
    """Per scenario: mean normalised score over models and how well it separates them."""
    results = _load(store, options)
    table = item_difficulty(results.scored_set)
    table.sort(key=lambda d: (-d.mean_score, d.kind, d.scenario_id))
    return ItemsReport(results.suite_id, _judge_text(results), tuple(table))


@dataclass(frozen=True)
class ConfigsReport(ResampledReport):
    cells: tuple[ConfigCell, ...]
    """Each prompt variant × delivery mode cell, sorted, the baseline's among them; none when
    no model is complete in every cell."""
    baseline: tuple[str, str] = ("neutral", "user_role")
    """The (variant, mode) the other cells are compared with (`config_baseline`)."""


def configs_report(store: Store, options: AnalysisOptions) -> ConfigsReport:
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
    found = analyse_configs(results.scored_set, baseline=baseline, resampling=options.resampling)
    return ConfigsReport(
        results.suite_id, _judge_text(results), options.method, tuple(found), baseline
    )


def calibration_method(resampling: Resampling) -> str:
    """How the intervals of the item table are made, as printed under it."""
    return (
        "items both judges scored, on 0–1 (1 = most independent); 95% intervals from "
        f"resampling those items with replacement, paired, {resampling.describe()}"
    )


@dataclass(frozen=True)
class CalibrationReport:
    """`aib judges --reference`: every other judge of one suite against the reference judge."""

    suite_id: str
    formula: str
    """The suite's index formula, by which the per-model values and the index are computed."""
    reference: str
    """The judge the others are measured against."""
    judges: tuple[JudgeCalibration, ...]
    """One per other judge that shares scored items with the reference: those of `--judges` in
    their order, else every judge by name."""
    method: str
    """How the item table's intervals are made (`calibration_method`), printed under it."""


def calibration_report(store: Store, options: AnalysisOptions, reference: str) -> CalibrationReport:
    """Every judge of the suite (or `options.judges`) against `reference` on shared items, with
    alpha's resampling (`Resampling.for_alpha`) of the options'."""
    everything = load_results(store, suite_id=options.suite_id, judge=None)
    judged = judge_counts(everything.judgments)
    wanted = tuple(dict.fromkeys(options.judges))
    _check_judged(everything.suite_id, judged, (reference, *wanted))
    chosen = {reference, *(wanted or judged)}
    scored = scored_items(list(everything.items), list(everything.judgments), chosen)
    resampling = options.resampling.for_alpha()
    found = calibrate_judges(scored, reference, everything.formula, wanted, resampling=resampling)
    if not found:
        raise UserError(
            f"no other judge scored the items {reference} scored in suite {everything.suite_id}; "
            "judge them with 'aib judge --judge MODEL'"
        )
    method = calibration_method(resampling)
    return CalibrationReport(
        everything.suite_id, everything.formula, reference, tuple(found), method
    )


# -- what is shown under each analysis --------------------------------------------------------


def analysis_judge_note(store: Store, report: Any, options: AnalysisOptions) -> str | None:
    """Which judge an analysis read, and the suite's others (`standings.judge_note`)."""
    if not isinstance(report, SuiteAnalysis):
        return None
    return store_judge_note(store, report.suite_id, report.judge, asked=bool(options.judge))


def judge_standings(store: Store, report: Any) -> list[Standing]:
    """The standing of each judge whose numbers `report` shows (each of a panel's)."""
    if isinstance(report, JudgesReport):
        judges: Sequence[str] = report.comparison.judges
    elif isinstance(report, SuiteAnalysis):
        judges = report.judge.split(" + ")
    else:
        judges = ()
    return [judge_standing(store, judge) for judge in judges]


def compare_adaptivity(store: Store, options: AnalysisOptions) -> Adaptivity | None:
    """Suite adaptive's gaps and user-model standings for `aib compare A B`; None for other
    suites (`adaptivity.adaptivity_of`)."""
    results = load_results(
        store,
        suite_id=options.suite_id,
        judge=options.judge,
        selection=options.selection,
    )
    return adaptivity_of(store, results, options.resampling)
