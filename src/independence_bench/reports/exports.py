"""The machine-readable report: `results.json` and `results.csv`, built from `SuiteReport`s.

Both hold one row per model and one row per judged item. Each item row carries the item id,
the judgment id and the completion keys of every turn and judge request, so any number traces
back to its stored transcript, the judge's reply and the exact requests.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from independence_bench.gathering.details import DETAILED_KEYS
from independence_bench.gathering.spend import report_spend
from independence_bench.gathering.suite_report import Cost, JudgedItem, ModelReport, SuiteReport
from independence_bench.reports.analyses import (
    config_cell_json,
    flag_of,
    judges_json,
    metric_json,
    settings_json,
)
from independence_bench.reports.format import interval_json, rounded
from independence_bench.reports.leaderboard import (
    adaptivity_json,
    detailed_json,
    evidence_ceiling_note,
    names_json,
)
from independence_bench.scoring.scoring import METRIC_KEYS
from independence_bench.stats.analysis import LeaderboardRow
from independence_bench.stats.core import Estimate
from independence_bench.text.outputs import csv_cell, export_value
from independence_bench.version import __version__


def _estimate(estimate: Estimate | None) -> dict[str, float | None] | None:
    if estimate is None:
        return None
    return {
        "value": round(estimate.value, 4),
        "low": rounded(estimate.low, 4),
        "high": rounded(estimate.high, 4),
    }


def ranking_json(row: LeaderboardRow | None) -> dict[str, Any]:
    """A model's place on the leaderboard (ranks, index, interval), as `results.json` and the
    viewer write it; a model with no row has none of them."""
    if row is None:
        return {
            **dict.fromkeys(("rank", "rank_low", "rank_high"), None),
            "could_lead": False,
            **interval_json("index", None, None, None),
            "complete": False,
            "missing": ["all"],
            "why_no_interval": "no scored items",
        }
    return {
        "rank": row.rank,
        "rank_low": row.rank_low,
        "rank_high": row.rank_high,
        "could_lead": row.could_lead,
        **interval_json("index", row.index, row.ci_low, row.ci_high, 2),
        "complete": row.complete,
        "missing": list(row.missing),
        "why_no_interval": row.why_no_interval,
    }


def cache_json(cost: Cost) -> dict[str, Any]:
    """A cost's prompt-cache fields: tokens read and written, saved and uncached USD."""
    return {
        "cached_tokens": cost.cached_tokens,
        "cache_write_tokens": cost.cache_write_tokens,
        "cache_saved_usd": round(cost.saved_usd, 6),
        "uncached_cost_usd": rounded(cost.uncached_usd, 6),
    }


def model_record(model: ModelReport, report: SuiteReport | None = None) -> dict[str, Any]:
    """One model's row in `results.json` (the CSV flattens the same values)."""
    row = model.row
    detailed = report.extras.detailed.get(model.model, {}) if report else {}
    standing = report.standing if report else None
    return {
        "model": model.model,
        **ranking_json(row),
        # The judge whose numbers these are and its standing, on the entry itself: a consumer
        # reading one model's entry sees how far its index can be trusted.
        "judge": report.judge if report else None,
        "judge_standing": standing.kind if standing else None,
        "judge_index_spearman": standing.index_rho if standing else None,
        "runs": model.runs,
        "metrics": {k: _estimate(v) for k, v in row.metrics.items()} if row else {},
        "items": model.items,
        "scored_items": model.scored,
        "unscored_items": model.unscored,
        "failed_items": model.failed,
        "protocol_deviations": model.protocol_deviations,
        "protocol_deviations_by_kind": dict(model.deviations),
        "cost_usd": rounded(model.cost.usd, 6),
        "cost_known_usd": round(model.cost.known_usd, 6),
        "calls": model.cost.calls,
        "unpriced_calls": model.cost.unpriced,
        "cost_per_run_usd": rounded(model.cost_per_run, 6),
        **cache_json(model.cost),
        "index_per_usd": rounded(model.index_per_usd, 2),
        "run_indexes": {str(r): rounded(v, 2) for r, v in model.run_indexes.items()},
        "detailed": detailed_json(detailed),
        "experiments": [
            {
                "experiment": e.experiment,
                "metrics": {k: round(v, 4) for k, v in e.metrics.items()},
                "items": e.items,
                "scored": e.scored,
                "unscored": e.unscored,
                "failed": e.failed,
            }
            for e in model.experiments
        ],
    }


def _model_json(model: ModelReport, report: SuiteReport) -> dict[str, Any]:
    """A model's record, with its adaptivity gap and the user models in suite adaptive."""
    adaptivity = report.adaptivity
    extra = adaptivity_json(adaptivity, model.model) if adaptivity is not None else {}
    return {**model_record(model, report), **extra}


def item_record(judged: JudgedItem) -> dict[str, Any]:
    """One judged item in `results.json`: where it came from and how to find its transcript."""
    item, judgment = judged.item, judged.judgment
    return {
        "model": item.run.model_label,
        "run": item.run.run_index,
        "variant": item.variant,
        "mode": item.mode,
        "scenario_id": item.scenario_id,
        "kind": item.kind,
        "experiment": item.experiment,
        "item_id": item.id,
        "judgment_id": judgment.id,
        "judge": judgment.judge_model,
        "rubric_id": judgment.rubric_id,
        "rubric_hash": judgment.rubric_hash,
        "status": judgment.status,
        "metrics": {k: round(v, 4) for k, v in judged.metrics.items()},
        "completion_keys": [turn.completion_key for turn in item.turns],
        # Suite adaptive: the user model's call behind each human turn (None: scripted).
        **(
            {"human_completion_keys": [turn.human_key for turn in item.turns]}
            if any(turn.human_key for turn in item.turns)
            else {}
        ),
        "judge_completion_keys": list(judgment.completion_keys),
    }


def results_document(reports: Sequence[SuiteReport]) -> dict[str, Any]:
    """The whole of `results.json` (every string through `outputs.export_value`)."""
    suites = []
    for report in reports:
        suites.append(
            {
                "suite": report.suite_id,
                "suite_hashes": list(report.suite_hashes),
                "formula": report.formula,
                "judge": report.judge,
                "judge_standing": report.standing.as_json() if report.standing else None,
                "method": report.leaderboard.method,
                "judge_cost_usd": rounded(report.judge_cost.usd, 6),
                "judge_cache": cache_json(report.judge_cost),
                "selection": report.selection.as_json() if report.selection.active else None,
                "partial": list(report.left_out),
                "evidence_ceiling": evidence_ceiling_note(report.leaderboard),
                "spend_usd": rounded(report_spend(report).total.usd, 6),
                "spend_known_usd": round(report_spend(report).total.known_usd, 6),
                "models": [_model_json(m, report) for m in report.models],
                "chosen_names": names_json(report.extras.names),
                "judge_validation": (
                    judges_json(report.extras.judges) if report.extras.judges else None
                ),
                "setting_comparisons": (
                    settings_json(report.extras.settings) if report.extras.settings else None
                ),
                "items": [item_record(j) for j in report.judged],
                "item_difficulty": [
                    {
                        **d.__dict__,
                        "flag": flag_of(d),
                        "metrics": [metric_json(m) for m in d.metrics],
                    }
                    for d in report.difficulty
                ],
                "config_analysis": [config_cell_json(c, _estimate) for c in report.configs],
            }
        )
    # Labels, judge names and chosen names are untrusted: no control character or lone
    # surrogate reaches the file (`outputs.export_value`).
    document = {
        "generator": {"package": "ai-independence-bench", "version": __version__},
        "suites": suites,
    }
    return dict(export_value(document))


CSV_HEAD = (
    "row", "suite", "judge", "model", "rank", "rank_low", "rank_high", "index", "ci_low",
    "ci_high", "runs",
    *METRIC_KEYS, *DETAILED_KEYS,
    "items", "scored_items", "protocol_deviations", "cost_usd", "index_per_usd",
    "run", "variant", "mode", "scenario_id", "kind", "item_id", "judgment_id", "status",
    "completion_keys", "judge_completion_keys", "judge_standing", "judge_index_spearman",
)  # fmt: skip


def _cell(value: Any) -> Any:
    """A CSV cell: controls made visible (`outputs.csv_cell`); text that a spreadsheet would
    run as a formula quoted with a '."""
    if value is None:
        return ""
    value = csv_cell(value)
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def results_csv(reports: Sequence[SuiteReport]) -> str:
    """`results.csv`: a `model` row per model and an `item` row per judged item."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_HEAD, lineterminator="\n")
    writer.writeheader()
    for report in reports:
        standing = report.standing.as_json() if report.standing else {}
        common = {
            "suite": report.suite_id,
            "judge": report.judge,
            "judge_standing": standing.get("standing"),
            "judge_index_spearman": standing.get("index_spearman"),
        }
        for model in report.models:
            record = model_record(model, report)
            row = {**common, "row": "model"}
            row.update({k: record[k] for k in ("model", "rank", "rank_low", "rank_high")})
            row.update({k: record[k] for k in ("index", "ci_low", "ci_high")})
            row.update({k: record[k] for k in ("runs", "items", "scored_items", "cost_usd")})
            row["protocol_deviations"] = record["protocol_deviations"]
            row["index_per_usd"] = record["index_per_usd"]
            row.update({k: (v or {}).get("value") for k, v in record["metrics"].items()})
            row.update({k: record["detailed"].get(k) for k in DETAILED_KEYS})
            writer.writerow({k: _cell(v) for k, v in row.items()})
        for judged in report.judged:
            record = item_record(judged)
            row = {**common, "row": "item"}
            for key in ("model", "run", "variant", "mode", "scenario_id", "kind", "item_id"):
                row[key] = record[key]
            row.update(judgment_id=record["judgment_id"], status=record["status"])
            row.update(record["metrics"])
            row["completion_keys"] = " ".join(record["completion_keys"])
            row["judge_completion_keys"] = " ".join(record["judge_completion_keys"])
            writer.writerow({k: _cell(v) for k, v in row.items()})
    return buffer.getvalue()
