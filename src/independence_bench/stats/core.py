"""Statistics with no opinion about the benchmark: estimates, percentiles, correlation, and
how a bootstrap draws.

Everything here is a pure function, and nothing heavy is imported, so the CLI and the options
classes build a `Resampling` before numpy is loaded. Agreement between judgments
(Krippendorff's alpha, Spearman's rho, test-retest) lives in `agreement.py`.

- `percentile`: linear interpolation between order statistics (numpy's default method).
- `pearson`: Pearson correlation, None where it is undefined.
- `Resampling`: the number of resamples and the seed they come from. Every interval in the
  package comes from resampling with replacement from a seeded generator, so the same input
  always gives the same numbers. The two settings travel together as one frozen value, from
  the CLI's `--resamples` and `--seed` to the function that draws, and `Resampling.describe`
  writes them the one way every method text shows them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

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
    # fsum / n is `statistics.fmean`, without importing `statistics` (and `random`, `decimal`,
    # `fractions`) into `aib --help`, which reads `DEFAULT_RESAMPLES` from this module.
    mean_x, mean_y = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


# -- how a bootstrap draws --------------------------------------------------------------------

DEFAULT_RESAMPLES = 10_000
ALPHA_RESAMPLES = 1_000
"""Resamples of every alpha interval, whatever `--resamples` says (the seed is the user's)."""


@dataclass(frozen=True)
class Resampling:
    """How many resamples a bootstrap draws, and the seed of its random generator."""

    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_resamples < 1:
            raise ValueError(f"a bootstrap needs at least 1 resample, not {self.n_resamples}")

    def for_alpha(self) -> Resampling:
        """How an alpha interval is drawn under these settings: `ALPHA_RESAMPLES` resamples,
        whatever `n_resamples` says, from the same seed."""
        return Resampling(ALPHA_RESAMPLES, self.seed)

    def describe(self) -> str:
        """The settings in words, as every method text ends: `10,000 resamples, seed 0`."""
        return f"{self.n_resamples:,} resamples, seed {self.seed}"
