"""Hierarchical bootstrap: intervals for indexes and metrics, paired differences, rank intervals.

**What the numbers estimate.** A scenario bank is a sample: the five boundary tactics or
stability topics a suite asks stand for the many it could have asked, so a model's *true*
index is its expected index over new runs *and* new scenarios of the same kinds, and its true
rank is its place among the models by true index. A stratum the suite fills with one scenario
only (v2's negotiation and name/gender conversations) is that experiment's fixed protocol, not
a sample: one scenario cannot show how another would score, so its scenario is part of what
the index measures and only its runs vary. `tests/stats/test_bootstrap_coverage.py` simulates
benchmarks drawn exactly so and checks that the intervals cover the true values;
`benchmarks/bootstrap_coverage.py` printed 95.7% for index intervals and 99.9% for rank
intervals over 1,000 simulated benchmarks of ten models.

**How.** Each resample redraws both sources of variation:

1. *Scenarios*, within each stratum (prompt variant × delivery mode × the set of metrics a
   scenario kind yields, e.g. the three self-definition scenarios of one cell), with
   replacement, n − 1 of the stratum's n (`draw_size`: drawing n understates the variance of
   a mean of n by (n − 1)/n, and covered only about 92%). The draw is shared by every run
   and every model of the resample: scenarios are crossed with runs and models, and an easy
   scenario is easy for all of them, so it shifts every model alike and drops out of their
   differences and ranks. Redrawing scenarios per model instead would add that shared shift
   to every comparison and widen rank intervals for nothing (in the simulation, 3.1 places
   wide on average instead of 2.5).
2. *Runs*, per model (or per run group, for paired subjects), with replacement, R − 1 of R.

The resampled metric is then computed exactly as the point value is (`scoring.score_model`):
mean over the drawn scenarios within each drawn run, then mean over the drawn runs; the index
follows from those means by the formula's linear form (`scoring.linear_index`). Everything is
done on arrays: a resample's scenario draw is a row of counts per scenario position, so the
per-run sums of every subject for a block of resamples are one matrix product. Intervals are
the 2.5th and 97.5th percentiles of 10,000 resamples (by default) from
`numpy.random.default_rng(seed)`. A model with fewer than two runs gets no interval: one run
cannot show how far a rerun moves its numbers. `_intervals.bootstrap_models` and
`_intervals.compare_paired` turn the resamples into the leaderboard's intervals, ranks and rank
intervals (`rank_intervals`) and paired differences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from independence_bench.scoring.scoring import (
    IncompleteMetrics,
    ItemMetrics,
    linear_index,
)
from independence_bench.stats.core import CONFIDENCE, Estimate, Resampling

METHOD = (
    "hierarchical bootstrap: runs, and scenarios within each experiment and prompt cell, "
    "resampled with replacement (n − 1 of n); 95% percentile interval"
)
Floats = NDArray[np.float64]
Unit = tuple[str, str, str]
_TAILS = ((1.0 - CONFIDENCE) / 2.0, (1.0 + CONFIDENCE) / 2.0)
_BLOCK_CELLS = 1 << 16
"""Resamples are processed in blocks of about this many (resample × subject × run) cells: small
enough that the intermediate arrays stay in the CPU cache (a 16x larger block ran 2–4x slower)."""


def bootstrap_method(resampling: Resampling) -> str:
    """`METHOD` and the resampling that made the intervals, as printed beside them."""
    return f"{METHOD}; {resampling.describe()}"


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
            metrics = item.kind_metric_keys
            units_by_stratum[(item.variant, item.mode, metrics)].add(item.unit)
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


def draw_size(size: int) -> int:
    """How many of `size` scenarios (or runs) a resample draws: one fewer, but at least one.

    The mean of n values drawn with replacement from n varies by (n − 1)/n of the sample
    variance over n — a third too little for three scenarios, a fifth for five. Drawing n − 1
    makes it exactly the unbiased s²/n, and is what brings the intervals' coverage up to 95%
    in `tests/stats/test_bootstrap_coverage.py` (drawing n covered about 92%).
    """
    return max(1, size - 1)


def _counts(rng: np.random.Generator, n_resamples: int, size: int) -> Floats:
    """[resamples, size]: how often each of `size` things is drawn in `draw_size(size)` draws
    with replacement, per resample."""
    picks = rng.integers(0, size, size=(n_resamples, draw_size(size)))
    flat = picks + size * np.arange(n_resamples)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * size)
    return counts.reshape(n_resamples, size).astype(np.float64)


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


@dataclass(frozen=True, eq=False)
class _Grid:
    """One metric's values as [scenario position, subject, run] (zeros where missing), split
    by subject: `whole` have a value at every position in every run of their group, so a
    run's resampled mean is its drawn sum over the fixed number of draws; `partial` miss some
    and need per-run counts; the rest never have the metric."""

    values: Floats
    present: Floats
    whole: NDArray[np.intp]
    partial: NDArray[np.intp]


def _grids(
    subjects: Sequence[Subject], runs: Sequence[Sequence[int]], layout: _Layout, width: int
) -> dict[str, _Grid]:
    grids = {}
    for metric, where in layout.positions.items():
        values = np.zeros((len(where), len(subjects), width))
        present = np.zeros_like(values)
        whole, partial = [], []
        for number, (subject, its_runs) in enumerate(zip(subjects, runs, strict=True)):
            column = {run: i for i, run in enumerate(its_runs)}
            for item in subject.items:
                if metric in item.metrics:
                    spot = (where[item.unit], number, column[item.run])
                    values[spot] = item.metrics[metric]
                    present[spot] = 1.0
            if present[:, number, : len(its_runs)].all():
                whole.append(number)
            elif present[:, number].any():
                partial.append(number)
        grids[metric] = _Grid(values, present, np.array(whole, np.intp), np.array(partial, np.intp))
    return grids


def _whole_means(grid: _Grid, drawn: Floats, weights: Floats, run_total: Floats) -> Floats:
    """[block, whole subjects]: every run has every drawn scenario, so the mean over drawn
    runs of per-run means is Σ runs (weight × drawn sum) / (draws × runs)."""
    values = grid.values[:, grid.whole].reshape(len(drawn.T), -1)
    sums = (drawn @ values).reshape(len(drawn), len(grid.whole), -1)
    own = weights if len(grid.whole) == weights.shape[1] else weights[:, grid.whole]
    weighted = np.einsum("bsr,bsr->bs", sums, own)
    result: Floats = weighted / (drawn.sum(axis=1)[:, None] * run_total[grid.whole])
    return result


def _partial_means(grid: _Grid, drawn: Floats, weights: Floats) -> Floats:
    """[block, partial subjects]: per run, the mean over the drawn scenarios it has; a drawn
    run with none of them is skipped, and a resample with no such run gives NaN."""
    shape = (len(drawn), len(grid.partial), -1)
    sums = (drawn @ grid.values[:, grid.partial].reshape(len(drawn.T), -1)).reshape(shape)
    counts = (drawn @ grid.present[:, grid.partial].reshape(len(drawn.T), -1)).reshape(shape)
    has = counts > 0
    run_means = np.divide(sums, counts, out=np.zeros_like(sums), where=has)
    kept = weights[:, grid.partial] * has
    total = kept.sum(axis=2)
    weighted = (kept * run_means).sum(axis=2)
    result: Floats = np.full(total.shape, np.nan)
    np.divide(weighted, total, out=result, where=total > 0)
    return result


def draw_resamples(
    subjects: Sequence[Subject], formula: str, *, resampling: Resampling = Resampling()
) -> dict[str, Draws]:
    """Resample every subject together (shared scenario draws); see the module docstring."""
    n_resamples = resampling.n_resamples
    layout = _layout(subjects)
    group_of = [s.run_group or f"\0{s.name}" for s in subjects]
    found_runs: dict[str, set[int]] = defaultdict(set)
    for subject, group in zip(subjects, group_of, strict=True):
        found_runs[group].update(item.run for item in subject.items)
    groups = sorted(found_runs)
    runs = {group: sorted(found_runs[group]) for group in groups}
    width = max((len(r) for r in runs.values()), default=1)
    rng = np.random.default_rng(resampling.seed)
    scenario_counts = [_counts(rng, n_resamples, size) for size in layout.sizes]
    run_counts = np.zeros((n_resamples, len(groups), width))
    for number, group in enumerate(groups):
        run_counts[:, number, : len(runs[group])] = _counts(rng, n_resamples, len(runs[group]))
    subject_group = np.array([groups.index(group) for group in group_of], dtype=np.intp)
    run_total = np.array([draw_size(len(runs[group])) for group in group_of], dtype=np.float64)
    grids = _grids(subjects, [runs[group] for group in group_of], layout, width)

    # subject-major, so that each subject's draws are one contiguous row
    means = {metric: np.empty((len(subjects), n_resamples)) for metric in grids}
    block = max(1, _BLOCK_CELLS // max(1, len(subjects) * width))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        weights = run_counts[start:stop][:, subject_group, :]  # [block, subject, run]
        for metric, grid in grids.items():
            drawn = np.concatenate(
                [scenario_counts[s][start:stop] for s in layout.feeds[metric]], 1
            )
            if len(grid.whole):
                found = _whole_means(grid, drawn, weights, run_total)
                means[metric][grid.whole, start:stop] = found.T
            if len(grid.partial):
                means[metric][grid.partial, start:stop] = _partial_means(grid, drawn, weights).T

    full = _linear(formula, ())
    fallback = _linear(formula, ("name_gender_changes",))
    result = {}
    for number, subject in enumerate(subjects):
        metrics = {
            metric: means[metric][number]
            for metric, grid in grids.items()
            if number in grid.whole or number in grid.partial
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
    low, high = np.quantile(values, _TAILS)
    return Estimate(point, float(low), float(high))


def intervals_of(
    points: Mapping[tuple[str, str], float], draws: Mapping[tuple[str, str], Floats]
) -> dict[tuple[str, str], Estimate]:
    """`interval_of` for many values at once (one quantile call over every column without a
    missing resample), keyed like `points`; a key without draws gets no interval."""
    keys = [key for key in points if key in draws]
    stacked = np.vstack([draws[key] for key in keys]) if keys else np.zeros((0, 0))
    gaps = np.asarray(np.isnan(stacked).any(axis=1), dtype=np.bool_)
    whole = [key for key, gap in zip(keys, gaps, strict=True) if not gap]
    chosen = stacked[~gaps] if gaps.any() else stacked  # a copy either way: ours to reorder
    bounds = (
        np.quantile(chosen, _TAILS, axis=1, overwrite_input=True) if whole else np.zeros((2, 0))
    )
    found = {
        key: Estimate(points[key], float(low), float(high))
        for key, low, high in zip(whole, bounds[0], bounds[1], strict=True)
    }
    return {
        key: found.get(key) or (interval_of(value, draws[key]) if key in draws else Estimate(value))
        for key, value in points.items()
    }
