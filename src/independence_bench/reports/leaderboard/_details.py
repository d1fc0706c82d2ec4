"""Detailed metrics and chosen names, rendered: what users read beside the index, per model.

`gathering.details` computes them (what each detailed metric means, how it is resampled, where
the chosen names come from); `details_lines` renders them as terminal tables that follow the
terminal's width (`format.fit_table`) and `details_json` adds them to the `--json` rows. A
selection that leaves out an experiment the index needs is said so here, under the table whose
index column it empties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from independence_bench.gathering.details import DETAILED, ChosenNames, LeaderboardDetails
from independence_bench.reports.format import render_whole, rounded
from independence_bench.stats.bootstrap import METHOD
from independence_bench.stats.core import Estimate


def detailed_json(values: Mapping[str, Estimate]) -> dict[str, Any]:
    """`{key: value, key_ci: [low, high]}` for each detailed metric a model has."""
    out: dict[str, Any] = {}
    for key, estimate in values.items():
        out[key] = round(estimate.value, 3)
        out[f"{key}_ci"] = [rounded(estimate.low, 3), rounded(estimate.high, 3)]
    return out


def format_detailed(key: str, estimate: Estimate | None, *, interval: bool = True) -> str:
    """`8.4 (7.9–8.8)`, or `92% (85–97%)` for a share; `–` when there is no value."""
    if estimate is None:
        return "–"
    share = next(d.scale for d in DETAILED if d.key == key) == 1.0
    value = f"{estimate.value:.0%}" if share else f"{estimate.value:.1f}"
    if not interval or estimate.low is None or estimate.high is None:
        return value
    if share:
        return f"{value} ({100 * estimate.low:.0f}–{estimate.high:.0%})"
    return f"{value} ({estimate.low:.1f}–{estimate.high:.1f})"


# -- chosen names ---------------------------------------------------------------------------


def counted_text(pairs: Sequence[tuple[str, int]]) -> str:
    """`Quill ×3, Wren` (a count only when above one); `–` when empty."""
    if not pairs:
        return "–"
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in pairs)


def names_json(table: Sequence[ChosenNames]) -> list[dict[str, Any]]:
    return [
        {
            "model": entry.model,
            "runs": entry.runs,
            "names": {name: count for name, count in entry.names},
            "genders": {gender: count for gender, count in entry.genders},
        }
        for entry in table
    ]


# -- what `aib leaderboard --detailed` adds under the ranking -------------------------------------


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
