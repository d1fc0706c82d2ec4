"""What each CLI command does, as plain library functions over option objects.

`run_benchmark`, `judge_stored` and `build_leaderboard` are the Python API; the `*_command`
functions add the terminal output the CLI shows. All validation that can fail — suite, config,
keys, endpoint reachability — happens before the store is opened, so bad input never leaves a
half-written store behind.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from independence_bench.clients.budget import CostGuard, Price
from independence_bench.clients.catalog import Listing, resolve_prices, survey_endpoints
from independence_bench.clients.config import (
    DEFAULT_JUDGE,
    ModelSpec,
    load_models_file,
    specs_from_names,
)
from independence_bench.clients.endpoints import (
    OPENROUTER_KEY_ENV,
    ClientFactory,
    ClientPool,
    RetryPolicy,
)
from independence_bench.clients.local.local_models import (
    LOCAL_RUNS,
    OFFLINE_NOTICE,
    LocalModels,
    all_local,
    offline_defaults,
)
from independence_bench.clients.presets import load_preset
from independence_bench.clients.ratelimit import describe_limits
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.engine.estimate import estimate_run, render_estimate
from independence_bench.engine.failures import (
    EXIT_SOME_FAILED,
    render_failed_items,
    render_failure_summary,
)
from independence_bench.engine.progress import RichProgress
from independence_bench.errors import UserError
from independence_bench.legacy.scoring import legacy_leaderboard
from independence_bench.reports.charts import require_matplotlib, safe_name, write_charts
from independence_bench.reports.exports import results_csv, results_document
from independence_bench.reports.insight_tables import leaderboard_output
from independence_bench.reports.insights import InsightOptions
from independence_bench.reports.leaderboard import load_leaderboard, render_table, rows_as_json
from independence_bench.reports.report import build_reports
from independence_bench.reports.report_markdown import render_leaderboard
from independence_bench.reports.spend import Spend, run_spend, spend_line
from independence_bench.reports.viewer import serve_viewer, write_viewer
from independence_bench.stats.analysis import Leaderboard
from independence_bench.stats.bootstrap import DEFAULT_RESAMPLES
from independence_bench.store.run_status import next_run_numbers, render_run_states, run_states
from independence_bench.store.store import STORE_FILENAME, ItemRecord, Store
from independence_bench.suites.kinds import kind_named
from independence_bench.suites.selection import EVERYTHING, Selection, select_suite
from independence_bench.suites.suite import Suite, available_suites, load_suite

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
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    factories: tuple[ClientFactory, ...] = ()
    show_progress: bool = True
    timeout_s: float = 300.0
    """Seconds one HTTP call may take before it counts as failed (and is retried)."""
    fresh: bool = False
    """Start new run numbers after the stored ones instead of completing runs 1..N."""
    scenarios: tuple[str, ...] = ()
    """Run only these scenarios of the suite (a subset has its own content hash)."""
    max_cost: float | None = None
    """Stop sending new calls before this session's spending would pass this many USD."""
    preset: str | None = None
    """A shipped model list (`data/presets/<name>.yaml`), used like `config_path`."""
    reasoning_effort: str | None = None
    """Overrides every tested model's reasoning effort (not the judge's)."""
    selection: Selection = EVERYTHING
    """Run only these experiments, prompt variants and delivery modes (own content hash)."""


def planned_suite(options: RunOptions) -> Suite:
    """The suite `options` ask for, narrowed by `--scenarios` and the selectors."""
    suite = load_suite(options.suite_id)
    if options.scenarios:
        suite = suite.subset(options.scenarios)
    return select_suite(suite, options.selection)


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


def resolve_models(options: RunOptions) -> tuple[tuple[ModelSpec, ...], ModelSpec | None]:
    """The model specs and judge spec a run option set asks for."""
    sources = [options.models, options.config_path, options.preset]
    if sum(source is not None for source in sources) > 1:
        raise UserError("give one of --models, --config or --preset, not several")
    config_judge: ModelSpec | None = None
    if options.config_path is not None or options.preset is not None:
        models_file = (
            load_models_file(options.config_path)
            if options.config_path is not None
            else load_preset(str(options.preset))
        )
        specs = models_file.models
        config_judge = models_file.judge
        if options.base_url:
            specs = tuple(
                s if s.base_url else s.model_copy(update={"base_url": options.base_url})
                for s in specs
            )
    elif options.models:
        specs = specs_from_names(options.models, base_url=options.base_url)
    elif offline_run(options):
        subject, offline_judge = offline_defaults(options.seed)
        specs, config_judge = (subject,), offline_judge
    else:
        raise UserError("no models to test; pass --models a,b or --config models.yaml")
    if options.seed is not None:
        specs = tuple(s.model_copy(update={"seed": options.seed}) for s in specs)
    if options.reasoning_effort is not None:
        effort = {"reasoning_effort": options.reasoning_effort}
        specs = tuple(s.model_copy(update=effort) for s in specs)
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
    options_env: Mapping[str, str],
    concurrency: int,
    factories: tuple[ClientFactory, ...],
    timeout_s: float = 300.0,
) -> ClientPool:
    return ClientPool(
        env=options_env, concurrency=concurrency, factories=factories, timeout_s=timeout_s
    )


async def _preflight(pool: ClientPool, specs: tuple[ModelSpec, ...]) -> dict[str, Listing | None]:
    """Create every endpoint (checking keys) and check what each one serves (`catalog.py`)."""
    return await survey_endpoints(pool, specs)


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
        raise UserError(
            f"--max-cost needs a price for every model, unknown for {unknown}; set "
            "price_prompt_per_mtok and price_completion_per_mtok in models.yaml"
        )
    known: dict[str, Price] = {k: v for k, v in prices.items() if v is not None}
    return CostGuard(options.max_cost, known)


def offline_run(options: RunOptions) -> bool:
    """No models named, no endpoint and no OpenRouter key: use the embedded models."""
    chosen = options.models or options.config_path or options.preset or options.base_url
    return not chosen and not (options.env.get(OPENROUTER_KEY_ENV))


async def run_benchmark_async(options: RunOptions) -> RunResult:
    """Validate, run and judge everything `options` asks for; return the summary and ranking."""
    suite = planned_suite(options)
    specs, judge = resolve_models(options)
    everyone = specs + ((judge,) if judge else ())
    runs = options.runs or (LOCAL_RUNS if all_local(specs) else DEFAULT_API_RUNS)
    notify = _status_lines(options.show_progress)
    async with LocalModels(everyone, options.env, notify) as local:
        factories = options.factories + local.factories()
        pool = _make_pool(options.env, options.concurrency, factories, options.timeout_s)
        try:
            await local.load_all(everyone)
            return await _run_on_pool(options, suite, specs, judge, runs, pool)
        finally:
            await pool.aclose()


async def _run_on_pool(
    options: RunOptions,
    suite: Suite,
    specs: tuple[ModelSpec, ...],
    judge: ModelSpec | None,
    runs: int,
    pool: ClientPool,
) -> RunResult:
    everyone = specs + ((judge,) if judge else ())
    listings = await _preflight(pool, everyone)
    guard = _cost_guard(options, everyone, listings, pool)
    with Store(options.data_dir) as store:
        progress = (
            RichProgress(limits=lambda: _limits_text(pool)) if options.show_progress else None
        )
        prices = resolve_prices(everyone, listings, pool)
        engine = Engine(
            store, pool, retry=options.retry, progress=progress, budget=guard, prices=prices
        )
        first_run = next_run_numbers(store, suite, specs) if options.fresh else {}
        plan = RunPlan(suite=suite, models=specs, judge=judge, runs=runs, first_run=first_run)
        if progress is not None:
            with progress:
                summary = await engine.run(plan)
        else:
            summary = await engine.run(plan)
        try:
            board: Leaderboard | None = load_leaderboard(
                store,
                suite_id=suite.id,
                judge=judge.display_label if judge else None,
                only_hash=suite.content_hash,
            )
        except UserError:
            if summary.judged or summary.judge_cached or summary.judge_unscored:
                raise
            board = None  # nothing judged yet (all failed, or the cost cap): report, not raise
        spend = run_spend(
            store,
            suite_id=suite.id,
            suite_hash=suite.content_hash,
            labels=[s.display_label for s in specs],
            judge=judge.display_label if judge else None,
        )
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
    return RunResult(suite, specs, judge, summary, board, guard, spend)


def _status_lines(show: bool) -> Callable[[str], None] | None:
    """Where status lines before the progress bars go (model loading, weight assembly)."""
    if not show:
        return None
    return lambda text: print(text, file=sys.stderr, flush=True)


def _limits_text(pool: ClientPool) -> str:
    return describe_limits((e.name, e.limiter) for e in pool.endpoints())


def run_benchmark(options: RunOptions) -> RunResult:
    return asyncio.run(run_benchmark_async(options))


def run_command(options: RunOptions, *, echo: Echo) -> int:
    """`aib run`; returns the exit status (`EXIT_SOME_FAILED` when anything failed, else 0)."""
    if offline_run(options) and not options.judge:
        echo(OFFLINE_NOTICE)
    result = run_benchmark(options)
    summary = result.summary
    echo(
        f"suite {result.suite.id} ({result.suite.content_hash[:12]}): "
        f"{summary.items_done} conversations run, {summary.items_cached} cached, "
        f"{summary.items_failed} failed; {summary.judged} judged, "
        f"{summary.judge_cached} already judged, {summary.judge_unscored} unscored; "
        f"{summary.calls} API calls"
    )
    echo(render_table(result.leaderboard))
    left_out = options.selection.left_out(load_suite(options.suite_id).experiments)
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
            f"${result.budget.cap_usd:.4f} spent; {summary.items_skipped} conversations and "
            f"{summary.judge_skipped} judgments not started — run the same command again "
            "(with a higher or no --max-cost) to resume"
        )
    return EXIT_SOME_FAILED if summary.failures else 0


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
    judge = ModelSpec(
        id=options.judge, label=options.judge, base_url=options.base_url, temperature=0.0
    )
    async with LocalModels((judge,), options.env, _status_lines(options.show_progress)) as local:
        factories = options.factories + local.factories()
        pool = _make_pool(options.env, options.concurrency, factories)
        try:
            await local.load_all((judge,))
            await _preflight(pool, (judge,))
            return await _judge_on_pool(options, judge, pool)
        finally:
            await pool.aclose()


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
        if progress is not None:
            with progress:
                return await engine.judge(items, judge, rubrics, repeats=options.repeats)
        return await engine.judge(items, judge, rubrics, repeats=options.repeats)


def judge_command(options: JudgeOptions, *, echo: Echo) -> int:
    """`aib judge`; returns the exit status (`EXIT_SOME_FAILED` when a judgment failed)."""
    summary = asyncio.run(judge_stored_async(options))
    echo(
        f"judge {options.judge}: {summary.judged} judged, {summary.judge_cached} already judged, "
        f"{summary.judge_unscored} unscored, {summary.judge_failed} failed"
    )
    for line in render_failure_summary(summary.failures, what="judgments"):
        echo(line)
    return EXIT_SOME_FAILED if summary.failures else 0


@dataclass(frozen=True)
class LeaderboardOptions:
    suite_id: str | None = None
    judge: str | None = None
    data_dir: Path = Path("aib-data")
    method: str = "default"
    """``default`` (our scoring) or ``legacy`` (the earlier implementation's, see legacy.py)."""
    judges: tuple[str, ...] = ()
    """A judge panel (mean per item, with inter-judge agreement); default method only."""
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    """Seed of the bootstrap (not of sampling)."""
    selection: Selection = EVERYTHING
    """Only these experiments, variants and modes (no index when an experiment is left out)."""
    detailed: bool = False
    """Add the detailed metrics and the names each model chose."""


def leaderboard_command(options: LeaderboardOptions, *, as_json: bool, echo: Echo) -> None:
    if options.method != "legacy":
        insight = InsightOptions(
            data_dir=options.data_dir,
            suite_id=options.suite_id,
            judge=options.judge,
            judges=options.judges,
            n_resamples=options.n_resamples,
            seed=options.seed,
            selection=options.selection,
        )
        echo(leaderboard_output(insight, as_json=as_json, detailed=options.detailed))
        return
    if options.judges:
        raise UserError("--judges needs the default method; legacy scoring uses one judge")
    if options.selection.active or options.detailed:
        raise UserError(
            "--experiments, --variants, --modes and --detailed need the default method; "
            "legacy scoring reproduces the published tables as they were"
        )
    with Store(options.data_dir, create=False) as store:
        board = legacy_leaderboard(store, suite_id=options.suite_id, judge=options.judge)
    if as_json:
        echo(json.dumps(rows_as_json(board), indent=2))
    else:
        echo(render_table(board))


@dataclass(frozen=True)
class ReportOptions:
    """`aib report`: which suites and judge, where to write, and the bootstrap settings."""

    data_dir: Path = Path("aib-data")
    out: Path | None = None
    """Default: `<data_dir>/report`."""
    suite_id: str | None = None
    """Default: every suite in the store, one section each."""
    judge: str | None = None
    charts: bool = True
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    selection: Selection = EVERYTHING
    """Only these experiments, variants and modes (no index when an experiment is left out)."""


def write_report(options: ReportOptions) -> tuple[Path, list[Path]]:
    """Write LEADERBOARD.md, results.json, results.csv and charts; return the folder and charts.

    Reads the store only (no API call). Checks for matplotlib before writing anything.
    """
    if options.charts:
        require_matplotlib()
    out = options.out or options.data_dir / "report"
    with Store(options.data_dir, create=False) as store:
        reports = build_reports(
            store,
            suite_id=options.suite_id,
            judge=options.judge,
            n_resamples=options.n_resamples,
            seed=options.seed,
            selection=options.selection,
        )
    charts: dict[str, list[Path]] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for report in reports if options.charts else []:
            folder = out / "charts" / safe_name(report.suite_id)
            charts[report.suite_id] = write_charts(report, folder)
        relative = {suite: [p.relative_to(out) for p in paths] for suite, paths in charts.items()}
        (out / "LEADERBOARD.md").write_text(render_leaderboard(reports, relative), "utf-8")
        document = json.dumps(results_document(reports), indent=1, ensure_ascii=False)
        (out / "results.json").write_text(document + "\n", "utf-8")
        (out / "results.csv").write_text(results_csv(reports), "utf-8")
    except OSError as exc:
        raise UserError(f"cannot write the report to {out}: {exc}; choose another --out") from None
    return out, [path for paths in charts.values() for path in paths]


def report_command(options: ReportOptions, *, echo: Echo) -> None:
    out, charts = write_report(options)
    files = "LEADERBOARD.md, results.json, results.csv"
    echo(f"report written to {out}: {files} and {len(charts)} charts")


async def estimate_benchmark_async(options: RunOptions) -> str:
    """`aib estimate`: what `run_benchmark(options)` would call and cost, as printable text.

    Nothing is sent but each endpoint's model list (for prices); an endpoint that does not
    answer leaves its prices to `models.yaml` or unknown.
    """
    suite = planned_suite(options)
    specs, judge = resolve_models(options)
    count = options.runs or (LOCAL_RUNS if all_local(specs) else DEFAULT_API_RUNS)
    everyone = specs + ((judge,) if judge else ())
    async with LocalModels(everyone, options.env) as local:
        factories = options.factories + local.factories()
        pool = _make_pool(options.env, options.concurrency, factories, options.timeout_s)
        try:
            listings = await survey_endpoints(pool, everyone, require_answer=False)
            prices = resolve_prices(everyone, listings, pool)
        finally:
            await pool.aclose()
    first_run: dict[str, int] = {}
    done: set[str] = set()
    judged: set[str] = set()
    if (options.data_dir / STORE_FILENAME).exists():
        with Store(options.data_dir, create=False) as store:
            if options.fresh:
                first_run = next_run_numbers(store, suite, specs)
            else:
                done = {i.id for i in store.items(suite_id=suite.id, status="done")}
                if judge is not None:
                    judged = {j.item_id for j in store.judgments(judge_model=judge.display_label)}
    runs = {}
    for spec in specs:
        first = first_run.get(spec.display_label, 1)
        runs[spec.display_label] = range(first, first + count)
    lines = estimate_run(suite, specs, judge, runs, prices, done_items=done, judged_items=judged)
    runs_text = f"{count} run{'s' if count > 1 else ''} per model"
    return render_estimate(suite, lines, runs_text)


def estimate_command(options: RunOptions, *, echo: Echo) -> None:
    echo(asyncio.run(estimate_benchmark_async(options)))


@dataclass(frozen=True)
class RunsOptions:
    suite_id: str | None = None
    data_dir: Path = Path("aib-data")
    failed: bool = False
    """List every failed conversation with its full error instead of the runs."""


def runs_command(options: RunsOptions, *, echo: Echo) -> None:
    """`aib runs`: every stored run with its state, or (`failed`) every failed conversation."""
    with Store(options.data_dir, create=False) as store:
        if options.failed:
            echo(render_failed_items(store.items(suite_id=options.suite_id, status="failed")))
        else:
            echo(render_run_states(run_states(store, suite_id=options.suite_id)))


@dataclass(frozen=True)
class ViewOptions:
    """`aib view`: which suites and judge, where to write the viewer, and the bootstrap."""

    data_dir: Path = Path("aib-data")
    out: Path | None = None
    """Default: `<data_dir>/viewer`."""
    suite_id: str | None = None
    """Default: every suite in the store, one leaderboard each."""
    judge: str | None = None
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0


def build_viewer(options: ViewOptions) -> Path:
    """Write the static viewer folder from the store (no API call); return its index.html."""
    out = options.out or options.data_dir / "viewer"
    with Store(options.data_dir, create=False) as store:
        reports = build_reports(
            store,
            suite_id=options.suite_id,
            judge=options.judge,
            n_resamples=options.n_resamples,
            seed=options.seed,
        )
        return write_viewer(store, reports, out)


def view_command(options: ViewOptions, *, serve: bool, port: int, echo: Echo) -> None:
    index = build_viewer(options)
    echo(f"viewer written to {index}; open it in a browser (works from file://)")
    if serve:
        serve_viewer(index.parent, port, echo=echo)
