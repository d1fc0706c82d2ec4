"""What each CLI command does, as plain library functions over option objects.

`run_benchmark`, `judge_stored` and `build_leaderboard` are the Python API; the `*_command`
functions add the terminal output the CLI shows. All validation that can fail — suite, config,
keys, endpoint reachability — happens before the store is opened, so bad input never leaves a
half-written store behind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from independence_bench.config import (
    DEFAULT_JUDGE,
    ModelSpec,
    load_models_file,
    specs_from_names,
)
from independence_bench.endpoints import ClientFactory, ClientPool, RetryPolicy
from independence_bench.engine import DEFAULT_RUBRIC_OF_KIND, Engine, RunPlan, RunSummary
from independence_bench.errors import UserError
from independence_bench.leaderboard import LeaderboardRow, build_rows, render_table, rows_as_json
from independence_bench.progress import RichProgress
from independence_bench.store import ItemRecord, Store
from independence_bench.suite import Suite, available_suites, load_suite

Echo = Callable[[str], None]
DEFAULT_API_RUNS = 5


@dataclass(frozen=True)
class RunOptions:
    models: str | None = None
    config_path: Path | None = None
    judge: str | None = None
    suite_id: str = "v2"
    runs: int | None = None
    base_url: str | None = None
    judge_base_url: str | None = None
    concurrency: int = 16
    seed: int | None = None
    data_dir: Path = Path("aib-data")
    env: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    factories: tuple[ClientFactory, ...] = ()
    show_progress: bool = True


@dataclass(frozen=True)
class RunResult:
    suite: Suite
    models: tuple[ModelSpec, ...]
    judge: ModelSpec | None
    summary: RunSummary
    rows: tuple[LeaderboardRow, ...]


def resolve_models(options: RunOptions) -> tuple[tuple[ModelSpec, ...], ModelSpec | None]:
    """The model specs and judge spec a run option set asks for."""
    if options.models and options.config_path:
        raise UserError("give either --models or --config, not both")
    config_judge: ModelSpec | None = None
    if options.config_path is not None:
        models_file = load_models_file(options.config_path)
        specs = models_file.models
        config_judge = models_file.judge
        if options.base_url:
            specs = tuple(
                s if s.base_url else s.model_copy(update={"base_url": options.base_url})
                for s in specs
            )
    elif options.models:
        specs = specs_from_names(options.models, base_url=options.base_url)
    else:
        raise UserError("no models to test; pass --models a,b or --config models.yaml")
    if options.seed is not None:
        specs = tuple(s.model_copy(update={"seed": options.seed}) for s in specs)
    judge_url = options.judge_base_url or options.base_url
    if options.judge:
        judge = ModelSpec(
            id=options.judge,
            label=options.judge,
            base_url=judge_url,
            temperature=0.0,
            seed=options.seed,
        )
    elif config_judge is not None:
        judge = config_judge
    elif judge_url:
        raise UserError(
            f"--judge is required with a custom endpoint ({judge_url}); name a model "
            "that endpoint serves"
        )
    else:
        judge = ModelSpec(id=DEFAULT_JUDGE, label=DEFAULT_JUDGE, temperature=0.0, seed=options.seed)
    labels = [s.display_label for s in specs]
    duplicated = sorted({label for label in labels if labels.count(label) > 1})
    if duplicated:
        raise UserError(f"model configurations share a label: {duplicated}; give each a 'label'")
    return specs, judge


def _make_pool(
    options_env: Mapping[str, str], concurrency: int, factories: tuple[ClientFactory, ...]
) -> ClientPool:
    return ClientPool(env=options_env, concurrency=concurrency, factories=factories)


async def _preflight(pool: ClientPool, specs: tuple[ModelSpec, ...]) -> None:
    """Create every endpoint (checking keys) and make sure each one answers at all."""
    for spec in specs:
        pool.endpoint_for(spec)
    for endpoint in pool.endpoints():
        check = getattr(endpoint.client, "preflight", None)
        if check is not None:
            problem = await check()
            if problem:
                raise UserError(problem)


async def run_benchmark_async(options: RunOptions) -> RunResult:
    """Validate, run and judge everything `options` asks for; return the summary and ranking."""
    suite = load_suite(options.suite_id)
    specs, judge = resolve_models(options)
    runs = options.runs or DEFAULT_API_RUNS
    pool = _make_pool(options.env, options.concurrency, options.factories)
    try:
        await _preflight(pool, specs + ((judge,) if judge else ()))
        with Store(options.data_dir) as store:
            progress = RichProgress() if options.show_progress else None
            engine = Engine(store, pool, retry=options.retry, progress=progress)
            plan = RunPlan(suite=suite, models=specs, judge=judge, runs=runs)
            if progress is not None:
                with progress:
                    summary = await engine.run(plan)
            else:
                summary = await engine.run(plan)
            rows = build_rows(
                store, suite_id=suite.id, judge=judge.display_label if judge else None
            )
    finally:
        await pool.aclose()
    if (
        judge is not None
        and summary.judge_unscored
        and not summary.judged
        and not summary.judge_cached
    ):
        raise UserError(
            f"judge {judge.display_label} returned no valid judgment ({summary.judge_unscored} "
            "replies failed validation; transcripts are stored); pick a judge that can follow "
            "JSON instructions and run 'aib judge --judge MODEL'"
        )
    return RunResult(suite, specs, judge, summary, tuple(rows))


def run_benchmark(options: RunOptions) -> RunResult:
    return asyncio.run(run_benchmark_async(options))


def run_command(options: RunOptions, *, echo: Echo) -> None:
    result = run_benchmark(options)
    summary = result.summary
    echo(
        f"suite {result.suite.id} ({result.suite.content_hash[:12]}): "
        f"{summary.items_done} conversations run, {summary.items_cached} cached, "
        f"{summary.items_failed} failed; {summary.judged} judged, "
        f"{summary.judge_cached} already judged, {summary.judge_unscored} unscored; "
        f"{summary.calls} API calls"
    )
    for failure in summary.failures[:10]:
        echo(f"  failed: {failure}")
    echo(render_table(result.rows))


@dataclass(frozen=True)
class JudgeOptions:
    judge: str
    base_url: str | None = None
    suite_id: str | None = None
    repeats: int = 1
    concurrency: int = 16
    data_dir: Path = Path("aib-data")
    env: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    factories: tuple[ClientFactory, ...] = ()
    show_progress: bool = True


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
        out[item.id] = out[item.id] or DEFAULT_RUBRIC_OF_KIND[item.kind]
    return out


async def judge_stored_async(options: JudgeOptions) -> RunSummary:
    """Judge every finished stored transcript with `options.judge` (adding, never replacing)."""
    judge = ModelSpec(
        id=options.judge, label=options.judge, base_url=options.base_url, temperature=0.0
    )
    pool = _make_pool(options.env, options.concurrency, options.factories)
    try:
        await _preflight(pool, (judge,))
        with Store(options.data_dir, create=False) as store:
            items = store.items(suite_id=options.suite_id, status="done")
            if not items:
                raise UserError("the store holds no finished transcripts to judge; run 'aib run'")
            progress = RichProgress() if options.show_progress else None
            engine = Engine(store, pool, retry=options.retry, progress=progress)
            rubrics = rubric_of_items(items)
            if progress is not None:
                with progress:
                    return await engine.judge(items, judge, rubrics, repeats=options.repeats)
            return await engine.judge(items, judge, rubrics, repeats=options.repeats)
    finally:
        await pool.aclose()


def judge_command(options: JudgeOptions, *, echo: Echo) -> None:
    summary = asyncio.run(judge_stored_async(options))
    echo(
        f"judge {options.judge}: {summary.judged} judged, {summary.judge_cached} already judged, "
        f"{summary.judge_unscored} unscored, {summary.judge_failed} failed"
    )


@dataclass(frozen=True)
class LeaderboardOptions:
    suite_id: str | None = None
    judge: str | None = None
    data_dir: Path = Path("aib-data")


def leaderboard_command(options: LeaderboardOptions, *, as_json: bool, echo: Echo) -> None:
    with Store(options.data_dir, create=False) as store:
        rows = build_rows(store, suite_id=options.suite_id, judge=options.judge)
    if as_json:
        echo(json.dumps(rows_as_json(rows), indent=2))
    else:
        echo(render_table(rows))


def describe_models(path: Path) -> str:
    models_file = load_models_file(path)
    lines = [f"{path}: {len(models_file.models)} model(s)"]
    for spec in models_file.models:
        where = spec.base_url or "OpenRouter"
        lines.append(f"  {spec.display_label:<40} {spec.id} on {where}")
    if models_file.judge is not None:
        lines.append(f"  judge: {models_file.judge.display_label}")
    return "\n".join(lines)
