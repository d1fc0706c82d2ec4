"""`aib estimate`: the calls, tokens and cost a run would take, before anything is sent.

It plans the run exactly as `aib run` does (`plan.py`), asks each endpoint only for its model
list (for prices), and counts what the store already holds: finished conversations and
judgments cost nothing again, and `--fresh` counts from the next run numbers.
"""

from __future__ import annotations

import asyncio

from independence_bench.clients.catalog import resolve_prices, survey_endpoints
from independence_bench.clients.local.local_models import LocalModels
from independence_bench.engine.estimate import estimate_run, render_estimate
from independence_bench.reports.format import terminal_width
from independence_bench.store.run_status import next_run_numbers
from independence_bench.store.store import STORE_FILENAME, Store
from independence_bench.text.counts import count_of
from independence_bench.workflows import Echo
from independence_bench.workflows.plan import (
    RunOptions,
    make_pool,
    missing_key_hint,
    planned_suite,
    resolve_models,
    runs_per_model,
)


async def estimate_benchmark_async(options: RunOptions) -> str:
    """What `run_benchmark(options)` would call and cost, as printable text.

    Nothing is sent but each endpoint's model list (for prices); an endpoint that does not
    answer leaves its prices to `models.yaml` or unknown.
    """
    suite = planned_suite(options)
    specs, judge = resolve_models(options)
    count = runs_per_model(options, specs)
    everyone = specs + ((judge,) if judge else ())
    async with LocalModels(everyone, options.env) as local:
        factories = options.factories + local.factories()
        hint = missing_key_hint(options, judge)
        pool = make_pool(
            options.env, options.concurrency, factories, options.timeout_s, hint, keyless=True
        )
        try:
            listings = await survey_endpoints(pool, everyone, require_answer=False)
            prices = resolve_prices(everyone, listings, pool)
        finally:
            await pool.aclose()
    first_run: dict[str, int] = {}
    done: set[str] = set()
    judged: set[str] = set()
    if (options.data_dir / STORE_FILENAME).exists():
        with Store(options.data_dir, read_only=True) as store:
            if options.fresh:
                first_run = next_run_numbers(store, suite, specs)
            else:
                done = {i.id for i in store.items(suite_id=suite.id, status="done", words=False)}
                if judge is not None:
                    judged = {j.item_id for j in store.judgments(judge_model=judge.judge_label)}
    runs = {}
    for spec in specs:
        first = first_run.get(spec.display_label, 1)
        runs[spec.display_label] = range(first, first + count)
    lines = estimate_run(suite, specs, judge, runs, prices, done_items=done, judged_items=judged)
    runs_text = f"{count_of(count, 'run')} per model"
    return render_estimate(suite, lines, runs_text, terminal_width())


def estimate_command(options: RunOptions, *, echo: Echo) -> None:
    """`aib estimate`: print the estimate."""
    echo(asyncio.run(estimate_benchmark_async(options)))
