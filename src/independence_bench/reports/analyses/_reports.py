"""The analyses' reports as plain data for `--json`: judges, comparisons, items and configs.

`gathering.analyses` builds each report from the store; `*_json` turns it into the dictionaries
`--json` prints, and `_tables` renders the same report as text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from independence_bench.gathering.analyses import (
    ConfigsReport,
    ItemsReport,
    JudgesReport,
    PairReport,
    SettingsReport,
    SuiteAnalysis,
)
from independence_bench.reports.format import estimate_json, interval_json, rounded
from independence_bench.reports.leaderboard import agreement_json
from independence_bench.stats.agreement import ALPHA_METHOD
from independence_bench.stats.analysis import (
    CEILING_SHARE,
    ConfigCell,
    ItemDifficulty,
    JudgeComparison,
    MetricDiscrimination,
)
from independence_bench.stats.bootstrap import PairedComparison
from independence_bench.stats.core import Estimate

CEILING = 0.9
"""A scenario is ceilinged when every model scores at least this (0–1): it separates no one."""
FLOOR = 0.1
"""A scenario is floored when no model scores above this."""


# -- leaderboard with a judge panel ---------------------------------------------------------


def judges_json(report: JudgesReport) -> dict[str, Any]:
    """`aib judges --json`."""
    comparison = report.comparison
    return {
        "suite": report.suite_id,
        "formula": report.formula,
        "judges": list(comparison.judges),
        "judged_items": dict(report.judged),
        "models": [
            {
                "model": model,
                "index": {j: rounded(v, 2) for j, v in by_judge.items()},
                "spread": rounded(comparison.spread.get(model), 2),
            }
            for model, by_judge in comparison.index.items()
        ],
        "self_preference": {j: rounded(v, 2) for j, v in comparison.self_preference.items()},
        "agreement": agreement_json(report.agreement),
        "retest": [
            {
                "judge": r.judge,
                "metric": r.metric,
                "items": r.n_items,
                "alpha": estimate_json(r.alpha),
                "mean_abs_diff": round(r.mean_abs_diff, 4),
            }
            for r in report.retest
        ],
        "alpha_method": f"{ALPHA_METHOD}, seed {report.seed}",
        "manipulation_check": [
            {
                "judge": r.judge,
                "control_items": r.items,
                "new_information_agreement": round(r.new_information, 4),
                "weak_read_as_new": rounded(r.weak_read_as_new, 4),
                "challenge_applies_agreement": rounded(r.challenge_applies, 4),
            }
            for r in report.arms
        ],
    }


# -- comparisons ------------------------------------------------------------------------------


def analysis_json(report: SuiteAnalysis) -> dict[str, Any]:
    """The suite and judge every analysis's JSON starts with."""
    return {"suite": report.suite_id, "judge": report.judge}


def _parts(estimate: Estimate | None) -> tuple[float | None, float | None, float | None]:
    if estimate is None:
        return None, None, None
    return estimate.value, estimate.low, estimate.high


def comparison_json(comparison: PairedComparison) -> dict[str, Any]:
    difference = comparison.difference
    return {
        "model_a": comparison.model_a,
        "model_b": comparison.model_b,
        **interval_json("difference", *_parts(difference), 2),
        "share_a_higher": rounded(comparison.share_a_higher, 4),
        "items": comparison.n_items,
        "runs": list(comparison.runs),
        "why_no_interval": comparison.why_no_interval,
    }


def pair_json(report: PairReport) -> dict[str, Any]:
    """`aib compare A B --json`."""
    return {
        **comparison_json(report.comparison),
        **analysis_json(report),
        "method": report.method,
    }


def settings_json(report: SettingsReport) -> dict[str, Any]:
    """`aib compare --json`."""
    return {
        **analysis_json(report),
        "settings": [
            {
                "base": e.base,
                "label": e.label,
                "reference": e.reference,
                "changes": list(e.changes),
                **comparison_json(e.comparison),
            }
            for e in report.effects
        ],
        "method": report.method,
    }


# -- item difficulty --------------------------------------------------------------------------


def flag_of(item: ItemDifficulty) -> str:
    """``ceiling`` when every model scores ≥ `CEILING`, ``floor`` when none scores > `FLOOR`."""
    if item.lowest >= CEILING:
        return "ceiling"
    if item.highest <= FLOOR:
        return "floor"
    return ""


def items_json(report: ItemsReport) -> dict[str, Any]:
    """`aib items --json`."""
    return {
        **analysis_json(report),
        "items": [
            {
                "scenario": d.scenario_id,
                "kind": d.kind,
                "models": d.n_models,
                "mean_score": round(d.mean_score, 4),
                "lowest": round(d.lowest, 4),
                "highest": round(d.highest, 4),
                "discrimination": rounded(d.discrimination, 4),
                "top_minus_bottom": rounded(d.top_minus_bottom, 4),
                "ceiling": flag_of(d) == "ceiling",
                "floor": flag_of(d) == "floor",
                "metrics": [metric_json(m) for m in d.metrics],
            }
            for d in report.items
        ],
        "ceiling_share": CEILING_SHARE,
    }


def metric_json(row: MetricDiscrimination) -> dict[str, Any]:
    """One metric of one scenario in `aib items --json` and results.json (None when undefined)."""
    return {
        "metric": row.metric,
        "models": row.n_models,
        "share_at_max": round(row.share_at_max, 4),
        "sd": round(row.sd, 4),
        "spread": round(row.spread, 4),
        "item_rest_correlation": rounded(row.item_rest, 4),
        "ceiling": row.ceilinged,
    }


# -- prompt variant × delivery mode -----------------------------------------------------------


def configs_json(report: ConfigsReport) -> dict[str, Any]:
    """`aib configs --json`."""
    return {
        **analysis_json(report),
        "baseline": dict(zip(("variant", "mode"), report.baseline, strict=True)),
        "cells": [config_cell_json(c, lambda e: estimate_json(e, 2)) for c in report.cells],
        "method": report.method,
    }


EstimateJson = Callable[[Estimate | None], dict[str, float | None] | None]
"""How one document writes an estimate (`format.estimate_json` at some digits, say)."""


def config_cell_json(cell: ConfigCell, estimate: EstimateJson) -> dict[str, Any]:
    """One prompt variant × delivery mode cell, as `aib configs --json` and results.json write
    it; each document writes its estimates its own way (`estimate`)."""
    return {
        "variant": cell.variant,
        "mode": cell.mode,
        "models": cell.n_models,
        "mean_index": estimate(cell.mean_index),
        "vs_baseline": estimate(cell.vs_baseline),
    }


def model_labels(comparison: JudgeComparison) -> Sequence[str]:
    """The models of a judge comparison, highest mean index across judges first."""

    def mean(model: str) -> float:
        known = [v for v in comparison.index[model].values() if v is not None]
        return sum(known) / len(known) if known else float("-inf")

    return sorted(comparison.index, key=lambda m: (-mean(m), m))
