"""Statistics with no opinion about the benchmark: estimates, percentiles, correlation.

Everything here is a pure function. Agreement between judgments (Krippendorff's alpha,
Spearman's rho, test-retest) lives in `agreement.py`.

- `percentile`: linear interpolation between order statistics (numpy's default method).
- `pearson`: Pearson correlation, None where it is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

CONFIDENCE = 0.95


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
