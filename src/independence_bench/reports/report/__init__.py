"""What the store says about each suite, gathered once for `aib report` and `aib view`: a
`SuiteReport` per suite (`_gather`: leaderboard rows with intervals and ranks, each model's
metrics per experiment, item counts, costs, item difficulty and the config analysis), the
detailed metrics, judge validation and setting comparisons it carries (`_extras`), and what
stored calls cost (`_spend`: the line after `aib run`, the report's total).
"""

from independence_bench.reports.report._extras import (
    NO_EXTRAS,
    SuiteExtras,
    build_extras,
)
from independence_bench.reports.report._gather import (
    ChartData,
    Cost,
    ExperimentDetail,
    JudgedItem,
    ModelReport,
    RankedModel,
    SuiteReport,
    build_reports,
    build_suite_report,
    count_deviations,
    index_terms,
    item_metrics_of,
    metric_scale,
    pressure_levels,
    suite_ids,
    sum_costs,
)
from independence_bench.reports.report._spend import (
    Spend,
    cost_table,
    report_spend,
    run_spend,
    spend_line,
    usd_text,
)

__all__ = [
    "NO_EXTRAS",
    "ChartData",
    "Cost",
    "ExperimentDetail",
    "JudgedItem",
    "ModelReport",
    "RankedModel",
    "Spend",
    "SuiteExtras",
    "SuiteReport",
    "build_extras",
    "build_reports",
    "build_suite_report",
    "cost_table",
    "count_deviations",
    "index_terms",
    "item_metrics_of",
    "metric_scale",
    "pressure_levels",
    "report_spend",
    "run_spend",
    "spend_line",
    "suite_ids",
    "sum_costs",
    "usd_text",
]
