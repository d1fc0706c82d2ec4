"""Ranking under uncertainty: each model's rank interval from bootstrap resamples.

A leaderboard order is only as real as the uncertainty allows. Each bootstrap resample ranks
the models; a model's rank interval holds the central 95% of its own ranks. It is the model's
own statement ("3, somewhere in 2–6"), never merged with its neighbours': chaining overlapping
intervals into tie groups makes a group of 87 out of intervals of width 25, since overlap is
not transitive. The one group the reports name is non-transitive by construction: models
whose rank interval includes 1, which cannot be told apart from the leader (`could_lead`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from independence_bench.stats.stats import CONFIDENCE

Floats = NDArray[np.float64]


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
