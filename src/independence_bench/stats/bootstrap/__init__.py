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
from independence_bench.stats.bootstrap._gap import (
    AdaptivityGap,
    adaptivity_gaps,
    holding_by_topic,
    paired_topic_gap,
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
    "AdaptivityGap",
    "Draws",
    "Floats",
    "ModelBootstrap",
    "PairedComparison",
    "Subject",
    "adaptivity_gaps",
    "bootstrap_method",
    "bootstrap_models",
    "compare_paired",
    "could_lead",
    "draw_resamples",
    "draw_size",
    "holding_by_topic",
    "interval_of",
    "intervals_of",
    "paired_topic_gap",
    "rank_intervals",
    "resample_ranks",
]
