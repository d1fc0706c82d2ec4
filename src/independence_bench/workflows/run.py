"""`aib run`: converse with every model, judge each transcript, and rank the models.

`run_benchmark` (and `run_benchmark_async`) is the Python API. It runs one plan
(`plan.plan_run`, made once; `run_command` makes it before its notices and passes it on),
raises the open-file limit (`open_files.py`), reads from the store what is still to do
(`engine/pending.py`), checks the endpoints that work needs (`catalog.survey_endpoints`) and
the `--max-cost` prices before the store is opened for writing, so bad input never leaves a
half-written store and a re-run with everything stored touches no endpoint, then drives the
engine and reads back in one call (`read_run`) the leaderboard, spending and captions the run
prints. `run_command` adds what the terminal shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from independence_bench.clients.budget import CostGuard, Price
from independence_bench.clients.catalog import (
    Listing,
    refuse_unsent_reasoning,
    resolve_prices,
    survey_endpoints,
)
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool
from independence_bench.clients.local.local_models import LocalModels
from independence_bench.clients.open_files import raise_open_file_limit
from independence_bench.clients.ratelimit import describe_limits
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.engine.estimate import judging_cost, rejudging_notice
from independence_bench.engine.failures import EXIT_SOME_FAILED, render_failure_summary
from independence_bench.engine.pending import (
    PendingWork,
    everything,
    pending_work,
    rejudged_work,
)
from independence_bench.engine.progress import RichProgress
from independence_bench.engine.stopping import until_stopped
from independence_bench.errors import UserError
from independence_bench.gathering.adaptivity import user_model_captions
from independence_bench.gathering.leaderboard import leaderboard_of, results_to_rank
from independence_bench.gathering.spend import Spend, run_spend
from independence_bench.gathering.standings import judge_standing, store_judge_note
from independence_bench.judging.forms import judge_label_of
from independence_bench.reports.leaderboard import render_table
from independence_bench.reports.spend import spend_line
from independence_bench.scoring.results import SuiteResults
from independence_bench.stats.analysis import Leaderboard
from independence_bench.store.claims import Claims
from independence_bench.store.latency import mean_call_seconds
from independence_bench.store.run_status import reserve_fresh_runs
from independence_bench.store.store import STORE_FILENAME, Store
from independence_bench.suites.suite import Suite
from independence_bench.text.counts import count_of
from independence_bench.workflows import Echo
from independence_bench.workflows.credits import check_credits
from independence_bench.workflows.plan import (
    RunOptions,
    local_judge_notice,
    local_user_notice,
    offline_notice,
    plan_run,
    run_pool,
    status_lines,
)


@dataclass(frozen=True)
class RunResult:
    suite: Suite
    models: tuple[ModelSpec, ...]
    judge: ModelSpec | None
    summary: RunSummary
    leaderboard: Leaderboard | None
    """None when nothing was judged yet."""
    budget: CostGuard | None = None
    spend: Spend | None = None
    """What the stored calls of these runs cost, the judge's included."""
    notices: tuple[str, ...] = ()
    """How endpoints were adapted to (e.g. tools refused, sent in the prompt), one line each."""
    captions: tuple[str, ...] = ()
    """The judge's standing (`gathering/standings.py`) and the other judges of the suite."""
    user_model: ModelSpec | None = None
    """The model that played the human (suite `adaptive`)."""


def _cost_guard(
    options: RunOptions,
    specs: tuple[ModelSpec, ...],
    listings: Mapping[str, Listing | None],
    pool: ClientPool,
) -> CostGuard | None:
    """The `--max-cost` guard; every model's price must be known for it to mean anything."""
    if options.max_cost is None:
        return None
    prices = resolve_prices(specs, listings, pool)
    unknown = sorted(label for label, price in prices.items() if price is None)
    if unknown:
        where = options.config_path or "a models.yaml passed as --config"
        raise UserError(
            f"--max-cost needs a price for every model, unknown for {unknown}; set "
            f"price_prompt_per_mtok and price_completion_per_mtok in {where}, or drop --max-cost"
        )
    known: dict[str, Price] = {k: v for k, v in prices.items() if v is not None}
    return CostGuard(options.max_cost, known)


async def run_benchmark_async(
    options: RunOptions,
    *,
    announce: Callable[[str], None] | None = None,
    plan: RunPlan | None = None,
) -> RunResult:
    """Validate, run and judge everything `options` asks for; return the summary and ranking.
    `announce` gets what must be said before any call is paid (stored judgments to redo);
    `plan` is `plan_run(options)` when the caller made it already."""
    raise_open_file_limit()
    plan = plan if plan is not None else plan_run(options)
    roles = (plan.models, plan.judge, plan.user_model)
    reached = stored_work(options, plan).specs(*roles)
    notify = status_lines(options.show_progress)
    async with LocalModels(reached, options.env, notify) as local:
        factories = options.factories + local.factories()
        pool = run_pool(options, factories, plan.judge)
        try:
            return await _run_on_pool(options, plan, pool, reached, local, announce)
        finally:
            await pool.aclose()


def stored_work(options: RunOptions, plan: RunPlan) -> PendingWork:
    """What the run still needs, read from the store: everything for `--fresh`, a new store, or
    one that cannot be opened (the run's own opening then says why).

    Only reads, on an ordinary connection like every store reader's: SQLite's read-only mode
    would leave its `-wal` and `-shm` files behind in a store a failed survey must leave as it
    was."""
    if options.fresh or not (options.data_dir / STORE_FILENAME).exists():
        return everything(plan.models, plan.judge)
    try:
        with Store(options.data_dir, create=False) as store:
            runs_asked = range(1, plan.runs + 1)
            return pending_work(
                store, plan.suite, plan.models, plan.judge, runs_asked, user_model=plan.user_model
            )
    except UserError:
        return everything(plan.models, plan.judge)


@dataclass(frozen=True)
class RunReadout:
    """What a finished run prints, read back from the store in one call (`read_run`)."""

    leaderboard: Leaderboard | None
    """None when nothing was judged yet."""
    spend: Spend
    captions: tuple[str, ...]


def read_run(store: Store, plan: RunPlan, summary: RunSummary) -> RunReadout:
    """The leaderboard of the plan's suite by its judge, the run's spending, and the captions
    under the leaderboard (the judge's standing, the suite's user models and other judges)."""
    suite, judge = plan.suite, plan.judge
    judge_label = judge_label_of(judge) if judge else None
    board: Leaderboard | None = None
    results: SuiteResults | None = None
    try:
        results = results_to_rank(
            store, suite_id=suite.id, judge=judge_label, only_hash=suite.content_hash
        )
        board = leaderboard_of(results)
    except UserError:
        if summary.judged or summary.judge_cached or summary.judge_unscored:
            raise
        # nothing judged yet (all failed, or the cost cap): report, not raise
    spend = run_spend(
        store,
        suite_id=suite.id,
        suite_hash=suite.content_hash,
        labels=[s.display_label for s in plan.models],
        judge=judge_label,
    )
    captions: list[str] = []
    if board is not None and results is not None and board.judge is not None:
        captions.append(judge_standing(store, board.judge).caption())
        captions += user_model_captions(store, results, board.judge)
        why = "the judge of this run; aib leaderboard shows the judge with most items"
        note = store_judge_note(store, suite.id, board.judge, asked=True, why=why)
        captions += [note] if note else []
    return RunReadout(board, spend, tuple(captions))


async def _run_on_pool(
    options: RunOptions,
    plan: RunPlan,
    pool: ClientPool,
    reached: tuple[ModelSpec, ...],
    local: LocalModels,
    announce: Callable[[str], None] | None = None,
) -> RunResult:
    """The run itself; only the endpoints of `reached` (the specs with work) are surveyed.

    Keys, endpoints and prices are checked before the local models load: loading takes minutes,
    and a missing key for a remote judge should not wait for the embedded subject."""
    suite, specs, judge = plan.suite, plan.models, plan.judge
    listings = await survey_endpoints(pool, reached)
    refuse_unsent_reasoning(pool, reached)
    guard = _cost_guard(options, reached, listings, pool)
    prices = resolve_prices(reached, listings, pool)
    credit_notices = await check_credits(options, plan, pool, reached, prices)
    await local.load_all(reached)
    with Store(options.data_dir) as store:
        progress = None
        if options.show_progress:
            stored = mean_call_seconds(store, {s.id for s in reached})
            progress = RichProgress(limits=lambda: _limits_text(pool), stored_s_per_call=stored)
        claims = Claims(store, lease_s=options.claim_lease_s)
        engine = Engine(
            store,
            pool,
            retry=options.retry,
            progress=progress,
            budget=guard,
            prices=prices,
            reply_cap=options.reply_cap,
            claims=claims,
        )
        if options.fresh:
            plan = replace(plan, first_run=reserve_fresh_runs(store, suite, specs, plan.runs))
        if judge is not None and not options.fresh and announce is not None:
            runs = range(1, plan.runs + 1)
            redo = rejudged_work(store, suite, specs, judge, runs, user_model=plan.user_model)
            if redo:
                work = [(r.rubric_id, r.item.turns) for r in redo]
                line = judging_cost(judge, work, prices.get(judge.display_label))
                announce(rejudging_notice(line, len(redo), {r.rubric_id for r in redo}))
        answered = lambda: engine.summary.calls  # noqa: E731
        if progress is not None:
            with progress:
                summary = await until_stopped(engine.run(plan), engine.stop, answered)
        else:
            summary = await until_stopped(engine.run(plan), engine.stop, answered)
        # Before the leaderboard, which would only say the judge has no judgments.
        if (
            judge is not None
            and summary.judge_unscored
            and not summary.judged
            and not summary.judge_cached
        ):
            raise UserError(
                f"judge {judge_label_of(judge)} returned no valid judgment "
                f"({count_of(summary.judge_unscored, 'reply')} failed validation; transcripts are "
                "stored); pick a judge that can follow JSON instructions and run "
                "'aib judge --judge MODEL'"
            )
        readout = read_run(store, plan, summary)
    notices = (
        *credit_notices,
        *(n for e in pool.endpoints() for n in getattr(e.client, "notices", ())),
    )
    return RunResult(
        suite,
        specs,
        judge,
        summary,
        readout.leaderboard,
        guard,
        readout.spend,
        notices,
        readout.captions,
        plan.user_model,
    )


def _limits_text(pool: ClientPool) -> str:
    return describe_limits((e.name, e.limiter) for e in pool.endpoints())


def run_benchmark(
    options: RunOptions,
    *,
    announce: Callable[[str], None] | None = None,
    plan: RunPlan | None = None,
) -> RunResult:
    """`run_benchmark_async` on a fresh event loop."""
    return asyncio.run(run_benchmark_async(options, announce=announce, plan=plan))


def run_command(options: RunOptions, *, echo: Echo) -> int:
    """`aib run`; returns the exit status (`EXIT_SOME_FAILED` when anything failed, else 0)."""
    plan = plan_run(options)  # an unknown suite is refused before any notice is printed
    notices = (
        offline_notice(options),
        local_judge_notice(options, plan.judge),
        local_user_notice(options, plan.suite, plan.judge),
    )
    for notice in notices:
        if notice is not None:
            echo(notice)
    result = run_benchmark(options, announce=echo, plan=plan)
    summary = result.summary
    echo(
        f"suite {result.suite.id} ({result.suite.short_hash}): "
        f"{count_of(summary.items_done, 'conversation')} run, {summary.items_cached} cached, "
        f"{summary.items_failed} failed; {summary.judged} judged, "
        f"{summary.judge_cached} already judged, {summary.judge_unscored} unscored; "
        f"{count_of(summary.calls, 'API call')}"
    )
    user, prompt = result.user_model, result.suite.user_model_prompt
    if user is not None and prompt is not None:
        echo(
            f"user model {user.display_label} played the human (temperature {user.temperature:g}, "
            f"seed {user.seed}, max_tokens {user.max_tokens}; instructions {prompt.id} "
            f"{prompt.hash[:12]}, never shown to the models or the judge)"
        )
    for notice in result.notices:
        echo(notice)
    echo(render_table(result.leaderboard, captions=result.captions))
    left_out = plan.left_out
    if left_out and result.leaderboard is not None and result.leaderboard.rows:
        echo(
            f"No index (partial): the selection leaves out {', '.join(left_out)}, which the "
            "index formula needs; the metrics shown are those of the selected experiments."
        )
    if result.spend is not None:
        echo(spend_line(result.spend))
    for line in render_failure_summary(summary.failures, what="conversations or judgments"):
        echo(line)
    if result.budget is not None and result.budget.stopped:
        echo(
            f"stopped at the --max-cost cap: ${result.budget.spent_usd:.4f} of "
            f"${result.budget.cap_usd:.4f} spent; "
            f"{count_of(summary.items_skipped, 'conversation')} and "
            f"{count_of(summary.judge_skipped, 'judgment')} not started — run the same command "
            "again (with a higher or no --max-cost) to resume"
        )
    return EXIT_SOME_FAILED if summary.failures else 0
