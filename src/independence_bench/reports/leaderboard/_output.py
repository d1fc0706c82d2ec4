"""What `aib leaderboard` prints: the ranking for one judge or a `--judges` panel (with
inter-judge alpha), and under it, with `--detailed` or a selection, the detailed metrics and
chosen names, as text tables or as JSON.

`leaderboard_output` renders what `gathering.leaderboard.gather_leaderboard` read (the results,
once, each judge's standing, the judge note, suite adaptive's gaps), building the board and its
details from them. Nothing here opens the store or calls a model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from independence_bench.gathering.details import leaderboard_details
from independence_bench.gathering.leaderboard import LeaderboardInputs, leaderboard_of
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.reports.format import estimate_json, interval_text
from independence_bench.reports.leaderboard._adaptivity import adaptivity_json, adaptivity_lines
from independence_bench.reports.leaderboard._details import details_json, details_lines
from independence_bench.reports.leaderboard._rows import METRIC_TITLES, render_table, rows_as_json
from independence_bench.scoring.results import SuiteResults
from independence_bench.stats.agreement import ALPHA_METHOD
from independence_bench.stats.analysis import Leaderboard
from independence_bench.stats.core import Estimate


def panel_leaderboard(results: SuiteResults, options: AnalysisOptions) -> Leaderboard:
    """`leaderboard.leaderboard_of` for one judge or a panel; a panel's rows carry its
    inter-judge agreement for the JSON output."""
    board = leaderboard_of(results, resampling=options.resampling)
    if not board.agreement:
        return board
    extra = {"agreement": agreement_json(board.agreement)}
    return replace(
        board, rows=tuple(replace(row, extra={**row.extra, **extra}) for row in board.rows)
    )


def agreement_json(agreement: Mapping[str, Estimate | None]) -> dict[str, Any]:
    """Per metric: alpha with its interval, or None where alpha is undefined (no variation)."""
    return {metric: estimate_json(value) for metric, value in agreement.items()}


# -- judges -----------------------------------------------------------------------------------


def why_undefined(metric: str, shared: Mapping[str, int] | None) -> str:
    """Why alpha is undefined: no item scored by two judges, or no variation at all."""
    if shared is not None and not shared.get(metric):
        return "no item judged by both"
    return "the scores do not vary"


def agreement_lines(
    agreement: Mapping[str, Estimate | None], seed: int, shared: Mapping[str, int] | None = None
) -> list[str]:
    """Inter-judge alpha per metric, one line each, with the method; `shared` (items two judges
    scored, per metric) says why an alpha is undefined."""
    if not agreement:
        return []
    lines = ["Inter-judge agreement (1 = the judges agree perfectly, 0 = no better than chance):"]
    for metric, alpha in agreement.items():
        title = METRIC_TITLES.get(metric, metric)
        if alpha is None:
            lines.append(f"  {title:<12} undefined: {why_undefined(metric, shared)}")
        else:
            lines.append(f"  {title:<12} alpha {alpha.value:.2f} (95% {interval_text(alpha, 2)})")
    lines.append(f"Alpha: {ALPHA_METHOD}, seed {seed}.")
    return lines


def leaderboard_output(
    found: LeaderboardInputs, options: AnalysisOptions, *, as_json: bool, detailed: bool = False
) -> str:
    """`aib leaderboard` for one judge or a `--judges` panel, from what `gather_leaderboard`
    read; `detailed` adds the detailed metrics and chosen names (`_details.py`), as does a
    selection its note."""
    results, standings, note, adaptivity = (
        found.results,
        found.standings,
        found.note,
        found.adaptivity,
    )
    board = panel_leaderboard(results, options)
    details = None
    if detailed or options.selection.active:
        details = leaderboard_details(results, options, with_metrics=detailed)
    if as_json:
        # Every row carries the judge's standing, as results.json's suites do: a dict for one
        # judge, a list of them for a --judges panel.
        standing: Any = [s.as_json() for s in standings]
        if not options.judges:
            standing = standings[0].as_json() if standings else None
        rows = [{**row, "judge_standing": standing} for row in rows_as_json(board)]
        if adaptivity is not None:
            rows = [{**row, **adaptivity_json(adaptivity, row["model"])} for row in rows]
        return _dump(details_json(rows, details) if details else rows)
    users = [s.caption(results.judge) for s in adaptivity.standings] if adaptivity else []
    lines = [
        render_table(board, captions=[*(s.caption() for s in standings), *users]),
        *([note] if note else []),
        *agreement_lines(board.agreement, options.resampling.seed),
    ]
    if details:
        lines += details_lines(details, [row.model for row in board.rows])
    if detailed and adaptivity is not None:
        models = [row.model for row in board.rows]
        lines += adaptivity_lines(adaptivity, models)[len(adaptivity.standings) :]
    return "\n".join(lines)


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
