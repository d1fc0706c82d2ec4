"""The leaderboard: one row per model configuration, as a rich table or as JSON.

Rows come from `results.load_results` (what is in the store) through `scoring` (metrics and
index); this module only arranges and prints them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from independence_bench.results import load_results
from independence_bench.scoring import METRIC_KEYS, measure_items, score_models
from independence_bench.store import Store

METRIC_TITLES = {
    "distinctiveness": "Distinct.",
    "non_assistant_likeness": "Non-asst.",
    "internal_consistency": "Consist.",
    "drift": "Drift",
    "name_gender_changes": "Name/gender",
    "resistance": "Resist.",
    "stability": "Stability",
}


@dataclass(frozen=True)
class LeaderboardRow:
    model: str
    index: float | None
    runs: int
    metrics: dict[str, float | None]
    suite_id: str
    formula: str
    judge: str | None
    n_items: int
    n_scored: int
    missing: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def build_rows(store: Store, *, suite_id: str | None, judge: str | None) -> list[LeaderboardRow]:
    """Leaderboard rows for one suite and judge, best index first, incomplete models last."""
    results = load_results(store, suite_id=suite_id, judge=judge)
    scores = score_models(measure_items(results.scored), results.formula)
    items_per_model: dict[str, int] = {}
    runs_per_model: dict[str, set[int]] = {}
    for item in results.items:
        label = item.run.model_label
        items_per_model[label] = items_per_model.get(label, 0) + 1
        runs_per_model.setdefault(label, set()).add(item.run.run_index)
    rows = []
    for model in sorted(items_per_model):
        score = scores.get(model)
        rows.append(
            LeaderboardRow(
                model=model,
                index=score.index if score else None,
                runs=len(runs_per_model[model]),
                metrics={k: (score.metrics.get(k) if score else None) for k in METRIC_KEYS},
                suite_id=results.suite_id,
                formula=results.formula,
                judge=results.judge,
                n_items=items_per_model[model],
                n_scored=score.n_items if score else 0,
                missing=score.missing if score else ("all",),
            )
        )
    rows.sort(key=lambda r: (r.index is None, -(r.index or 0.0), r.model))
    return rows


def rows_as_json(rows: Sequence[LeaderboardRow]) -> list[dict[str, Any]]:
    """`aib leaderboard --json`: `model`, `index`, `runs` and every metric key per row."""
    out = []
    for row in rows:
        entry: dict[str, Any] = {
            "model": row.model,
            "index": None if row.index is None else round(row.index, 2),
            "runs": row.runs,
        }
        for key in METRIC_KEYS:
            value = row.metrics.get(key)
            entry[key] = None if value is None else round(value, 3)
        entry.update(
            suite=row.suite_id,
            formula=row.formula,
            judge=row.judge,
            items=row.n_items,
            scored_items=row.n_scored,
            complete=row.index is not None,
            missing=list(row.missing),
            **row.extra,
        )
        out.append(entry)
    return out


def render_table(rows: Sequence[LeaderboardRow], *, width: int = 140) -> str:
    """The leaderboard as a rich table, rendered to text."""
    if not rows:
        return "no results yet"
    first = rows[0]
    table = Table(title=f"Independence Index — suite {first.suite_id}, judge {first.judge}")
    table.add_column("#", justify="right")
    table.add_column("Model")
    table.add_column("Index", justify="right")
    table.add_column("Runs", justify="right")
    keys = [k for k in METRIC_KEYS if any(r.metrics.get(k) is not None for r in rows)]
    for key in keys:
        table.add_column(METRIC_TITLES[key], justify="right")
    table.add_column("Scored", justify="right")
    for rank, row in enumerate(rows, start=1):
        index = "incomplete" if row.index is None else f"{row.index:.1f}"
        cells = [str(rank) if row.index is not None else "–", row.model, index, str(row.runs)]
        for key in keys:
            value = row.metrics.get(key)
            cells.append("–" if value is None else f"{value:.2f}")
        cells.append(f"{row.n_scored}/{row.n_items}")
        table.add_row(*cells)
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False).print(table)
    return buffer.getvalue().rstrip()
