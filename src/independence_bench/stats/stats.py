"""Statistics with no opinion about the benchmark: estimates, percentiles, agreement, correlation.

Everything here is a pure function; anything random takes a seed and uses its own
`random.Random`, so the same input always gives the same numbers.

- `percentile`: linear interpolation between order statistics (numpy's default method).
- `krippendorff_alpha`: Krippendorff's alpha for reliability data with missing values, with the
  interval (squared difference) or nominal (match / no match) metric. `alpha_estimate` adds a
  95% interval from resampling units (the judged items) with replacement.
- `retest_agreement`: a judge that judged the same items twice, compared with itself, per metric.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean
from typing import Literal

from independence_bench.scoring.scoring import ScoredItem, item_metrics, normalised_metrics

AlphaMetric = Literal["interval", "nominal"]
CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
ALPHA_RESAMPLES = 1_000


@dataclass(frozen=True)
class Estimate:
    """A point value and its 95% interval; `low`/`high` are None when there is no interval."""

    value: float
    low: float | None = None
    high: float | None = None


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) of `values`, interpolating linearly between order statistics."""
    if not values:
        raise ValueError("percentile of no values")
    return _quantile(sorted(values), q)


def percentile_interval(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The central `confidence` percentile interval, e.g. the 2.5th and 97.5th percentiles."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    tail = (1.0 - confidence) / 2.0
    return _quantile(ordered, tail), _quantile(ordered, 1.0 - tail)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson correlation; None for fewer than 3 pairs or when either side does not vary."""
    if len(xs) != len(ys):
        raise ValueError("pearson needs two sequences of the same length")
    if len(xs) < 3:
        return None
    mean_x, mean_y = fmean(xs), fmean(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


@dataclass(frozen=True)
class _UnitStats:
    """What one unit adds to alpha: its pairable values and its within-unit disagreement."""

    n: int
    observed: float
    """Sum of δ² over ordered pairs of values in the unit, divided by (n − 1)."""
    total: float
    total_sq: float
    categories: Counter[float]


def _unit_stats(values: Iterable[float | None], metric: AlphaMetric) -> _UnitStats | None:
    present = [v for v in values if v is not None]
    n = len(present)
    if n < 2:
        return None  # a value nobody else coded is not pairable
    total, total_sq = sum(present), sum(v * v for v in present)
    categories = Counter(present)
    if metric == "interval":
        pairs = 2.0 * (n * total_sq - total * total)
    else:
        pairs = float(n * n - sum(c * c for c in categories.values()))
    return _UnitStats(n, pairs / (n - 1), total, total_sq, categories)


def _alpha_from(stats: Sequence[_UnitStats], metric: AlphaMetric) -> float | None:
    n = sum(s.n for s in stats)
    if n < 2:
        return None
    if metric == "interval":
        total = sum(s.total for s in stats)
        expected_pairs = 2.0 * (n * sum(s.total_sq for s in stats) - total * total)
    else:
        categories: Counter[float] = Counter()
        for s in stats:
            categories.update(s.categories)
        expected_pairs = float(n * n - sum(c * c for c in categories.values()))
    if expected_pairs <= 1e-12:
        return None  # no variation at all: agreement is undefined, not perfect
    return 1.0 - (n - 1) * sum(s.observed for s in stats) / expected_pairs


def krippendorff_alpha(
    units: Iterable[Sequence[float | None]], metric: AlphaMetric = "interval"
) -> float | None:
    """Krippendorff's alpha = 1 − observed / expected disagreement.

    `units` holds one row per judged unit with one value per coder (judge), None when that coder
    gave no value. Units with fewer than two values are not pairable and are ignored. Returns
    None when no pairable values vary (alpha is undefined).
    """
    stats = [s for s in (_unit_stats(row, metric) for row in units) if s is not None]
    return _alpha_from(stats, metric)


def alpha_estimate(
    units: Iterable[Sequence[float | None]],
    metric: AlphaMetric = "interval",
    *,
    n_resamples: int = ALPHA_RESAMPLES,
    seed: int = 0,
) -> Estimate | None:
    """Alpha with a 95% percentile interval from resampling pairable units with replacement."""
    stats = [s for s in (_unit_stats(row, metric) for row in units) if s is not None]
    value = _alpha_from(stats, metric)
    if value is None:
        return None
    rng = random.Random(seed)
    draws = [_alpha_from(rng.choices(stats, k=len(stats)), metric) for _ in range(n_resamples)]
    defined = [d for d in draws if d is not None]
    if len(stats) < 2 or not defined:
        return Estimate(value)
    low, high = percentile_interval(defined)
    return Estimate(value, low, high)


@dataclass(frozen=True)
class RetestAgreement:
    """How well a judge agrees with itself on items it judged more than once, for one metric."""

    judge: str
    metric: str
    n_items: int
    alpha: Estimate | None
    """Interval alpha over normalised (0–1) values; None when undefined (no variation)."""
    mean_abs_diff: float
    """Mean absolute difference between judgments of one item, as a share of the metric's range
    (0.05 = half a point on a 0–10 scale)."""


def retest_agreement(
    items: Iterable[ScoredItem], *, n_resamples: int = ALPHA_RESAMPLES, seed: int = 0
) -> list[RetestAgreement]:
    """Test-retest agreement per judge and metric over items judged more than once.

    An item is one conversation (model, run, variant, mode, scenario); its judgments by the same
    judge are told apart by `repeat`. Values are normalised to 0–1 so that resistance from v1
    (0–2) and boundary (0–10) items can be pooled.
    """
    judgments: dict[tuple[str, ...], dict[int, dict[str, float]]] = defaultdict(dict)
    for item in items:
        key: tuple[str, ...] = (
            item.judge,
            item.model,
            str(item.run),
            item.variant,
            item.mode,
            item.scenario_id,
        )
        judgments[key][item.repeat] = normalised_metrics(item.kind, item_metrics(item))
    rows: dict[tuple[str, str], list[list[float | None]]] = defaultdict(list)
    for key, by_repeat in judgments.items():
        if len(by_repeat) < 2:
            continue
        repeats = [by_repeat[r] for r in sorted(by_repeat)]
        for metric in sorted({m for judged in repeats for m in judged}):
            rows[(key[0], metric)].append([judged.get(metric) for judged in repeats])
    result = []
    for (judge, metric), units in sorted(rows.items()):
        diffs = [
            fmean(abs(a - b) for a, b in combinations([v for v in row if v is not None], 2))
            for row in units
            if sum(v is not None for v in row) >= 2
        ]
        if not diffs:
            continue  # e.g. a name/gender item declined in all but one judgment
        result.append(
            RetestAgreement(
                judge=judge,
                metric=metric,
                n_items=len(diffs),
                alpha=alpha_estimate(units, n_resamples=n_resamples, seed=seed),
                mean_abs_diff=fmean(diffs),
            )
        )
    return result
