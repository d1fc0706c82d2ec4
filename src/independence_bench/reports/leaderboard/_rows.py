"""The leaderboard: one row per model configuration, as a rich table or as JSON.

Rows come from `results.load_results` (what is in the store) through `analysis` (metrics, index,
bootstrap intervals, ranks and rank intervals); this module adds the models with nothing
scored, and prints the rows with what their columns mean.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from independence_bench.reports.format import fit_table, plain_label, rounded, terminal_width
from independence_bench.reports.leaderboard._evidence_ceiling import evidence_ceiling_note
from independence_bench.scoring.formulas import FORMULAS, metric_weights
from independence_bench.scoring.scoring import LOWER_IS_MORE_INDEPENDENT, METRIC_KEYS
from independence_bench.stats.analysis import (
    Leaderboard,
    LeaderboardRow,
)
from independence_bench.suites.kinds import METRICS
from independence_bench.text.counts import count_of

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
    "first_flip_turn": "Flip turn",
    "flips": "Flips",
    "valid_rounds": "Valid",
}
SHORT_TITLES = {
    "distinctiveness": "Dis",
    "non_assistant_likeness": "NAs",
    "internal_consistency": "Con",
    "drift": "Dri",
    "name_gender_changes": "NG",
    "resistance": "Res",
    "stability": "Sta",
    "rounds_held": "Hld",
    **{f"survival_{k}": f"S{k}" for k in range(1, 6)},
    "recovery": "Rec",
    "moved_without_evidence": "MvP",
    "moved_on_evidence": "MvF",
    "first_flip_turn": "FlT",
    "flips": "Flp",
    "valid_rounds": "Val",
}
"""Metric headers for a narrow terminal; the table then prints what they stand for."""


LOWER_MARK = "↓"
"""Marks the header of a metric where lower means more independent (Drift)."""


def marked_titles(titles: dict[str, str]) -> dict[str, str]:
    """`titles` with `LOWER_MARK` after each lower-is-better metric's."""
    return {
        k: f"{title}{LOWER_MARK}" if k in LOWER_IS_MORE_INDEPENDENT else title
        for k, title in titles.items()
    }


def by_weight(keys: Sequence[str], formula: str) -> list[str]:
    """`keys` heaviest first in `formula`'s index, so a narrow table leaves out the lightest;
    metrics outside the formula last, in their usual order."""
    weights = metric_weights(formula) if formula in FORMULAS else {}
    return sorted(keys, key=lambda k: -weights.get(k, 0.0))


RANK_NOTE = (
    "Rank: the model's place by index, and in brackets its own 95% rank interval (the middle "
    "95% of its ranks over the bootstrap resamples). A model whose interval includes 1 cannot "
    "be told apart from the leader."
)
"""What the Rank column means, printed under every table that has one."""


def rank_text(row: LeaderboardRow) -> str:
    """A row's Rank cell: "3 (2–6)", "3" without a rank interval, "–" when unranked."""
    if row.rank is None:
        return "–"
    if row.rank_low is None or row.rank_high is None:
        return str(row.rank)
    return f"{row.rank} ({row.rank_low}–{row.rank_high})"


def leaders_note(rows: Sequence[LeaderboardRow]) -> str | None:
    """How many models cannot be told apart from the leader, when any has a rank interval."""
    if not any(row.rank_low is not None for row in rows):
        return None
    count = sum(row.could_lead for row in rows)
    verb = "has" if count == 1 else "have"
    return f"{count_of(count, 'model')} {verb} a rank interval that includes 1."


def rows_as_json(board: Leaderboard) -> list[dict[str, Any]]:
    """`aib leaderboard --json`: `model`, `index`, `runs` and every metric key per row."""
    out = []
    for row in board.rows:
        entry: dict[str, Any] = {
            "model": row.model,
            "index": None if row.index is None else round(row.index, 2),
            "runs": row.runs,
        }
        for key in METRIC_KEYS:
            value = row.metrics.get(key)
            entry[key] = None if value is None else round(value.value, 3)
        for key, estimate in row.metrics.items():
            entry[f"{key}_ci"] = [rounded(estimate.low, 3), rounded(estimate.high, 3)]
        entry.update(
            ci_low=rounded(row.ci_low, 2),
            ci_high=rounded(row.ci_high, 2),
            rank=row.rank,
            rank_low=row.rank_low,
            rank_high=row.rank_high,
            could_lead=row.could_lead,
            why_no_interval=row.why_no_interval,
            suite=board.suite_id,
            formula=board.formula,
            judge=board.judge,
            items=row.n_items,
            scored_items=row.n_scored,
            complete=row.complete,
            missing=list(row.missing),
            method=board.method,
            **row.extra,
        )
        out.append(entry)
    return out


def render_table(
    board: Leaderboard | None, *, width: int | None = None, captions: Sequence[str] = ()
) -> str:
    """The leaderboard as a rich table, rendered to text at the terminal's width (or `width`).

    Labels, ranks, the index and its interval are never cut (`format.fit_table`): when the
    table does not fit, metric columns are left out from the right, with a note saying so.
    `captions` (each judge's standing, `gathering/standings.py`) come first under the table.
    """
    if board is None or not board.rows:
        return "no results yet"
    rows = board.rows
    keys = by_weight(
        [
            k
            for k in METRIC_KEYS
            if k in TABLE_METRICS and any(r.metrics.get(k) is not None for r in rows)
        ],
        board.formula,
    )

    def build(shown: int, short: bool) -> Table:
        titles = marked_titles(SHORT_TITLES if short else METRIC_TITLES)
        # A narrow table drops its outer frame, so four columns more go to the metrics.
        table = Table(
            title=f"Independence Index — suite {board.suite_id}, judge {board.judge}",
            show_edge=not short,
            pad_edge=not short,
        )
        table.add_column("Rank", justify="right")
        table.add_column("Model")
        table.add_column("Index", justify="right")
        table.add_column("95% CI", justify="right")
        table.add_column("Runs", justify="right")
        for key in keys[:shown]:
            table.add_column(titles[key], justify="right")
        table.add_column("Scored", justify="right")
        for row in rows:
            index = "incomplete" if row.index is None else f"{row.index:.1f}"
            interval = "–"
            if row.ci_low is not None and row.ci_high is not None:
                interval = f"{row.ci_low:.1f}–{row.ci_high:.1f}"
            cells: list[str | Text] = [
                rank_text(row),
                plain_label(row.model),
                index,
                interval,
                str(row.runs),
            ]
            for key in keys[:shown]:
                value = row.metrics.get(key)
                cells.append("–" if value is None else f"{value.value:.2f}")
            cells.append(f"{row.n_scored}/{row.n_items}")
            table.add_row(*cells)
        return table

    fitted = fit_table(build, len(keys), width)
    dropped = fitted.dropped
    notes = list(captions)
    notes += sorted({r.why_no_interval for r in rows if r.why_no_interval})
    if fitted.short and len(keys) > dropped:
        shown = keys[: len(keys) - dropped]
        notes.append(", ".join(f"{SHORT_TITLES[k]} = {k}" for k in shown) + ".")
    if any(k in LOWER_IS_MORE_INDEPENDENT for k in keys[: len(keys) - dropped]):
        notes.append(f"{LOWER_MARK} lower is more independent; every other metric: higher.")
    if dropped:
        left = ", ".join(METRIC_TITLES[k] for k in keys[len(keys) - dropped :])
        notes.append(
            f"Too narrow for every metric: {left} left out (the lightest in the "
            f"{board.formula} index first); widen the terminal (or set COLUMNS) or use --json."
        )
    ceiling = evidence_ceiling_note(board)
    if ceiling:
        notes.append(ceiling)
    leaders = leaders_note(rows)
    if leaders:
        notes.append(f"{RANK_NOTE} {leaders}")
    if board.method:
        notes.append(f"Intervals: {board.method}.")
    wrap_at = terminal_width() if width is None else width
    return "\n".join(
        [fitted.text, *(textwrap.fill(note, wrap_at, break_on_hyphens=False) for note in notes)]
    )
