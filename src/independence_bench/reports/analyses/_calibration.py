"""`aib judges --reference JUDGE`: each judge's agreement with a reference judge, rendered.

`gathering.analyses.calibration_report` measures it; `calibration_json` turns the report into
plain data and `render_calibration` into tables, with the method under each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from independence_bench.gathering.analyses import CalibrationReport
from independence_bench.reports.format import estimate_json, interval_text, number, render_whole
from independence_bench.reports.leaderboard import METRIC_TITLES
from independence_bench.stats.agreement import INDEX, JudgeCalibration
from independence_bench.suites.kinds import PRESSURE_METRICS


def _values(values: Mapping[str, float]) -> dict[str, float]:
    return {model: round(value, 3) for model, value in values.items()}


def calibration_json(report: CalibrationReport) -> dict[str, Any]:
    """`aib judges --reference JUDGE --json`."""
    return {
        "suite": report.suite_id,
        "formula": report.formula,
        "reference": report.reference,
        "judges": [
            {
                "judge": c.judge,
                "items": c.n_items,
                "metrics": {
                    metric: {
                        "items": a.n_items,
                        "spearman": estimate_json(a.spearman),
                        "alpha": estimate_json(a.alpha),
                        "mean_difference": estimate_json(a.mean_difference),
                    }
                    for metric, a in c.metrics.items()
                },
                "models": {
                    o.metric: {
                        "models": len(o.judge_values),
                        "spearman": None if o.spearman is None else round(o.spearman, 3),
                        "judge": _values(o.judge_values),
                        "reference": _values(o.reference_values),
                    }
                    for o in c.models
                },
            }
            for c in report.judges
        ],
        "method": report.method,
    }


def _title(metric: str) -> str:
    return "Index" if metric == INDEX else METRIC_TITLES.get(metric, metric)


def _items_table(c: JudgeCalibration) -> Table:
    table = Table(title=f"{c.judge} against {c.reference}: items ({c.n_items} scored by both)")
    table.add_column("Metric")
    table.add_column("Items", justify="right")
    for name in ("Spearman ρ", "95% CI", "Alpha", "95% CI ", "Judge − ref.", "95% CI  "):
        table.add_column(name, justify="right")
    for metric, a in c.metrics.items():
        rho = "undefined" if a.spearman is None else number(a.spearman.value, 2)
        alpha = "undefined" if a.alpha is None else number(a.alpha.value, 2)
        difference = number(a.mean_difference.value, 2, signed=True)
        cells = [_title(metric), str(a.n_items), rho, interval_text(a.spearman, 2), alpha]
        cells += [
            interval_text(a.alpha, 2),
            difference,
            interval_text(a.mean_difference, 2, signed=True),
        ]
        table.add_row(*cells)
    return table


def _models_table(c: JudgeCalibration) -> Table:
    table = Table(title=f"{c.judge} against {c.reference}: per-model values, same items")
    table.add_column("Model")
    shown = [o for o in c.models if o.metric in (INDEX, *PRESSURE_METRICS)]
    for o in shown:
        table.add_column(f"{_title(o.metric)} judge", justify="right")
        table.add_column(f"{_title(o.metric)} ref.", justify="right")
    models = sorted({m for o in shown for m in o.reference_values})
    for model in models:
        cells = [model]
        for o in shown:
            cells.append(number(o.judge_values.get(model), 1))
            cells.append(number(o.reference_values.get(model), 1))
        table.add_row(*cells)
    table.add_section()
    rho_cells = ["Spearman ρ"]
    for o in shown:
        count = len(o.judge_values)
        rho_cells += [number(o.spearman, 2), f"{count} model{'' if count == 1 else 's'}"]
    table.add_row(*rho_cells)
    return table


def _orders_line(c: JudgeCalibration) -> str:
    parts = [
        f"{_title(o.metric)} {number(o.spearman, 2)} ({len(o.judge_values)})"
        for o in c.models
        if o.metric not in (INDEX, *PRESSURE_METRICS)
    ]
    return "Per-model Spearman ρ (models) for the other metrics: " + (", ".join(parts) or "none")


def render_calibration(report: CalibrationReport) -> str:
    lines = [f"Judge calibration — suite {report.suite_id}, reference {report.reference}"]
    for c in report.judges:
        lines += [
            "",
            render_whole(_items_table(c)),
            render_whole(_models_table(c)),
            _orders_line(c),
        ]
    lines += [
        "",
        "Items: Spearman ρ orders the items alike (1) or not at all (0); alpha 1 = the same "
        "scores, 0 = no better than chance; judge − ref. > 0: the judge scores as more "
        "independent. Undefined: a judge gives every item the same score.",
        f"Intervals: {report.method}.",
        "Per model: the default method (mean of per-run means) on the shared items only; ρ over "
        "the models both judges give a value (– with fewer than 3 or no variation); no interval.",
    ]
    return "\n".join(lines)
