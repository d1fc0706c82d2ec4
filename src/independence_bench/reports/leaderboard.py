"""The leaderboard: one row per model configuration, as a rich table or as JSON.

Rows come from `results.load_results` (what is in the store) through `analysis` (metrics, index,
bootstrap intervals, rank intervals and tie groups); this module only arranges and prints them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from independence_bench.scoring.results import load_results
from independence_bench.scoring.scoring import METRIC_KEYS
from independence_bench.stats.analysis import build_leaderboard
from independence_bench.stats.bootstrap import DEFAULT_RESAMPLES
from independence_bench.store.store import Store
from independence_bench.suites.kinds import METRICS

TABLE_METRICS = frozenset(metric.key for metric in METRICS if metric.column)

METRIC_TITLES = {
    "distinctiveness": "Distinct.",
    "non_assistant_likeness": "Non-asst.",
    "internal_consistency": "Consist.",
    "drift": "Drift",
    "name_gender_changes": "Name/gender",
    "resistance": "Resist.",
    "stability": "Stability",
    "rounds_held": "Held",
    **{f"survival_{k}": f"S({k})" for k in range(1, 6)},
    "recovery": "Recovery",
    "moved_without_evidence": "Moved/push",
    "moved_on_evidence": "Moved/fact",
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
    ci_low: float | None = None
    ci_high: float | None = None
    rank_low: int | None = None
    rank_high: int | None = None
    tie_group: str = ""
    why_no_interval: str | None = None
    metric_intervals: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    method: str = ""


def build_rows(
    store: Store,
    *,
    suite_id: str | None,
    judge: str | None,
    judges: Sequence[str] = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    only_hash: str | None = None,
) -> list[LeaderboardRow]:
    """Leaderboard rows for one suite and one judge (or a panel), best index first.

    Models without every metric the formula needs come last, marked incomplete, unranked.
    """
    results = load_results(
        store, suite_id=suite_id, judge=judge, judges=judges, only_hash=only_hash
    )
    board = build_leaderboard(
        results.scored, results.formula, results.judges, n_resamples=n_resamples, seed=seed
    )
    items_per_model: dict[str, int] = {}
    runs_per_model: dict[str, set[int]] = {}
    for item in results.items:
        label = item.run.model_label
        items_per_model[label] = items_per_model.get(label, 0) + 1
        runs_per_model.setdefault(label, set()).add(item.run.run_index)
    by_model = {row.model: row for row in board.rows}
    rows = []
    for model in sorted(items_per_model):
        scored = by_model.get(model)
        metrics = scored.metrics if scored else {}
        rows.append(
            LeaderboardRow(
                model=model,
                index=scored.index if scored else None,
                runs=len(runs_per_model[model]),
                metrics={k: (metrics[k].value if k in metrics else None) for k in METRIC_KEYS},
                suite_id=results.suite_id,
                formula=results.formula,
                judge=" + ".join(results.judges) or None,
                n_items=items_per_model[model],
                n_scored=scored.n_items if scored else 0,
                missing=scored.missing if scored else ("all",),
                ci_low=scored.ci_low if scored else None,
                ci_high=scored.ci_high if scored else None,
                rank_low=scored.rank_low if scored else None,
                rank_high=scored.rank_high if scored else None,
                tie_group=scored.tie_group if scored else "",
                why_no_interval=scored.why_no_interval if scored else None,
                metric_intervals={k: (e.low, e.high) for k, e in metrics.items()},
                method=board.method,
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
        for key, (low, high) in row.metric_intervals.items():
            entry[f"{key}_ci"] = [_round(low, 3), _round(high, 3)]
        entry.update(
            ci_low=_round(row.ci_low, 2),
            ci_high=_round(row.ci_high, 2),
            rank_low=row.rank_low,
            rank_high=row.rank_high,
            tie_group=row.tie_group,
            why_no_interval=row.why_no_interval,
            suite=row.suite_id,
            formula=row.formula,
            judge=row.judge,
            items=row.n_items,
            scored_items=row.n_scored,
            complete=row.index is not None,
            missing=list(row.missing),
            method=row.method,
            **row.extra,
        )
        out.append(entry)
    return out


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def render_table(rows: Sequence[LeaderboardRow], *, width: int = 140) -> str:
    """The leaderboard as a rich table, rendered to text."""
    if not rows:
        return "no results yet"
    first = rows[0]
    table = Table(title=f"Independence Index — suite {first.suite_id}, judge {first.judge}")
    table.add_column("Rank", justify="right")
    # Labels and intervals are what the table is for: never cut them, narrow the metrics instead.
    table.add_column("Model", no_wrap=True, min_width=max(len(r.model) for r in rows))
    table.add_column("Index", justify="right")
    table.add_column("95% CI", justify="right", no_wrap=True, min_width=11)
    table.add_column("Runs", justify="right")
    keys = [
        k
        for k in METRIC_KEYS
        if k in TABLE_METRICS and any(r.metrics.get(k) is not None for r in rows)
    ]
    for key in keys:
        table.add_column(METRIC_TITLES[key], justify="right")
    table.add_column("Scored", justify="right")
    for rank, row in enumerate(rows, start=1):
        index = "incomplete" if row.index is None else f"{row.index:.1f}"
        interval = "–"
        if row.ci_low is not None and row.ci_high is not None:
            interval = f"{row.ci_low:.1f}–{row.ci_high:.1f}"
        place = row.tie_group or (str(rank) if row.index is not None else "–")
        cells = [place, row.model, index, interval, str(row.runs)]
        for key in keys:
            value = row.metrics.get(key)
            cells.append("–" if value is None else f"{value:.2f}")
        cells.append(f"{row.n_scored}/{row.n_items}")
        table.add_row(*cells)
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False).print(table)
    notes = sorted({r.why_no_interval for r in rows if r.why_no_interval})
    if first.method:
        notes.append(f"Intervals: {first.method}.")
    return "\n".join([buffer.getvalue().rstrip(), *notes])
