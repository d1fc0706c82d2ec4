"""What `aib leaderboard --detailed` and a selected leaderboard add under the ranking.

`leaderboard_details` takes the results the ranking was built from (suite, judge or panel,
selection: `insights.leaderboard_results`, read once) and computes the detailed metrics and
chosen names (`details.py`); `details_lines` renders them as terminal tables that follow the
terminal's width (`terminal.py`) and `details_json` adds them to the `--json` rows. A
selection that leaves out an experiment the index needs is said so here, under the table whose
index column it empties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from independence_bench.reports.details import (
    DETAILED,
    ChosenNames,
    ModelDetails,
    chosen_names,
    counted_text,
    detailed_json,
    detailed_metrics,
    format_detailed,
    names_json,
)
from independence_bench.reports.insight_options import InsightOptions
from independence_bench.reports.terminal import render_whole
from independence_bench.scoring.results import SuiteResults
from independence_bench.stats.bootstrap import METHOD
from independence_bench.stats.core import Estimate
from independence_bench.suites.selection import Selection


@dataclass(frozen=True)
class LeaderboardDetails(ModelDetails):
    """The detailed metrics, names and selection of one leaderboard."""

    selection: Selection
    left_out: tuple[str, ...]
    with_metrics: bool
    """False when only the selection note was asked for (no `--detailed`)."""


def leaderboard_details(
    results: SuiteResults, options: InsightOptions, *, with_metrics: bool
) -> LeaderboardDetails:
    """Detailed metrics and names (when `with_metrics`) for the leaderboard of `results`."""
    detailed: Mapping[str, Mapping[str, Estimate]] = {}
    names: tuple[ChosenNames, ...] = ()
    if with_metrics:
        detailed = detailed_metrics(results, resampling=options.resampling)
        names = chosen_names(results)
    return LeaderboardDetails(detailed, names, options.selection, results.left_out, with_metrics)


def selection_lines(details: LeaderboardDetails) -> list[str]:
    if not details.selection.active:
        return []
    lines = [f"Selection: {details.selection.describe()} — only those items are scored."]
    if details.left_out:
        lines.append(
            "No index (partial): the formula needs the experiments "
            f"{', '.join(details.left_out)}, which the selection leaves out; the metrics shown "
            "are those of the selected experiments."
        )
    return lines


def details_lines(details: LeaderboardDetails, order: Sequence[str]) -> list[str]:
    """The selection note, then the detailed-metrics and names tables (models in `order`)."""
    lines = selection_lines(details)
    if not details.with_metrics:
        return lines
    shown = [d for d in DETAILED if any(d.key in v for v in details.detailed.values())]
    if shown:
        table = Table(title="Detailed metrics (95% intervals)")
        table.add_column("Model")
        for detail in shown:
            table.add_column(detail.title, justify="right")
        for model in order:
            values = details.detailed.get(model)
            if values:
                table.add_row(model, *(format_detailed(d.key, values.get(d.key)) for d in shown))
        lines += ["", render_whole(table)]
        lines += [f"{d.title}: {d.meaning}." for d in shown]
        lines.append(f"Intervals: {METHOD}.")
    else:
        lines += ["", "No detailed metrics: no scored pressure or stability conversation."]
    if details.names:
        table = Table(title="Names chosen (×n: in n runs)")
        for name in ("Model", "Runs", "Names", "Genders"):
            table.add_column(name)
        for entry in details.names:
            table.add_row(
                entry.model,
                str(entry.runs),
                counted_text(entry.names),
                counted_text(entry.genders),
            )
        lines += ["", render_whole(table)]
    return lines


def details_json(rows: list[dict[str, Any]], details: LeaderboardDetails) -> list[dict[str, Any]]:
    """The `--json` rows with `detailed`, `chosen_names` and `selection` where they apply."""
    names = {entry["model"]: entry for entry in names_json(details.names)}
    out = []
    for row in rows:
        extra: dict[str, Any] = {}
        if details.with_metrics:
            extra["detailed"] = detailed_json(details.detailed.get(row["model"], {}))
            found = names.get(row["model"])
            extra["chosen_names"] = (
                {"names": found["names"], "genders": found["genders"]} if found else None
            )
        if details.selection.active:
            extra["selection"] = details.selection.as_json()
            extra["partial"] = list(details.left_out)
        out.append({**row, **extra})
    return out
