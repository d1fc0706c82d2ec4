"""Ranking under uncertainty: rank intervals from bootstrap resamples, and tie groups.

A leaderboard order is only as real as the uncertainty allows. Each bootstrap resample ranks
the models; a model's rank interval holds the central 95% of its ranks. Models whose rank
intervals overlap in a chain cannot be told apart and share one tie group ("tied 1–3").
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from math import ceil, floor

from independence_bench.stats.stats import percentile


def rank_intervals(draws: Mapping[str, Sequence[float | None]]) -> dict[str, tuple[int, int]]:
    """Each model's central 95% range of ranks (1 = highest index) over shared resamples.

    A resample where any model has no index is skipped, so all ranks come from the same draws.
    A rank is 1 + the number of models strictly above, so exact ties share the better rank.
    """
    names = sorted(draws)
    ranks: dict[str, list[float]] = {name: [] for name in names}
    for values in zip(*(draws[name] for name in names), strict=True):
        if None in values:
            continue
        ascending = sorted(values)
        for name, value in zip(names, values, strict=True):
            ranks[name].append(1.0 + len(values) - bisect_right(ascending, value))
    return {
        name: (floor(percentile(found, 0.025)), ceil(percentile(found, 0.975)))
        for name, found in ranks.items()
        if found
    }


def tie_groups(order: Sequence[str], ranks: Mapping[str, tuple[int, int]]) -> dict[str, str]:
    """Label models whose rank intervals overlap in a chain, e.g. "tied 1–3"; alone: "1".

    `order` lists the models best first (by point index). Walking it, a model joins the current
    group when its rank interval overlaps the union of the group's intervals.
    """
    groups: list[list[str]] = []
    reach = 0
    for name in order:
        low, high = ranks[name]
        if groups and low <= reach:
            groups[-1].append(name)
            reach = max(reach, high)
        else:
            groups.append([name])
            reach = high
    labels: dict[str, str] = {}
    place = 1
    for group in groups:
        last = place + len(group) - 1
        label = str(place) if len(group) == 1 else f"tied {place}–{last}"
        labels.update((name, label) for name in group)
        place = last + 1
    return labels
