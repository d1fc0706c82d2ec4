"""The `aib` command line: each command parses options into a config and calls one library function.

Every problem the user can fix ends as one line on stderr and exit status 2 — usage errors,
bad config, missing keys, unreachable endpoints — with no traceback. `aib run` and `aib judge`
exit 3 when they finished but left conversations or judgments failed; a bug exits 1.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, get_args

import click
from dotenv import dotenv_values

from independence_bench import __version__
from independence_bench.clients.config import ReasoningEffort
from independence_bench.clients.presets import describe_models, preset_text
from independence_bench.clients.redact import Redactor, secrets_in_env
from independence_bench.errors import UserError
from independence_bench.legacy.importer import ImportOptions, import_command
from independence_bench.reports.calibration import calibration_output
from independence_bench.reports.insight_tables import (
    compare_output,
    configs_output,
    items_output,
    judges_output,
)
from independence_bench.reports.insights import InsightOptions
from independence_bench.stats.bootstrap import DEFAULT_RESAMPLES
from independence_bench.suites.selection import Selection
from independence_bench.workflows.workflows import (
    JudgeOptions,
    LeaderboardOptions,
    ReportOptions,
    RunOptions,
    RunsOptions,
    ViewOptions,
    estimate_command,
    judge_command,
    leaderboard_command,
    report_command,
    run_command,
    runs_command,
    view_command,
)

F = TypeVar("F", bound=Callable[..., Any])
DATA_DIR_ENV = "AIB_DATA_DIR"
EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)


def read_env(cwd: Path) -> dict[str, str]:
    """The process environment, with `.env` in the working directory filling unset names."""
    env = dict(os.environ)
    dotenv = cwd / ".env"
    if dotenv.is_file():
        # python-dotenv parses quoting, `export`, comments and multi-line values as shells do.
        for name, value in dotenv_values(dotenv, encoding="utf-8").items():
            if value is not None:
                env.setdefault(name, value)
    return env


def data_dir_option(func: F) -> F:
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"Where the store lives (default ${DATA_DIR_ENV} or ./aib-data).",
    )(func)


_SELECTOR_OPTIONS = (
    click.option(
        "--experiments",
        default=None,
        help="Only these experiments, comma-separated (identity, resistance, boundary, stability).",
    ),
    click.option(
        "--variants",
        default=None,
        help="Only these prompt variants, comma-separated (neutral, strong_independence).",
    ),
    click.option("--modes", default=None, help="Only these delivery modes (user_role, tool_role)."),
)


def selector_options(func: F) -> F:
    """`--experiments`, `--variants`, `--modes`: one cell of a suite alone (`selection.py`)."""
    for option in reversed(_SELECTOR_OPTIONS):
        func = option(func)
    return func


def _selection(values: Mapping[str, Any]) -> Selection:
    return Selection.parse(values["experiments"], values["variants"], values["modes"])


def resolve_data_dir(value: Path | None, env: Mapping[str, str]) -> Path:
    if value is not None:
        return value
    return Path(env.get(DATA_DIR_ENV) or "aib-data")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aib")
def cli() -> None:
    """AI Independence Bench: does a model keep its own persona under pressure?"""


_RUN_OPTIONS = (
    click.option("--models", default=None, help="Comma-separated model ids to test."),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="A models.yaml with models (and optionally the judge).",
    ),
    click.option(
        "--preset", default=None, help="A shipped model list (see 'aib models'), like --config."
    ),
    click.option(
        "--reasoning-effort",
        type=click.Choice(EFFORTS),
        default=None,
        help="Set every tested model's reasoning effort (off sends none).",
    ),
    click.option("--judge", default=None, help="Judge model id."),
    click.option("--suite", default="v2", show_default=True, help="Suite: v2, lite or full."),
    click.option(
        "--scenarios",
        default=None,
        help="Only these scenario ids of the suite, comma-separated (a quick smoke run).",
    ),
    click.option("--runs", type=click.IntRange(1, 100), default=None, help="Runs per model."),
    click.option("--base-url", default=None, help="An OpenAI-compatible endpoint for the models."),
    click.option(
        "--judge-base-url", default=None, help="Endpoint for the judge (default: --base-url)."
    ),
    click.option("--concurrency", type=click.IntRange(1, 4096), default=16, show_default=True),
    click.option("--seed", type=int, default=None, help="Sampling seed sent with every request."),
    click.option(
        "--timeout",
        "timeout_s",
        type=click.FloatRange(0.1, 3600),
        default=300.0,
        show_default=True,
        help="Seconds one API call may take before it is retried.",
    ),
    click.option(
        "--resume/--fresh",
        default=True,
        help="Complete runs 1..N (default), or start new run numbers after the stored ones.",
    ),
    click.option(
        "--max-cost",
        type=click.FloatRange(0, min_open=True),
        default=None,
        help="Stop sending new calls before this session would spend more USD (resumable).",
    ),
    data_dir_option,
)


def run_options(func: F) -> F:
    """The options `run` and `estimate` share."""
    for option in reversed(_RUN_OPTIONS):
        func = option(func)
    return selector_options(func)


def _run_options_from(values: dict[str, Any]) -> RunOptions:
    env = read_env(Path.cwd())
    return RunOptions(
        models=values["models"],
        config_path=values["config_path"],
        judge=values["judge"],
        suite_id=values["suite"],
        runs=values["runs"],
        base_url=values["base_url"],
        judge_base_url=values["judge_base_url"],
        concurrency=values["concurrency"],
        seed=values["seed"],
        data_dir=resolve_data_dir(values["data_dir"], env),
        env=env,
        timeout_s=values["timeout_s"],
        fresh=not values["resume"],
        max_cost=values["max_cost"],
        scenarios=tuple(x.strip() for x in (values["scenarios"] or "").split(",") if x.strip()),
        preset=values["preset"],
        reasoning_effort=values["reasoning_effort"],
        selection=_selection(values),
    )


@cli.command()
@run_options
def run(**values: Any) -> int:
    """Run the benchmark: converse, judge, and print the leaderboard.

    Running the same command again resumes: stored calls are never paid for twice. Exit status
    0: everything done; 3: finished, but some conversations or judgments failed (see `aib runs
    --failed`; the same command retries them); 2: bad input, nothing run.
    """
    return run_command(_run_options_from(values), echo=_echo)


@cli.command()
@run_options
def estimate(**values: Any) -> None:
    """Print the calls, tokens and cost a run would take, before sending anything."""
    estimate_command(_run_options_from(values), echo=_echo)


@cli.command("runs")
@click.option("--suite", default=None, help="Only runs of this suite.")
@click.option("--failed", is_flag=True, help="List every failed conversation with its error.")
@data_dir_option
def runs_(suite: str | None, failed: bool, data_dir: Path | None) -> None:
    """List the stored runs: complete, or partial with what is missing."""
    env = read_env(Path.cwd())
    options = RunsOptions(suite_id=suite, data_dir=resolve_data_dir(data_dir, env), failed=failed)
    runs_command(options, echo=_echo)


@cli.command()
@click.option("--judge", required=True, help="Judge model id to (re-)judge stored transcripts.")
@click.option("--base-url", default=None, help="An OpenAI-compatible endpoint for the judge.")
@click.option("--suite", default=None, help="Only items of this suite.")
@click.option("--repeats", type=click.IntRange(1, 10), default=1, show_default=True)
@click.option("--concurrency", type=click.IntRange(1, 4096), default=16, show_default=True)
@data_dir_option
def judge(
    judge: str,
    base_url: str | None,
    suite: str | None,
    repeats: int,
    concurrency: int,
    data_dir: Path | None,
) -> int:
    """Judge stored transcripts with a judge; existing judgments are kept, new ones added.

    Exit status 0, or 3 when some judgments failed (2: bad input).
    """
    env = read_env(Path.cwd())
    options = JudgeOptions(
        judge=judge,
        base_url=base_url,
        suite_id=suite,
        repeats=repeats,
        concurrency=concurrency,
        data_dir=resolve_data_dir(data_dir, env),
        env=env,
    )
    return judge_command(options, echo=_echo)


@cli.command()
@click.option("--suite", default=None, help="Suite to rank (default: the one in the store).")
@click.option("--judge", default=None, help="Use this judge's scores (default: the run's judge).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--method",
    type=click.Choice(["default", "legacy"]),
    default="default",
    show_default=True,
    help="Scoring rules: ours, or the earlier implementation's (reproduces its figures).",
)
@click.option(
    "--judges",
    default=None,
    help="A judge panel, comma-separated: mean per item, with inter-judge agreement (alpha).",
)
@click.option(
    "--resamples",
    type=click.IntRange(100, 1_000_000),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples for the intervals.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--detailed",
    is_flag=True,
    help="Also show reasoning quality, identity kept, graceful handling and chosen names.",
)
@selector_options
@data_dir_option
def leaderboard(
    suite: str | None,
    judge: str | None,
    as_json: bool,
    method: str,
    judges: str | None,
    resamples: int,
    seed: int,
    detailed: bool,
    data_dir: Path | None,
    **selectors: Any,
) -> None:
    """Rank the models in the store by Independence Index, with 95% intervals and rank intervals."""
    env = read_env(Path.cwd())
    options = LeaderboardOptions(
        suite_id=suite,
        judge=judge,
        data_dir=resolve_data_dir(data_dir, env),
        method=method,
        judges=_judge_list(judges),
        n_resamples=resamples,
        seed=seed,
        selection=_selection(selectors),
        detailed=detailed,
    )
    leaderboard_command(options, as_json=as_json, echo=_echo)


@cli.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The models.yaml to check.",
)
@click.option("--preset", default=None, help="A shipped model list to show.")
@click.option("--yaml", "as_yaml", is_flag=True, help="Print the preset's YAML (to edit a copy).")
def models(config_path: Path | None, preset: str | None, as_yaml: bool) -> None:
    """Validate a models.yaml or a preset and list it; with no option, list the presets."""
    if as_yaml:
        if preset is None:
            raise click.UsageError("--yaml prints a preset; add --preset NAME")
        _echo(preset_text(preset).rstrip())
        return
    _echo(describe_models(config_path, preset))


@cli.command("import")
@click.argument("path", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="That implementation's models.yaml naming the configurations "
    "(default: configs/models.yaml beside cache/).",
)
@data_dir_option
def import_(path: Path, labels: Path | None, data_dir: Path | None) -> None:
    """Import result folders of the earlier implementation (transcripts, verdicts, costs)."""
    env = read_env(Path.cwd())
    options = ImportOptions(path=path, data_dir=resolve_data_dir(data_dir, env), labels=labels)
    import_command(options, echo=_echo)


@cli.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write (default: <data-dir>/report).",
)
@click.option("--suite", default=None, help="Only this suite (default: every suite in the store).")
@click.option("--judge", default=None, help="Use this judge's scores (default: the run's judge).")
@click.option(
    "--charts/--no-charts", default=True, show_default=True, help="Draw charts (needs matplotlib)."
)
@click.option(
    "--resamples",
    type=click.IntRange(100, 1_000_000),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples for the intervals.",
)
@selector_options
@data_dir_option
def report(
    out: Path | None,
    suite: str | None,
    judge: str | None,
    charts: bool,
    resamples: int,
    data_dir: Path | None,
    **selectors: Any,
) -> None:
    """Write LEADERBOARD.md, results.json, results.csv and charts from the store."""
    env = read_env(Path.cwd())
    options = ReportOptions(
        data_dir=resolve_data_dir(data_dir, env),
        out=out,
        suite_id=suite,
        judge=judge,
        charts=charts,
        n_resamples=resamples,
        selection=_selection(selectors),
    )
    report_command(options, echo=_echo)


@cli.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write (default: <data-dir>/viewer).",
)
@click.option("--suite", default=None, help="Only this suite (default: every suite in the store).")
@click.option("--judge", default=None, help="Use this judge's scores (default: the run's judge).")
@click.option("--serve", is_flag=True, help="Also serve the viewer on 127.0.0.1 until Ctrl-C.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port for --serve (0 picks a free one).",
)
@click.option(
    "--resamples",
    type=click.IntRange(100, 1_000_000),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples for the intervals.",
)
@data_dir_option
def view(
    out: Path | None,
    suite: str | None,
    judge: str | None,
    serve: bool,
    port: int,
    resamples: int,
    data_dir: Path | None,
) -> None:
    """Write the transcript viewer (a static folder that works offline); optionally serve it."""
    env = read_env(Path.cwd())
    options = ViewOptions(
        data_dir=resolve_data_dir(data_dir, env),
        out=out,
        suite_id=suite,
        judge=judge,
        n_resamples=resamples,
    )
    view_command(options, serve=serve, port=port, echo=_echo)


# -- analyses of the store (insight_tables.py); none of them calls a model ------------------


def _judge_list(value: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


_ANALYSIS_OPTIONS = (
    click.option("--suite", default=None, help="Suite to analyse (default: the one in the store)."),
    click.option("--judge", default=None, help="Use this judge's scores (default: the main one)."),
    click.option("--judges", default=None, help="A judge panel, comma-separated: mean per item."),
    click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table."),
    data_dir_option,
)
_BOOTSTRAP_OPTIONS = (
    click.option(
        "--resamples",
        type=click.IntRange(100, 1_000_000),
        default=DEFAULT_RESAMPLES,
        show_default=True,
        help="Bootstrap resamples for the intervals.",
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed."),
)


def analysis_options(func: F) -> F:
    """The options every store-only analysis command shares."""
    for option in reversed(_ANALYSIS_OPTIONS):
        func = option(func)
    return func


def bootstrap_options(func: F) -> F:
    """`--resamples` and `--seed`, for analyses that show intervals."""
    for option in reversed(_BOOTSTRAP_OPTIONS):
        func = option(func)
    return func


def _insight_options(values: dict[str, Any]) -> InsightOptions:
    env = read_env(Path.cwd())
    return InsightOptions(
        data_dir=resolve_data_dir(values["data_dir"], env),
        suite_id=values["suite"],
        judge=values["judge"],
        judges=_judge_list(values["judges"]),
        n_resamples=values.get("resamples", DEFAULT_RESAMPLES),
        seed=values.get("seed", 0),
    )


@cli.command()
@click.option("--suite", default=None, help="Suite to analyse (default: the one in the store).")
@click.option("--judges", default=None, help="Only these judges, comma-separated (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the alpha intervals.")
@click.option(
    "--reference",
    default=None,
    help="Instead: each judge's agreement with this judge (rho, alpha, mean difference).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@data_dir_option
def judges(
    suite: str | None,
    judges: str | None,
    seed: int,
    reference: str | None,
    as_json: bool,
    data_dir: Path | None,
) -> None:
    """Compare the judges: index per model per judge, spread, self-preference, test-retest.

    With --reference JUDGE: per metric, each judge's agreement with that judge on the items
    both scored, and whether it orders the models alike.
    """
    env = read_env(Path.cwd())
    options = InsightOptions(
        data_dir=resolve_data_dir(data_dir, env),
        suite_id=suite,
        judges=_judge_list(judges),
        seed=seed,
    )
    if reference is not None:
        _echo(calibration_output(options, reference, as_json=as_json))
        return
    _echo(judges_output(options, as_json=as_json))


@cli.command()
@click.argument("models", nargs=-1)
@analysis_options
@bootstrap_options
def compare(models: tuple[str, ...], **values: Any) -> None:
    """Compare two models (A − B, paired), or with no MODELS every setting against its base.

    Settings are provider pins, reasoning efforts and temperatures: model labels such as
    base+provider@effort-tT that share a base model id.
    """
    _echo(compare_output(_insight_options(values), models, as_json=values["as_json"]))


@cli.command()
@analysis_options
def items(**values: Any) -> None:
    """Item difficulty: per scenario, how high models score and how well it separates them."""
    _echo(items_output(_insight_options(values), as_json=values["as_json"]))


@cli.command()
@analysis_options
@bootstrap_options
def configs(**values: Any) -> None:
    """Prompt variant × delivery mode cells against neutral + user_role (suite full)."""
    _echo(configs_output(_insight_options(values), as_json=values["as_json"]))


def _echo(text: str) -> None:
    click.echo(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `aib` script; returns the exit status.

    What it prints about a failure passes through a `Redactor` of every secret-named variable
    in the environment and `.env`, so an error that echoes a key does not print it.
    """
    redact = Redactor(secrets_in_env(read_env(Path.cwd())))
    try:
        status = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="aib",
            standalone_mode=False,
        )
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "aib"
        click.echo(f"aib: error: {exc.format_message()} (see '{command} --help')", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"aib: error: {exc.format_message()}", err=True)
        return 2
    except click.Abort:
        click.echo("aib: interrupted", err=True)
        return 130
    except UserError as exc:
        click.echo(redact(f"aib: error: {exc}"), err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo(
            "aib: interrupted; completed calls are stored, run the command again to resume",
            err=True,
        )
        return 130
    except Exception:
        # A bug: show the traceback, as Python would, but without any secret in it.
        click.echo(redact(traceback.format_exc()).rstrip(), err=True)
        return 1
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
