"""`aib judge`: judge the stored transcripts again, with another judge or more repeats.

Judgments are only ever added: an item this judge already judged under the same rubric keeps
its row, and `repeats` adds test-retest judgments beside it. Each item is judged with its
scenario's own rubric when its suite is shipped unchanged, else with its kind's default.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from independence_bench.clients.catalog import survey_endpoints
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientFactory, ClientPool, RetryPolicy
from independence_bench.clients.local.local_models import LocalModels
from independence_bench.clients.open_files import raise_open_file_limit
from independence_bench.engine.engine import Engine, RunSummary
from independence_bench.engine.failures import EXIT_SOME_FAILED, render_failure_summary
from independence_bench.engine.progress import RichProgress
from independence_bench.engine.stopping import until_stopped
from independence_bench.errors import UserError
from independence_bench.judging.default_judges import LOCAL_JUDGE
from independence_bench.judging.forms import judge_label_of
from independence_bench.store.store import ItemRecord, Store
from independence_bench.suites.kinds import kind_named
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.workflows import Echo
from independence_bench.workflows.plan import (
    RunOptions,
    choose_judge,
    id_form_hint,
    status_lines,
)


def _missing_key_hint(spec: ModelSpec) -> str:
    return (
        f"; or judge on this machine with --judge {LOCAL_JUDGE}, or on a server with "
        f"--base-url URL{id_form_hint(spec.id)}"
    )


@dataclass(frozen=True)
class JudgeOptions:
    judge: str
    """The judge's model id, as `aib run --judge` takes it."""
    base_url: str | None = None
    """The judge's OpenAI-compatible endpoint (`--base-url`); None: OpenRouter, or in-process
    for a local model name."""
    judge_form: str | None = None
    """A name in `JUDGE_FORMS`; None = the judge's own (`judging.forms.judge_form_of`)."""
    suite_id: str | None = None
    """Judge only items of this suite; None: every suite in the store."""
    repeats: int = 1
    """Judgments per item by this judge; more than 1 measures its test-retest agreement."""
    concurrency: int | None = None
    """Calls in flight per endpoint at most (`--concurrency`); None: adaptive (`ratelimit.py`)."""
    data_dir: Path = Path("aib-data")
    env: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    factories: tuple[ClientFactory, ...] = ()
    show_progress: bool = True
    item_ids: frozenset[str] | None = None
    """Judge only these stored items (e.g. a calibration sample); None judges every one."""


def rubric_of_items(items: list[ItemRecord]) -> dict[str, str]:
    """Each item's rubric: its scenario's own in a shipped suite, else the default for its kind."""
    suites: dict[str, Suite | None] = {}
    known = set(available_suites())
    out: dict[str, str] = {}
    for item in items:
        suite_id = item.run.suite_id
        if suite_id not in suites:
            suite = load_suite(suite_id) if suite_id in known else None
            suites[suite_id] = (
                suite if suite and suite.content_hash == item.run.suite_hash else None
            )
        suite = suites[suite_id]
        try:
            out[item.id] = suite.scenario(item.scenario_id).rubric if suite else ""
        except KeyError:
            out[item.id] = ""
        out[item.id] = out[item.id] or kind_named(item.kind).rubric
    return out


async def judge_stored_async(options: JudgeOptions) -> RunSummary:
    """Judge every finished stored transcript with `options.judge` (adding, never replacing)."""
    raise_open_file_limit()
    judge = judge_of(options)
    async with LocalModels((judge,), options.env, status_lines(options.show_progress)) as local:
        factories = options.factories + local.factories()
        pool = ClientPool(
            env=options.env,
            concurrency=options.concurrency,
            factories=factories,
            missing_key_hint=_missing_key_hint,
        )
        try:
            await survey_endpoints(pool, (judge,))
            await local.load_all((judge,))  # after the survey, as in `aib run`
            return await _judge_on_pool(options, judge, pool)
        finally:
            await pool.aclose()


def judge_of(options: JudgeOptions) -> ModelSpec:
    """The judge `options` name, chosen as `aib run` chooses one (`plan.choose_judge`): on
    `--base-url`, in `--judge-form`."""
    named = RunOptions(
        judge=options.judge,
        judge_base_url=options.base_url,
        judge_form=options.judge_form,
        env=options.env,
    )
    return choose_judge(named, (), None)


async def _judge_on_pool(options: JudgeOptions, judge: ModelSpec, pool: ClientPool) -> RunSummary:
    with Store(options.data_dir, create=False) as store:
        items = store.items(suite_id=options.suite_id, status="done")
        if options.item_ids is not None:
            items = [item for item in items if item.id in options.item_ids]
        if not items:
            raise UserError("the store holds no finished transcripts to judge; run 'aib run'")
        progress = RichProgress() if options.show_progress else None
        engine = Engine(store, pool, retry=options.retry, progress=progress)
        rubrics = rubric_of_items(items)
        work = engine.judge(items, judge, rubrics, repeats=options.repeats)
        answered = lambda: engine.summary.calls  # noqa: E731
        if progress is not None:
            with progress:
                return await until_stopped(work, engine.stop, answered)
        return await until_stopped(work, engine.stop, answered)


def judge_stored(options: JudgeOptions) -> RunSummary:
    """`judge_stored_async` run to completion: the Python API of `aib judge`."""
    return asyncio.run(judge_stored_async(options))


def judge_command(options: JudgeOptions, *, echo: Echo) -> int:
    """`aib judge`; returns the exit status (`EXIT_SOME_FAILED` when a judgment failed)."""
    summary = judge_stored(options)
    label = judge_label_of(judge_of(options))
    echo(
        f"judge {label}: {summary.judged} judged, {summary.judge_cached} already judged, "
        f"{summary.judge_unscored} unscored, {summary.judge_failed} failed"
    )
    for line in render_failure_summary(summary.failures, what="judgments"):
        echo(line)
    return EXIT_SOME_FAILED if summary.failures else 0
