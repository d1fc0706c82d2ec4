"""`aib estimate`: the calls, tokens and cost a run would take, before anything is sent.

It plans the run exactly as `aib run` does (`plan.py`), asks each endpoint only for its model
list (for prices), and counts what the store already holds: finished conversations and
judgments cost nothing again, and `--fresh` counts from the next run numbers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from independence_bench.clients.budget import Price
from independence_bench.clients.catalog import resolve_prices, survey_endpoints
from independence_bench.clients.local.local_models import LocalModels
from independence_bench.engine.engine import RunPlan
from independence_bench.engine.estimate import CostLine, estimate_run, render_estimate
from independence_bench.engine.pending import rejudged_work
from independence_bench.judging.forms import judge_label_of
from independence_bench.reports.format import terminal_width
from independence_bench.store.run_status import next_run_numbers
from independence_bench.store.store import STORE_FILENAME, Store
from independence_bench.text.counts import count_of
from independence_bench.workflows import Echo
from independence_bench.workflows.plan import RunOptions, plan_run, run_pool


async def estimate_benchmark_async(options: RunOptions) -> str:
    """What `run_benchmark(options)` would call and cost, as printable text.

    Nothing is sent but each endpoint's model list (for prices); an endpoint that does not
    answer leaves its prices to `models.yaml` or unknown.
    """
    plan = plan_run(options)
    everyone = tuple(s for s in (*plan.models, plan.judge, plan.user_model) if s is not None)
    async with LocalModels(everyone, options.env) as local:
        factories = options.factories + local.factories()
        pool = run_pool(options, factories, plan.judge, keyless=True)
        try:
            listings = await survey_endpoints(pool, everyone, require_answer=False)
            prices = resolve_prices(everyone, listings, pool)
        finally:
            await pool.aclose()
    lines = stored_estimate(options, plan, prices)
    runs_text = f"{count_of(plan.runs, 'run')} per model"
    return render_estimate(plan.suite, lines, runs_text, terminal_width())


def stored_estimate(
    options: RunOptions,
    plan: RunPlan,
    prices: Mapping[str, Price | None],
    *,
    read_only: bool = True,
) -> list[CostLine]:
    """The estimate of what is left of `plan`: conversations and judgments the store holds
    cost nothing again, and `--fresh` counts from the next run numbers. `read_only` False
    reads on an ordinary connection (`run.stored_work` says why a run does)."""
    suite, specs, judge, count = plan.suite, plan.models, plan.judge, plan.runs
    first_run: dict[str, int] = {}
    done: set[str] = set()
    judged: set[str] = set()
    if (options.data_dir / STORE_FILENAME).exists():
        opened = (
            Store(options.data_dir, read_only=True)
            if read_only
            else Store(options.data_dir, create=False)
        )
        with opened as store:
            if options.fresh:
                first_run = next_run_numbers(store, suite, specs)
            else:
                done = {i.id for i in store.items(suite_id=suite.id, status="done", words=False)}
                if judge is not None:
                    judged = {j.item_id for j in store.judgments(judge_model=judge_label_of(judge))}
                    # Judged under an earlier rubric: the run judges them again, and pays.
                    stale = rejudged_work(
                        store, suite, specs, judge, range(1, count + 1), user_model=plan.user_model
                    )
                    judged -= {redo.item.id for redo in stale}
    runs = {}
    for spec in specs:
        first = first_run.get(spec.display_label, 1)
        runs[spec.display_label] = range(first, first + count)
    return estimate_run(
        suite,
        specs,
        judge,
        runs,
        prices,
        done_items=done,
        judged_items=judged,
        prompt_cache=options.prompt_cache,
        user_model=plan.user_model,
    )


def estimate_command(options: RunOptions, *, echo: Echo) -> None:
    """`aib estimate`: print the estimate."""
    echo(asyncio.run(estimate_benchmark_async(options)))
