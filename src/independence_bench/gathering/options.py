"""What the reading commands take: `AnalysisOptions`, for every store-only analysis (store,
suite, judge or panel, cell selection, and the bootstrap's `Resampling`), and `ReportScope`, for
the report and the viewer (suites, judge, bootstrap).

It imports nothing heavy, so the CLI and the workflows build them (the leaderboard's, report's
and viewer's own options extend them) before the statistics and the store's contents are
loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from independence_bench.stats.core import Resampling
from independence_bench.suites.selection import EVERYTHING, Selection


@dataclass(frozen=True)
class AnalysisOptions:
    """What every store-only analysis takes: the store, suite, judge or panel, and bootstrap."""

    data_dir: Path = Path("aib-data")
    suite_id: str | None = None
    """The suite to analyse; None: the only one in the store (`results.choose_suite`)."""
    judge: str | None = None
    """Whose scores to use; None: the judge with the most scored items (`results.choose_judge`)."""
    judges: tuple[str, ...] = ()
    """A judge panel: each item's metrics are the mean over these judges."""
    resampling: Resampling = Resampling()
    """Resamples and seed of the bootstrap (not of sampling); alpha takes only the seed."""
    selection: Selection = EVERYTHING
    """Only these experiments, variants and modes (`aib leaderboard --experiments …`)."""
    models: tuple[str, ...] = ()
    """Only these model configurations, by label or model id (`--models`); () for all."""

    @property
    def method(self) -> str:
        """The bootstrap method in words, as printed beside every interval."""
        from independence_bench.stats.bootstrap import bootstrap_method

        return bootstrap_method(self.resampling)


@dataclass(frozen=True)
class ReportScope:
    """Which suites of the store a report covers, under which judge, and its bootstrap."""

    suite_id: str | None = None
    """Default: every suite in the store, one section each."""
    judge: str | None = None
    """Default: the judge with the most scored items."""
    resampling: Resampling = Resampling()
    models: tuple[str, ...] = ()
    """Only these model configurations, by label or model id; () for all."""
