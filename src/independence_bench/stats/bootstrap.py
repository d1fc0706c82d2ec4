"""Hierarchical bootstrap: intervals for indexes and metrics, paired differences, rank intervals.

A model's index depends on which runs happened and which scenarios the suite happens to ask,
so each resample redraws both:

1. *Scenarios*, within each stratum (prompt variant × delivery mode × the set of metrics a
   scenario kind yields, e.g. the three self-definition scenarios of one cell), with
   replacement. The draw is shared by every run and every model of the resample: scenarios
   are crossed with runs and models, and an easy scenario is easy for all of them. Redrawing
   scenarios per run instead would shrink scenario variance by the number of runs.
2. *Runs*, per model, with replacement.

The resampled metric is then computed exactly as the point value is (`scoring.score_model`):
mean over the drawn scenarios within each drawn run, then mean over the drawn runs; the index
follows from those means. Intervals are the 2.5th and 97.5th percentiles of 10,000 resamples
(by default) from `random.Random(seed)`. A model with fewer than two runs gets no interval: one
run cannot show how far a rerun moves its numbers. Rank intervals come from the same resamples:
each resample ranks the models, and a model's rank interval holds the central 95% of its ranks.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, mul

from independence_bench.scoring.scoring import (
    IncompleteMetrics,
    ItemMetrics,
    ModelScore,
    linear_index,
    score_model,
    score_models,
)
from independence_bench.stats.ranking import rank_intervals, tie_groups
from independence_bench.stats.stats import Estimate, percentile_interval
from independence_bench.suites.kinds import kind_named

DEFAULT_RESAMPLES = 10_000
METHOD = (
    "hierarchical bootstrap: runs, and scenarios within each experiment and prompt cell, "
    "resampled with replacement; 95% percentile interval"
)
Unit = tuple[str, str, str]
_CACHE_LIMIT = 512  # distinct scenario draws remembered per model and metric


@dataclass(frozen=True)
class Subject:
    """One thing to bootstrap: a model, or a model restricted to some of its items."""

    name: str
    items: tuple[ItemMetrics, ...]
    run_group: str = ""
    """Subjects sharing a non-empty group draw the same runs (paired comparisons)."""


@dataclass(frozen=True)
class Draws:
    """One subject's resampled index and metrics; None where a resample lacked a metric."""

    index: tuple[float | None, ...]
    metrics: Mapping[str, tuple[float | None, ...]]


@dataclass(frozen=True)
class _Layout:
    """Where every scenario sits: strata, and for each metric the positions that feed it."""

    strata: tuple[tuple[Unit, ...], ...]
    feeds: Mapping[str, tuple[tuple[int, int], ...]]
    """metric -> (stratum number, offset of that stratum in the metric's position list)."""
    positions: Mapping[str, Mapping[Unit, int]]


def _layout(subjects: Sequence[Subject]) -> _Layout:
    units_by_stratum: dict[tuple[str, str, tuple[str, ...]], set[Unit]] = defaultdict(set)
    for subject in subjects:
        for item in subject.items:
            metrics = kind_named(item.kind).metric_keys
            units_by_stratum[(item.variant, item.mode, metrics)].add(item.unit)
    keys = sorted(units_by_stratum)
    strata = tuple(tuple(sorted(units_by_stratum[key])) for key in keys)
    feeds: dict[str, list[tuple[int, int]]] = defaultdict(list)
    positions: dict[str, dict[Unit, int]] = defaultdict(dict)
    for number, (key, units) in enumerate(zip(keys, strata, strict=True)):
        for metric in key[2]:
            offset = len(positions[metric])
            feeds[metric].append((number, offset))
            positions[metric].update((unit, offset + i) for i, unit in enumerate(units))
    return _Layout(strata, {k: tuple(v) for k, v in feeds.items()}, positions)


_RunRow = tuple[list[float], list[float] | None] | None
"""One run's values of a metric by scenario position (0.0 where missing), and which are
present (None when all are); None when the run has no value for the metric at all."""


class _Prepared:
    """A subject's values per metric and run, laid out for fast resampling.

    `cache` keeps the per-run means for each distinct draw of a metric's scenarios: in a
    five-scenario stratum there are only 126 distinct draws, so most resamples reuse one.
    """

    def __init__(self, subject: Subject, runs: Sequence[int], layout: _Layout) -> None:
        self.has_declined = any(item.declined for item in subject.items)
        self.table: dict[str, list[_RunRow]] = {}
        self.cache: dict[str, dict[tuple[int, ...], tuple[list[float], list[int]]]] = {}
        run_position = {run: i for i, run in enumerate(runs)}
        for metric, where in layout.positions.items():
            grid: list[list[float | None]] = [[None] * len(where) for _ in runs]
            for item in subject.items:
                if metric in item.metrics:
                    grid[run_position[item.run]][where[item.unit]] = item.metrics[metric]
            rows: list[_RunRow] = []
            for row in grid:
                values = [0.0 if v is None else v for v in row]
                if all(v is None for v in row):
                    rows.append(None)
                elif all(v is not None for v in row):
                    rows.append((values, None))
                else:
                    rows.append((values, [0.0 if v is None else 1.0 for v in row]))
            if any(rows):
                self.table[metric] = rows
                self.cache[metric] = {}

    def run_means(self, metric: str, drawn: tuple[int, ...]) -> tuple[list[float], list[int]]:
        """Per run, the metric's mean over the drawn scenario positions, and the runs that had
        none of them (their mean reads 0.0 and must be skipped). Callers look in `cache` first."""
        means: list[float] = []
        empty: list[int] = []
        pick = _picker(drawn)
        for position, row in enumerate(self.table[metric]):
            count = 0.0
            if row is not None:
                values, present = row
                count = len(drawn) if present is None else sum(pick(present))
            if count:
                means.append(sum(pick(values)) / count)
            else:
                means.append(0.0)
                empty.append(position)
        if len(self.cache[metric]) < _CACHE_LIMIT:
            self.cache[metric][drawn] = (means, empty)
        return means, empty


def _picker(positions: tuple[int, ...]) -> Callable[[Sequence[float]], tuple[float, ...]]:
    """A fast getter of the values at `positions` (itemgetter, kept tuple-valued for one)."""
    if len(positions) == 1:
        (only,) = positions
        return lambda values: (values[only],)
    return itemgetter(*positions)


def _mean_over_runs(means: list[float], empty: list[int], weights: list[int]) -> float | None:
    """Mean over the drawn runs (`weights` = how often each run was drawn), skipping empty runs."""
    kept = list(weights)
    for position in empty:
        kept[position] = 0
    total = sum(kept)
    return sum(map(mul, kept, means)) / total if total else None


_Form = tuple[float, tuple[str, ...], tuple[float, ...]] | None


def _linear_or_none(formula: str, declined: tuple[str, ...]) -> _Form:
    try:
        constant, coefficients = linear_index(formula, declined)
    except IncompleteMetrics:
        return None
    return constant, tuple(coefficients), tuple(coefficients.values())


def _evaluate(form: _Form, means: Mapping[str, float]) -> float | None:
    """The index from resampled metric means; None when a needed metric is missing."""
    if form is None:
        return None
    constant, keys, coefficients = form
    try:
        weighted: float = sum(map(mul, coefficients, map(means.__getitem__, keys)))
    except KeyError:
        return None
    return constant + weighted


def draw_resamples(
    subjects: Sequence[Subject],
    formula: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Draws]:
    """Resample every subject together (shared scenario draws); see the module docstring."""
    layout = _layout(subjects)
    group_of = {s.name: s.run_group or f"\0{s.name}" for s in subjects}
    group_runs: dict[str, set[int]] = defaultdict(set)
    for subject in subjects:
        group_runs[group_of[subject.name]].update(item.run for item in subject.items)
    runs = {group: sorted(found) for group, found in group_runs.items()}
    prepared = {s.name: _Prepared(s, runs[group_of[s.name]], layout) for s in subjects}
    full_form = _linear_or_none(formula, ())
    fallback_form = _linear_or_none(formula, ("name_gender_changes",))
    index: dict[str, list[float | None]] = {s.name: [] for s in subjects}
    metrics: dict[str, dict[str, list[float | None]]] = {
        s.name: {m: [] for m in prepared[s.name].table} for s in subjects
    }
    columns = {
        name: [(m, prepared[name].cache[m], column.append) for m, column in by_metric.items()]
        for name, by_metric in metrics.items()
    }
    rng = random.Random(seed)
    uniform = rng.random
    for _ in range(n_resamples):
        scenario_draws = [rng.choices(range(len(units)), k=len(units)) for units in layout.strata]
        drawn = {
            metric: tuple(sorted(offset + i for s, offset in feed for i in scenario_draws[s]))
            for metric, feed in layout.feeds.items()
        }
        weights: dict[str, list[int]] = {}
        for group in sorted(runs):
            size = len(runs[group])
            counts = [0] * size
            for _ in range(size):
                counts[int(uniform() * size)] += 1
            weights[group] = counts
        for name, values in prepared.items():
            run_weights = weights[group_of[name]]
            means: dict[str, float] = {}
            for metric, cache, append in columns[name]:
                key = drawn[metric]
                per_run, empty = cache.get(key) or values.run_means(metric, key)
                if empty:
                    value = _mean_over_runs(per_run, empty, run_weights)
                else:
                    value = sum(map(mul, run_weights, per_run)) / len(per_run)
                append(value)
                if value is not None:
                    means[metric] = value
            form = full_form
            if values.has_declined and "name_gender_changes" not in means:
                form = fallback_form
            index[name].append(_evaluate(form, means))
    return {
        name: Draws(tuple(index[name]), {m: tuple(v) for m, v in metrics[name].items()})
        for name in prepared
    }


def interval_of(point: float, draws: Iterable[float | None]) -> Estimate:
    """`point` with the percentile interval of the resamples that produced a value."""
    values = [d for d in draws if d is not None]
    if not values:
        return Estimate(point)
    low, high = percentile_interval(values)
    return Estimate(point, low, high)


@dataclass(frozen=True)
class ModelBootstrap:
    """A model's point values with intervals, its rank interval and tie group."""

    model: str
    score: ModelScore
    index: Estimate | None
    """None when the model is incomplete (see `score.missing`)."""
    metrics: Mapping[str, Estimate]
    rank_low: int | None
    rank_high: int | None
    tie_group: str
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
    """Point values, intervals, rank intervals and tie groups for every model in `items`.

    Only complete models with at least two runs get intervals and ranks; the others say why.
    """
    scores = score_models(items, formula)
    by_model: dict[str, list[ItemMetrics]] = defaultdict(list)
    for item in items:
        by_model[item.model].append(item)
    subjects = [
        Subject(model, tuple(by_model[model])) for model, s in scores.items() if len(s.runs) >= 2
    ]
    draws = draw_resamples(subjects, formula, n_resamples=n_resamples, seed=seed)
    ranked = {name: d.index for name, d in draws.items() if scores[name].index is not None}
    ranks = rank_intervals(ranked)
    order = sorted(ranks, key=lambda name: (-(scores[name].index or 0.0), name))
    groups = tie_groups(order, ranks)
    result = {}
    for model, score in scores.items():
        found = draws.get(model)
        metrics = {
            key: interval_of(value, found.metrics[key]) if found else Estimate(value)
            for key, value in score.metrics.items()
        }
        index = None
        if score.index is not None:
            index = interval_of(score.index, found.index) if found else Estimate(score.index)
        rank = ranks.get(model)
        result[model] = ModelBootstrap(
            model=model,
            score=score,
            index=index,
            metrics=metrics,
            rank_low=rank[0] if rank else None,
            rank_high=rank[1] if rank else None,
            tie_group=groups.get(model, ""),
            why_no_interval=_why_no_interval(score),
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
    diffs = [
        x - y
        for x, y in zip(draws[model_a].index, draws[model_b].index, strict=True)
        if x is not None and y is not None
    ]
    share = sum(d > 0 for d in diffs) / len(diffs) if diffs else None
    return PairedComparison(
        model_a, model_b, interval_of(a - b, diffs), share, len(shared), runs, None
    )
