"""The benchmark's analyses as pure functions of judged items: the leaderboard, judge and
setting comparisons, item difficulty and config cells (`_tables`), and each scenario's
per-metric discrimination (`_discrimination`).

Every analysis takes a `scoring.ScoredSet` (the stored `ScoredItem`s, their formula and whose
judgments count); nothing here reads the store or calls a model.
"""

from independence_bench.stats.analysis._discrimination import (
    AT_MAX,
    CEILING_SHARE,
    MetricDiscrimination,
    ScenarioKey,
    metric_discrimination,
    rest_index,
)
from independence_bench.stats.analysis._tables import (
    ConfigCell,
    ItemDifficulty,
    JudgeComparison,
    Leaderboard,
    LeaderboardRow,
    SettingEffect,
    analyse_configs,
    baseline_of,
    compare_judges,
    compare_settings,
    config_baseline,
    item_difficulty,
    judge_agreement,
    judges_of,
    panel_items,
    rank_models,
    shared_items,
    sort_rows,
)

__all__ = [
    "AT_MAX",
    "CEILING_SHARE",
    "ConfigCell",
    "ItemDifficulty",
    "JudgeComparison",
    "Leaderboard",
    "LeaderboardRow",
    "MetricDiscrimination",
    "ScenarioKey",
    "SettingEffect",
    "analyse_configs",
    "baseline_of",
    "compare_judges",
    "compare_settings",
    "config_baseline",
    "item_difficulty",
    "judge_agreement",
    "judges_of",
    "metric_discrimination",
    "panel_items",
    "rank_models",
    "rest_index",
    "shared_items",
    "sort_rows",
]
