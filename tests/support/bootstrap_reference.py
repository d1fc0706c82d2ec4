"""The pure-Python bootstrap as it was before it was vectorised (commit 33cbca5), kept as a
reference for `test_bootstrap_reference.py`.

The same algorithm as `stats/bootstrap/_draws.py`'s module docstring describes, written plainly and
consuming `random.Random(seed)` exactly as the old `draw_resamples` did: scenarios drawn per
stratum with `choices`, shared by every subject; then per run group, in sorted order, each run
drawn as `int(random() * runs)`. With ``draw=lambda n: n`` it is the old algorithm (checked
equal to the old `draw_resamples`, resample for resample, when it was written); by default it
draws `bootstrap.draw_size(n)` = n − 1 of n, the one change made since (see `draw_size`).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from statistics import fmean

from independence_bench.scoring.scoring import IncompleteMetrics, linear_index
from independence_bench.stats.bootstrap import Subject, draw_size
from independence_bench.suites.kinds import kind_named

Unit = tuple[str, str, str]


def _index(formula: str, means: dict[str, float], use_fallback: bool) -> float | None:
    try:
        constant, coefficients = linear_index(
            formula, ("name_gender_changes",) if use_fallback else ()
        )
    except IncompleteMetrics:
        return None
    if any(key not in means for key in coefficients):
        return None
    return constant + sum(weight * means[key] for key, weight in coefficients.items())


def reference_draws(
    subjects: Sequence[Subject],
    formula: str,
    *,
    n_resamples: int,
    seed: int,
    draw: Callable[[int], int] = draw_size,
) -> dict[str, tuple[list[float | None], dict[str, list[float | None]]]]:
    """Per subject: its index per resample and each of its metrics per resample."""
    units_by_stratum: dict[tuple[str, str, tuple[str, ...]], set[Unit]] = defaultdict(set)
    for subject in subjects:
        for item in subject.items:
            metrics = kind_named(item.kind).metric_keys
            units_by_stratum[(item.variant, item.mode, metrics)].add(item.unit)
    keys = sorted(units_by_stratum)
    strata = [sorted(units_by_stratum[key]) for key in keys]
    group_of = {s.name: s.run_group or f"\0{s.name}" for s in subjects}
    group_runs: dict[str, set[int]] = defaultdict(set)
    for subject in subjects:
        group_runs[group_of[subject.name]].update(item.run for item in subject.items)
    runs = {group: sorted(found) for group, found in group_runs.items()}
    values = {s.name: {(i.run, i.unit): i.metrics for i in s.items} for s in subjects}
    declined = {s.name: any(i.declined for i in s.items) for s in subjects}
    own_metrics = {s.name: sorted({m for i in s.items for m in i.metrics}) for s in subjects}
    out = {s.name: ([], {m: [] for m in own_metrics[s.name]}) for s in subjects}
    rng = random.Random(seed)
    for _ in range(n_resamples):
        draws = [rng.choices(range(len(units)), k=draw(len(units))) for units in strata]
        drawn: dict[str, list[Unit]] = defaultdict(list)
        for key, units, picks in zip(keys, strata, draws, strict=True):
            for metric in key[2]:
                drawn[metric].extend(units[i] for i in picks)
        weights = {}
        for group in sorted(runs):
            size = len(runs[group])
            counts = [0] * size
            for _ in range(draw(size)):
                counts[int(rng.random() * size)] += 1
            weights[group] = dict(zip(runs[group], counts, strict=True))
        for subject in subjects:
            index_draws, metric_draws = out[subject.name]
            means: dict[str, float] = {}
            for metric in own_metrics[subject.name]:
                total = weighted = 0.0
                for run, weight in weights[group_of[subject.name]].items():
                    found = [
                        values[subject.name][(run, unit)][metric]
                        for unit in drawn[metric]
                        if metric in values[subject.name].get((run, unit), {})
                    ]
                    if found:
                        total += weight
                        weighted += weight * fmean(found)
                value = weighted / total if total else None
                metric_draws[metric].append(value)
                if value is not None:
                    means[metric] = value
            fallback = declined[subject.name] and "name_gender_changes" not in means
            index_draws.append(_index(formula, means, fallback))
    return out
