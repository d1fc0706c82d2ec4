"""The leaderboard's rows from the store: the results a ranking reads, and the ranking itself.

`leaderboard_results` reads one suite's results as the leaderboard options ask (suite, judge or
panel, selection, models), once for the ranking and for the details under it; `leaderboard_of`
ranks them (`stats.analysis.rank_models`: metrics, index, bootstrap intervals, ranks and rank
intervals) and adds the models with nothing scored; `load_leaderboard` does both, and
`results_to_rank` reads what it ranks for a caller, `aib run`'s closing table, that reads them
again for its captions. `refuse_unscored_only` says why a judge asked for has no scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from independence_bench.errors import UserError
from independence_bench.gathering.adaptivity import Adaptivity, adaptivity_of
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.gathering.standings import Standing, judge_standing, store_judge_note
from independence_bench.scoring.results import SuiteResults, load_results
from independence_bench.stats.analysis import (
    Leaderboard,
    LeaderboardRow,
    rank_models,
    sort_rows,
)
from independence_bench.stats.core import Resampling
from independence_bench.store.store import Store
from independence_bench.suites.selection import EVERYTHING, Selection
from independence_bench.text.counts import count_of


def leaderboard_results(store: Store, options: AnalysisOptions) -> SuiteResults:
    """The results the leaderboard `options` ask for (suite, judge or panel, selection); read
    once for the ranking and for what `_details` adds under it."""
    if options.judge and options.judges:
        raise UserError("give either --judge or --judges, not both")
    return load_results(
        store,
        suite_id=options.suite_id,
        judge=options.judge,
        judges=options.judges,
        selection=options.selection,
        models=options.models,
    )


def load_leaderboard(
    store: Store,
    *,
    suite_id: str | None,
    judge: str | None,
    judges: Sequence[str] = (),
    resampling: Resampling = Resampling(),
    only_hash: str | None = None,
    selection: Selection = EVERYTHING,
) -> Leaderboard:
    """The leaderboard for one suite and one judge (or a panel), best index first.

    Every model with a stored item has a row: models without every metric the formula needs
    come last, marked incomplete, unranked; `n_items` counts every conversation run.
    """
    results = results_to_rank(
        store,
        suite_id=suite_id,
        judge=judge,
        judges=judges,
        only_hash=only_hash,
        selection=selection,
    )
    return leaderboard_of(results, resampling=resampling)


def results_to_rank(
    store: Store,
    *,
    suite_id: str | None,
    judge: str | None,
    judges: Sequence[str] = (),
    only_hash: str | None = None,
    selection: Selection = EVERYTHING,
) -> SuiteResults:
    """The results `load_leaderboard` ranks, for a caller that reads more from them (`aib run`'s
    captions) without reading the store's items and judgments again; a judge asked for whose
    judgments are all unscored is named (`refuse_unscored_only`)."""
    try:
        return load_results(
            store,
            suite_id=suite_id,
            judge=judge,
            judges=judges,
            only_hash=only_hash,
            selection=selection,
        )
    except UserError:
        refuse_unscored_only(store, [j for j in (judge, *judges) if j])
        raise


def refuse_unscored_only(store: Store, judges: Sequence[str]) -> None:
    """Say so when a judge asked for has judgments, all unscored (its replies never validated):
    "no judgments by J; judges in the store: none" hid the 15 stored."""
    for name in judges:
        stored = store.judgments(judge_model=name)
        if stored and all(j.status == "unscored" for j in stored):
            which = "the" if len(stored) == 1 else "all"
            verb = "is" if len(stored) == 1 else "are"
            raise UserError(
                f"{which} {count_of(len(stored), 'judgment')} by {name} {verb} stored unscored "
                f"(its replies never validated); run 'aib judge --judge {name}' to ask again, or "
                "use a judge that can follow JSON instructions"
            )


def leaderboard_of(results: SuiteResults, *, resampling: Resampling = Resampling()) -> Leaderboard:
    """`load_leaderboard` of results already read from the store."""
    board = rank_models(results.scored_set, suite_id=results.suite_id, resampling=resampling)
    items_per_model: dict[str, int] = defaultdict(int)
    runs_per_model: dict[str, set[int]] = defaultdict(set)
    for item in results.items:
        items_per_model[item.run.model_label] += 1
        runs_per_model[item.run.model_label].add(item.run.run_index)
    by_model = {row.model: row for row in board.rows}
    rows = []
    for model in sorted(items_per_model):
        runs, n_items = len(runs_per_model[model]), items_per_model[model]
        scored = by_model.get(model)
        if scored is None:
            scored = LeaderboardRow(
                model, None, None, None, None, None, None, runs, {}, n_items, 0, 0, ("all",), None
            )
        rows.append(replace(scored, runs=runs, n_items=n_items))
    return replace(board, rows=sort_rows(rows))


@dataclass(frozen=True)
class LeaderboardInputs:
    """What `aib leaderboard` reads from the store: the results, each judge's standing, which
    judge it shows among the suite's, and suite adaptive's gaps (None for other suites)."""

    results: SuiteResults
    standings: tuple[Standing, ...]
    note: str | None
    adaptivity: Adaptivity | None


def gather_leaderboard(store: Store, options: AnalysisOptions) -> LeaderboardInputs:
    """Everything `aib leaderboard` shows for `options`, read from the open store once."""
    results = leaderboard_results(store, options)
    standings = tuple(judge_standing(store, judge) for judge in results.judges)
    note = None
    if not options.judges:
        note = store_judge_note(store, results.suite_id, results.judge, asked=bool(options.judge))
    adaptivity = adaptivity_of(store, results, options.resampling)
    return LeaderboardInputs(results, standings, note, adaptivity)
