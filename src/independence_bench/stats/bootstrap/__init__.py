"""The hierarchical bootstrap: resamples of scenarios and runs (`_draws`), and the intervals,
paired differences and rank intervals read from them (`_intervals`).

`draw_resamples` is the one resampling core: every interval, paired difference, rank interval,
panel and config analysis reads its draws. What the numbers estimate and how they are drawn is
in `_draws`' docstring.
"""

from independence_bench.stats.bootstrap._draws import (
    METHOD,
    Draws,
    Floats,
    Subject,
    bootstrap_method,
    draw_resamples,
    draw_size,
    interval_of,
    intervals_of,
)
from independence_bench.stats.bootstrap._intervals import (
    ModelBootstrap,
    PairedComparison,
    bootstrap_models,
    compare_paired,
    could_lead,
    rank_intervals,
    resample_ranks,
)

__all__ = [
    "METHOD",
    "Draws",
    "Floats",
    "ModelBootstrap",
    "PairedComparison",
    "Subject",
    "bootstrap_method",
    "bootstrap_models",
    "compare_paired",
    "could_lead",
    "draw_resamples",
    "draw_size",
    "interval_of",
    "intervals_of",
    "rank_intervals",
    "resample_ranks",
]
