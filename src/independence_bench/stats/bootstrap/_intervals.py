"""Model-level intervals from the shared bootstrap (`_draws.draw_resamples`), and ranking
under uncertainty.

`bootstrap_models` gives every model of a leaderboard its index and metric intervals, its rank
by point index and its own rank interval, all from one set of resamples in which every model
draws the same scenarios; `compare_paired` gives the index difference of two models drawn on
the same scenarios and run numbers.

**Ranks.** A leaderboard order is only as real as the uncertainty allows. Each bootstrap
resample ranks the models; a model's rank interval holds the central 95% of its own ranks. It
is the model's own statement ("3, somewhere in 2–6"), never merged with its neighbours':
chaining overlapping intervals into tie groups makes a group of 87 out of intervals of width
25, since overlap is not transitive. The one group the reports name is non-transitive by
construction: models whose rank interval includes 1, which cannot be told apart from the
leader (`could_lead`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from independence_bench.scoring.scoring import ItemMetrics, ModelScore, score_model, score_models
from independence_bench.stats.bootstrap._draws import (
    Floats,
    Subject,
    draw_resamples,
    interval_of,
    intervals_of,
)
from independence_bench.stats.core import CONFIDENCE, Estimate, Resampling


def resample_ranks(values: Floats) -> NDArray[np.int64]:
    """Per row (resample) of `values` [resamples, models], each model's rank: 1 + the number
    of models strictly higher, so exact ties share the better rank."""
    order = np.argsort(-values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    place = np.arange(values.shape[1])
    starts = np.where(
        np.concatenate([np.ones((len(values), 1), bool), ordered[:, 1:] != ordered[:, :-1]], 1),
        place,
        0,
    )
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.maximum.accumulate(starts, axis=1) + 1, axis=1)
    return ranks


def rank_intervals(draws: Mapping[str, Floats]) -> dict[str, tuple[int, int]]:
    """Each model's central 95% range of ranks (1 = highest index) over shared resamples.

    A resample where any model has no index (NaN) is skipped, so all ranks come from the same
    draws. Models are ranked among those in `draws`.
    """
    names = sorted(draws)
    if not names:
        return {}
    values = np.column_stack([draws[name] for name in names])
    values = values[~np.isnan(values).any(axis=1)]
    if not len(values):
        return {}
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(resample_ranks(values), [tail, 1.0 - tail], axis=0)
    return {name: (math.floor(low[i]), math.ceil(high[i])) for i, name in enumerate(names)}


def could_lead(rank_low: int | None) -> bool:
    """True when a model's rank interval includes 1: it cannot be told apart from the leader."""
    return rank_low == 1


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
    items: Sequence[ItemMetrics], formula: str, *, resampling: Resampling = Resampling()
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
    draws = draw_resamples(subjects, formula, resampling=resampling)
    indexes = {name: s.index for name, s in scores.items() if s.index is not None}
    ranked = {
        name: draws[name].index if name in draws else np.full(resampling.n_resamples, point)
        for name, point in indexes.items()
    }
    ranks = rank_intervals(ranked)
    points: dict[tuple[str, str], float] = {
        (model, key): value for model, s in scores.items() for key, value in s.metrics.items()
    }
    points.update(((model, ""), s.index) for model, s in scores.items() if s.index is not None)
    resampled = {
        (name, key): d for name, found in draws.items() for key, d in found.metrics.items()
    }
    resampled.update(((name, ""), found.index) for name, found in draws.items())
    estimates = intervals_of(points, resampled)
    result = {}
    for model, score in scores.items():
        metrics = {key: estimates[(model, key)] for key in score.metrics}
        index = estimates.get((model, ""))
        rank = None
        if score.index is not None:
            rank = 1 + sum(other > score.index for other in indexes.values())
        low, high = ranks[model] if model in draws and model in ranks else (None, None)
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
    resampling: Resampling = Resampling(),
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
    draws = draw_resamples(subjects, formula, resampling=resampling)
    diffs = draws[model_a].index - draws[model_b].index
    known = diffs[~np.isnan(diffs)]
    share = float(np.mean(known > 0)) if known.size else None
    return PairedComparison(
        model_a, model_b, interval_of(a - b, diffs), share, len(shared), runs, None
    )
