"""Hierarchical bootstrap: intervals for indexes and metrics, paired differences, rank intervals.

**What the numbers estimate.** A scenario bank is a sample: the five boundary tactics or
stability topics a suite asks stand for the many it could have asked, so a model's *true*
index is its expected index over new runs *and* new scenarios of the same kinds, and its true
rank is its place among the models by true index. A stratum the suite fills with one scenario
only (v2's negotiation and name/gender conversations) is that experiment's fixed protocol, not
a sample: one scenario cannot show how another would score, so its scenario is part of what
the index measures and only its runs vary. `tests/test_bootstrap_coverage.py` simulates
benchmarks drawn exactly so and checks that the intervals cover the true values.

**How.** Each resample redraws both sources of variation:

1. *Scenarios*, within each stratum (prompt variant × delivery mode × the set of metrics a
   scenario kind yields, e.g. the three self-definition scenarios of one cell), with
   replacement. The draw is shared by every run and every model of the resample: scenarios
   are crossed with runs and models, and an easy scenario is easy for all of them, so it
   shifts every model alike and drops out of their differences and ranks. Redrawing scenarios
   per model instead would add that shared shift to every comparison and widen rank
   intervals for nothing (`benchmarks/bootstrap_coverage.py` prints by how much).
2. *Runs*, per model (or per run group, for paired subjects), with replacement.

The resampled metric is then computed exactly as the point value is (`scoring.score_model`):
mean over the drawn scenarios within each drawn run, then mean over the drawn runs; the index
follows from those means by the formula's linear form (`scoring.linear_index`). Everything is
done on arrays: a resample's scenario draw is a row of counts per scenario position, so the
per-run sums of every subject for a block of resamples are one matrix product. Intervals are
the 2.5th and 97.5th percentiles of 10,000 resamples (by default) from
`numpy.random.default_rng(seed)`. A model with fewer than two runs gets no interval: one run
cannot show how far a rerun moves its numbers. Rank intervals come from the same resamples
(`ranking.rank_intervals`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from independence_bench.scoring.scoring import (
    METRICS_OF_KIND,
    IncompleteMetrics,
    ItemMetrics,
    ModelScore,
    linear_index,
    score_model,
    score_models,
)
from independence_bench.stats.ranking import rank_intervals
from independence_bench.stats.stats import CONFIDENCE, Estimate

DEFAULT_RESAMPLES = 10_000
METHOD = (
    "hierarchical bootstrap: runs, and scenarios within each experiment and prompt cell, "
    "resampled with replacement; 95% percentile interval"
)
Floats = NDArray[np.float64]
Unit = tuple[str, str, str]
_BLOCK_CELLS = 1 << 20
"""Resamples are processed in blocks of about this many (resample × subject × run) cells."""


@dataclass(frozen=True)
class Subject:
    """One thing to bootstrap: a model, or a model restricted to some of its items."""

    name: str
    items: tuple[ItemMetrics, ...]
    run_group: str = ""
    """Subjects sharing a non-empty group draw the same runs (paired comparisons)."""


@dataclass(frozen=True, eq=False)
class Draws:
    """One subject's resampled index and metrics, one value per resample; NaN where a resample
    lacked a needed metric. Only metrics the subject has appear in `metrics`."""

    index: Floats
    metrics: Mapping[str, Floats]


@dataclass(frozen=True)
class _Layout:
    """Scenario positions: strata in order, and per metric the strata that feed it."""

    sizes: tuple[int, ...]
    """Number of scenarios in each stratum."""
    feeds: Mapping[str, tuple[int, ...]]
    """metric -> the strata whose scenarios yield it, in position order."""
    positions: Mapping[str, Mapping[Unit, int]]
    """metric -> scenario -> column in that metric's value grid."""


def _layout(subjects: Sequence[Subject]) -> _Layout:
    units_by_stratum: dict[tuple[str, str, tuple[str, ...]], set[Unit]] = defaultdict(set)
    for subject in subjects:
        for item in subject.items:
            units_by_stratum[(item.variant, item.mode, METRICS_OF_KIND[item.kind])].add(item.unit)
    keys = sorted(units_by_stratum)
    feeds: dict[str, list[int]] = defaultdict(list)
    positions: dict[str, dict[Unit, int]] = defaultdict(dict)
    for number, key in enumerate(keys):
        for metric in key[2]:
            feeds[metric].append(number)
            where = positions[metric]
            offset = len(where)
            units = sorted(units_by_stratum[key])
            where.update((unit, offset + i) for i, unit in enumerate(units))
    sizes = tuple(len(units_by_stratum[key]) for key in keys)
    return _Layout(sizes, {m: tuple(f) for m, f in feeds.items()}, positions)


def _counts(rng: np.random.Generator, n_resamples: int, size: int) -> Floats:
    """[resamples, size]: how often each of `size` things is drawn in `size` draws with
    replacement, per resample."""
    picks = rng.integers(0, size, size=(n_resamples, size))
    flat = picks + size * np.arange(n_resamples)[:, None]
    return (
        np.bincount(flat.ravel(), minlength=n_resamples * size)
        .reshape(n_resamples, size)
        .astype(np.float64)
    )


def _linear(formula: str, declined: tuple[str, ...]) -> tuple[float, dict[str, float]] | None:
    try:
        return linear_index(formula, declined)
    except IncompleteMetrics:
        return None


def _index(
    form: tuple[float, dict[str, float]] | None, metrics: Mapping[str, Floats], n: int
) -> Floats:
    """The index per resample from resampled metric means (NaN where a needed one is missing)."""
    if form is None or any(key not in metrics for key in form[1]):
        return np.full(n, np.nan)
    constant, coefficients = form
    return constant + sum(
        (weight * metrics[key] for key, weight in coefficients.items()), np.zeros(n)
    )


def _grids(
    subjects: Sequence[Subject], runs: Sequence[Sequence[int]], layout: _Layout, width: int
) -> dict[str, tuple[Floats, Floats]]:
    """Per metric, its values and their presence (1/0) as [scenario position, subject × run]
    matrices; a run a subject's group lacks is a column of zeros."""
    grids = {}
    for metric, where in layout.positions.items():
        values = np.zeros((len(where), len(subjects), width))
        present = np.zeros_like(values)
        for number, (subject, its_runs) in enumerate(zip(subjects, runs, strict=True)):
            column = {run: i for i, run in enumerate(its_runs)}
            for item in subject.items:
                if metric in item.metrics:
                    spot = (where[item.unit], number, column[item.run])
                    values[spot] = item.metrics[metric]
                    present[spot] = 1.0
        grids[metric] = (values.reshape(len(where), -1), present.reshape(len(where), -1))
    return grids


def draw_resamples(
    subjects: Sequence[Subject],
    formula: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Draws]:
    """Resample every subject together (shared scenario draws); see the module docstring."""
    layout = _layout(subjects)
    group_of = [s.run_group or f"\0{s.name}" for s in subjects]
    found_runs: dict[str, set[int]] = defaultdict(set)
    for subject, group in zip(subjects, group_of, strict=True):
        found_runs[group].update(item.run for item in subject.items)
    groups = sorted(found_runs)
    runs = {group: sorted(found_runs[group]) for group in groups}
    width = max((len(r) for r in runs.values()), default=1)
    rng = np.random.default_rng(seed)
    scenario_counts = [_counts(rng, n_resamples, size) for size in layout.sizes]
    run_counts = np.zeros((n_resamples, len(groups), width))
    for number, group in enumerate(groups):
        run_counts[:, number, : len(runs[group])] = _counts(rng, n_resamples, len(runs[group]))
    subject_group = np.array([groups.index(group) for group in group_of], dtype=np.intp)
    grids = _grids(subjects, [runs[group] for group in group_of], layout, width)

    means = {metric: np.empty((n_resamples, len(subjects))) for metric in grids}
    block = max(1, _BLOCK_CELLS // max(1, len(subjects) * width))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        weights = run_counts[start:stop][:, subject_group, :]  # [block, subject, run]
        for metric, (values, present) in grids.items():
            drawn = np.concatenate(
                [scenario_counts[s][start:stop] for s in layout.feeds[metric]], 1
            )
            counts = (drawn @ present).reshape(weights.shape)
            sums = (drawn @ values).reshape(weights.shape)
            has = counts > 0
            run_means = np.divide(sums, counts, out=np.zeros_like(sums), where=has)
            kept = weights * has  # a drawn run with none of the drawn scenarios is skipped
            total = kept.sum(axis=2)
            weighted = (kept * run_means).sum(axis=2)
            np.divide(weighted, total, out=means[metric][start:stop], where=total > 0)
            means[metric][start:stop][total == 0] = np.nan

    full = _linear(formula, ())
    fallback = _linear(formula, ("name_gender_changes",))
    result = {}
    for number, subject in enumerate(subjects):
        metrics = {
            metric: means[metric][:, number].copy()
            for metric, (_, present) in grids.items()
            if present.reshape(-1, len(subjects), width)[:, number].any()
        }
        index = _index(full, metrics, n_resamples)
        if any(item.declined for item in subject.items):
            missing = np.isnan(metrics.get("name_gender_changes", np.full(n_resamples, np.nan)))
            index = np.where(missing, _index(fallback, metrics, n_resamples), index)
        result[subject.name] = Draws(index, metrics)
    return result


def interval_of(point: float, draws: Floats) -> Estimate:
    """`point` with the percentile interval of the resamples that produced a value (not NaN)."""
    values = draws[~np.isnan(draws)]
    if not values.size:
        return Estimate(point)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Estimate(point, float(low), float(high))


@dataclass(frozen=True)
class ModelBootstrap:
    """A model's point values with intervals, its rank and rank interval."""

    model: str
    score: ModelScore
    index: Estimate | None
    """None when the model is incomplete (see `score.missing`)."""
    metrics: Mapping[str, Estimate]
    rank: int | None
    """1 + the number of complete models with a higher point index; None when incomplete."""
    rank_low: int | None
    rank_high: int | None
    why_no_interval: str | None


def _why_no_interval(score: ModelScore) -> str | None:
    if len(score.runs) < 2:
        return (
            f"{len(score.runs)} run: an interval needs at least 2 runs, because one run cannot "
            "show how far a rerun moves the score"
        )
    if not score.complete:
        return f"incomplete: no scores for {', '.join(score.missing)}"
    return None


def bootstrap_models(
    items: Sequence[ItemMetrics],
    formula: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, ModelBootstrap]:
    """Point values, intervals, ranks and rank intervals for every model in `items`.

    Only complete models with at least two runs get intervals and rank intervals; the others
    say why. A complete model with one run is still ranked by its point index, and takes part
    in every resample's ranking at that value, so all ranks count the same models.
    """
    scores = score_models(items, formula)
    by_model: dict[str, list[ItemMetrics]] = defaultdict(list)
    for item in items:
        by_model[item.model].append(item)
    subjects = [
        Subject(model, tuple(by_model[model])) for model, s in scores.items() if len(s.runs) >= 2
    ]
    draws = draw_resamples(subjects, formula, n_resamples=n_resamples, seed=seed)
    points = {name: s.index for name, s in scores.items() if s.index is not None}
    ranked = {
        name: draws[name].index if name in draws else np.full(n_resamples, point)
        for name, point in points.items()
    }
    ranks = rank_intervals(ranked)
    result = {}
    for model, score in scores.items():
        found = draws.get(model)
        metrics = {
            key: interval_of(value, found.metrics[key]) if found else Estimate(value)
            for key, value in score.metrics.items()
        }
        index = rank = None
        if score.index is not None:
            index = interval_of(score.index, found.index) if found else Estimate(score.index)
            rank = 1 + sum(other > score.index for other in points.values())
        low, high = ranks[model] if found and model in ranks else (None, None)
        result[model] = ModelBootstrap(
            model, score, index, metrics, rank, low, high, _why_no_interval(score)
        )
    return result


@dataclass(frozen=True)
class PairedComparison:
    """Index of `model_a` minus index of `model_b` on the items both answered."""

    model_a: str
    model_b: str
    difference: Estimate | None
    """None when either model is incomplete on the shared items."""
    share_a_higher: float | None
    """Share of resamples in which `model_a` scored higher."""
    n_items: int
    runs: tuple[int, ...]
    why_no_interval: str | None


def compare_paired(
    items: Sequence[ItemMetrics],
    model_a: str,
    model_b: str,
    formula: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Compare two models on items matched by (variant, mode, scenario, run).

    Both models draw the same scenarios and the same run numbers in every resample, so what
    they have in common cancels out of the difference.
    """
    if model_a == model_b:
        raise ValueError(f"compare two different models, not {model_a!r} with itself")
    keyed = {
        model: {(i.run, i.unit): i for i in items if i.model == model}
        for model in (model_a, model_b)
    }
    shared = sorted(keyed[model_a].keys() & keyed[model_b].keys())
    chosen = {model: tuple(keyed[model][key] for key in shared) for model in keyed}
    scores = {model: score_model(model, chosen[model], formula) for model in keyed}
    runs = tuple(sorted({run for run, _ in shared}))
    a, b = scores[model_a].index, scores[model_b].index
    if a is None or b is None:
        missing = sorted(set(scores[model_a].missing) | set(scores[model_b].missing))
        why = f"incomplete on shared items: no scores for {', '.join(missing) or 'any metric'}"
        return PairedComparison(model_a, model_b, None, None, len(shared), runs, why)
    if len(runs) < 2:
        why = f"{len(runs)} shared run: an interval needs at least 2 runs"
        return PairedComparison(model_a, model_b, Estimate(a - b), None, len(shared), runs, why)
    subjects = [Subject(model, chosen[model], run_group="pair") for model in (model_a, model_b)]
    draws = draw_resamples(subjects, formula, n_resamples=n_resamples, seed=seed)
    diffs = draws[model_a].index - draws[model_b].index
    known = diffs[~np.isnan(diffs)]
    share = float(np.mean(known > 0)) if known.size else None
    return PairedComparison(
        model_a, model_b, interval_of(a - b, diffs), share, len(shared), runs, None
    )
