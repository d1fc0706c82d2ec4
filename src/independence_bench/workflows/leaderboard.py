"""`aib leaderboard`: the models in the store ranked by Independence Index, by our rules or the
earlier implementation's (`--method legacy`).

The store is opened and checked for runs before the scoring and statistics code (numpy, the
bootstrap, rich) is imported, so a missing or empty store is reported at once; the rows
themselves are read by `gathering/leaderboard.py` (one judge or a `--judges` panel, with the
detailed metrics) or `legacy/scoring.py`, and rendered by `reports/leaderboard/`.
`build_leaderboard` is the Python API: the ranking as a value (`stats.analysis.rank_models`
ranks the rows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from independence_bench.errors import UserError
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.store.store import Store
from independence_bench.text.lossless import json_document
from independence_bench.workflows import Echo

if TYPE_CHECKING:
    from independence_bench.stats.analysis import Leaderboard


@dataclass(frozen=True)
class LeaderboardOptions(AnalysisOptions):
    """The analysis options of the ranking (a judge panel and a selection: default method
    only; no index when an experiment is left out), and how it is scored and shown."""

    method: str = "default"
    """``default`` (our scoring) or ``legacy`` (the earlier implementation's rules)."""
    detailed: bool = False
    """Add the detailed metrics and the names each model chose."""


def leaderboard_command(options: LeaderboardOptions, *, as_json: bool, echo: Echo) -> None:
    """`aib leaderboard`: print the ranking as a table or as JSON.

    The options are checked before the store is opened, so a conflict is reported as such
    whatever the store holds."""
    if options.judge and options.judges:
        raise UserError("give either --judge or --judges, not both")
    if options.method == "legacy":
        _check_legacy_options(options)
    with Store(options.data_dir, read_only=True) as store:
        store.run_suites()
    # Imported only now: the scoring stack is most of this command's start-up time.
    if options.method != "legacy":
        from independence_bench.gathering.leaderboard import (
            gather_leaderboard,
            refuse_unscored_only,
        )
        from independence_bench.reports.leaderboard import leaderboard_output

        with Store(options.data_dir, read_only=True) as store:
            try:
                found = gather_leaderboard(store, options)
                # Ranking can refuse too (`rank_models`: no scored judgment by the judge asked
                # for), so the store stays open to say why.
                text = leaderboard_output(
                    found, options, as_json=as_json, detailed=options.detailed
                )
            except UserError:
                refuse_unscored_only(store, [j for j in (options.judge, *options.judges) if j])
                raise
        echo(text)
        return
    from independence_bench.legacy.scoring import legacy_leaderboard
    from independence_bench.reports.leaderboard import render_table, rows_as_json

    with Store(options.data_dir, read_only=True) as store:
        board = legacy_leaderboard(store, suite_id=options.suite_id, judge=options.judge)
    if options.models:
        missing = sorted(set(options.models) - {row.model for row in board.rows})
        if missing:
            raise UserError(f"--models: no ranked row for {', '.join(missing)}")
        board = replace(board, rows=tuple(r for r in board.rows if r.model in options.models))
    echo(json_document(rows_as_json(board), indent=2) if as_json else render_table(board))


def _check_legacy_options(options: LeaderboardOptions) -> None:
    if options.judges:
        raise UserError("--judges needs the default method; legacy scoring uses one judge")
    if options.selection.active or options.detailed:
        raise UserError(
            "--experiments, --variants, --modes and --detailed need the default method; "
            "legacy scoring reproduces the published tables as they were"
        )


def build_leaderboard(options: LeaderboardOptions) -> Leaderboard:
    """The ranking `aib leaderboard` prints, as a value: a `Leaderboard` whose `rows` hold each
    model's index with its interval, rank, rank interval and metrics (best first). The Python
    API of `aib leaderboard` (`options.detailed` only changes what the command prints)."""
    if options.judge and options.judges:
        raise UserError("give either --judge or --judges, not both")
    if options.method == "legacy":
        _check_legacy_options(options)
        from independence_bench.legacy.scoring import legacy_leaderboard

        with Store(options.data_dir, read_only=True) as store:
            return legacy_leaderboard(store, suite_id=options.suite_id, judge=options.judge)
    from independence_bench.gathering.leaderboard import leaderboard_results
    from independence_bench.reports.leaderboard import panel_leaderboard

    with Store(options.data_dir, read_only=True) as store:
        results = leaderboard_results(store, options)
    return panel_leaderboard(results, options)
