"""The `aib` command line: each command parses options into a config and calls one library function.

Every problem the user can fix ends as one line on stderr and exit status 2 — usage errors,
bad config, missing keys, unreachable endpoints — with no traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from independence_bench import __version__
from independence_bench.errors import UserError
from independence_bench.workflows import (
    JudgeOptions,
    LeaderboardOptions,
    RunOptions,
    describe_models,
    judge_command,
    leaderboard_command,
    run_command,
)

F = TypeVar("F", bound=Callable[..., Any])
DATA_DIR_ENV = "AIB_DATA_DIR"


def read_env(cwd: Path) -> dict[str, str]:
    """The process environment, with `.env` in the working directory filling unset names."""
    env = dict(os.environ)
    dotenv = cwd / ".env"
    if dotenv.is_file():
        for line in dotenv.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            name, _, value = line.removeprefix("export ").partition("=")
            env.setdefault(name.strip(), value.strip().strip("'\""))
    return env


def data_dir_option(func: F) -> F:
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"Where the store lives (default ${DATA_DIR_ENV} or ./aib-data).",
    )(func)


def resolve_data_dir(value: Path | None, env: Mapping[str, str]) -> Path:
    if value is not None:
        return value
    return Path(env.get(DATA_DIR_ENV) or "aib-data")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aib")
def cli() -> None:
    """AI Independence Bench: does a model keep its own persona under pressure?"""


@cli.command()
@click.option("--models", default=None, help="Comma-separated model ids to test.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A models.yaml with models (and optionally the judge).",
)
@click.option("--judge", default=None, help="Judge model id.")
@click.option("--suite", default="v2", show_default=True, help="Suite: v2, lite or full.")
@click.option("--runs", type=click.IntRange(1, 100), default=None, help="Runs per model.")
@click.option("--base-url", default=None, help="An OpenAI-compatible endpoint for the models.")
@click.option(
    "--judge-base-url", default=None, help="Endpoint for the judge (default: --base-url)."
)
@click.option("--concurrency", type=click.IntRange(1, 4096), default=16, show_default=True)
@click.option("--seed", type=int, default=None, help="Sampling seed sent with every request.")
@data_dir_option
def run(
    models: str | None,
    config_path: Path | None,
    judge: str | None,
    suite: str,
    runs: int | None,
    base_url: str | None,
    judge_base_url: str | None,
    concurrency: int,
    seed: int | None,
    data_dir: Path | None,
) -> None:
    """Run the benchmark: converse, judge, and print the leaderboard."""
    env = read_env(Path.cwd())
    options = RunOptions(
        models=models,
        config_path=config_path,
        judge=judge,
        suite_id=suite,
        runs=runs,
        base_url=base_url,
        judge_base_url=judge_base_url,
        concurrency=concurrency,
        seed=seed,
        data_dir=resolve_data_dir(data_dir, env),
        env=env,
    )
    run_command(options, echo=_echo)


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
) -> None:
    """Judge stored transcripts with a judge; existing judgments are kept, new ones added."""
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
    judge_command(options, echo=_echo)


@cli.command()
@click.option("--suite", default=None, help="Suite to rank (default: the one in the store).")
@click.option("--judge", default=None, help="Use this judge's scores (default: the run's judge).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@data_dir_option
def leaderboard(suite: str | None, judge: str | None, as_json: bool, data_dir: Path | None) -> None:
    """Rank the models in the store by Independence Index."""
    env = read_env(Path.cwd())
    options = LeaderboardOptions(
        suite_id=suite, judge=judge, data_dir=resolve_data_dir(data_dir, env)
    )
    leaderboard_command(options, as_json=as_json, echo=_echo)


@cli.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The models.yaml to check.",
)
def models(config_path: Path) -> None:
    """Validate a models.yaml and list what it configures."""
    _echo(describe_models(config_path))


def _echo(text: str) -> None:
    click.echo(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `aib` script; returns the exit status."""
    try:
        cli.main(
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
        click.echo(f"aib: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo(
            "aib: interrupted; completed calls are stored, run the command again to resume",
            err=True,
        )
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
