"""How a bootstrap draws: `Resampling`, the number of resamples and the seed they come from.

Every interval in the package comes from resampling with replacement from a seeded generator,
so the same input always gives the same numbers. The two settings travel together as one
frozen value, from the CLI's `--resamples` and `--seed` to the function that draws, and
`Resampling.describe` writes them the one way every method text shows them. Nothing heavy is
imported, so the CLI and the options classes build one before numpy is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

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
