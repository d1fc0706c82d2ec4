"""The store-only analyses behind `aib judges`, `judges --reference`, `compare`, `items` and
`configs`, rendered: `gathering.analyses` builds each frozen report from the store; `*_json`
turns it into plain data (`_reports`, judge calibration in `_calibration`), and
`render_analysis` is what the command prints: rich tables with the method under every table
that shows intervals, or JSON (`_tables`). None of it calls a model.
"""

from independence_bench.reports.analyses._calibration import (
    calibration_json,
    render_calibration,
)
from independence_bench.reports.analyses._reports import (
    CEILING,
    FLOOR,
    analysis_json,
    comparison_json,
    config_cell_json,
    configs_json,
    flag_of,
    items_json,
    judges_json,
    metric_json,
    model_labels,
    pair_json,
    settings_json,
)
from independence_bench.reports.analyses._tables import (
    METRIC_NOTE,
    render_analysis,
    render_configs,
    render_items,
    render_judges,
    render_pair,
    render_settings,
)

__all__ = [
    "CEILING",
    "FLOOR",
    "METRIC_NOTE",
    "analysis_json",
    "calibration_json",
    "comparison_json",
    "config_cell_json",
    "configs_json",
    "flag_of",
    "items_json",
    "judges_json",
    "metric_json",
    "model_labels",
    "pair_json",
    "render_analysis",
    "render_calibration",
    "render_configs",
    "render_items",
    "render_judges",
    "render_pair",
    "render_settings",
    "settings_json",
]
