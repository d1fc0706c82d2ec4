"""`aib run`, `estimate`, `runs` and `judge`: the commands that call models or track runs.

Each command parses its options into the options object of its workflow and calls that
workflow's `*_command` (`workflows/run.py`, `estimate.py`, `runs.py`, `judge.py`). The workflow
is imported when the command runs, so `aib --help` does not load the engine or the clients.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from independence_bench.cli.options import (
    ENDPOINT_URL,
    concurrency_option,
    data_dir_option,
    echo_for,
    judge_form_option,
    read_env,
    resolve_data_dir,
    run_options,
    selection_of,
)

if TYPE_CHECKING:
    from independence_bench.workflows.plan import RunOptions

T = TypeVar("T")


_PASSED_AS_GIVEN = (
    "models",
    "config_path",
    "judge",
    "offline",
    "judge_form",
    "runs",
    "base_url",
    "judge_base_url",
    "concurrency",
    "seed",
    "timeout_s",
    "max_cost",
    "preset",
    "reasoning_effort",
    "temperature",
    "prompt_cache",
    "allow_partial",
    "user_model",
    "user_model_base_url",
)
"""The options of `aib run` and `aib estimate` that fill the `RunOptions` field of their name."""


def run_options_of(values: dict[str, Any]) -> RunOptions:
    """The `RunOptions` of `aib run` or `aib estimate` (`cli.options.run_options`)."""
    from independence_bench.suites.selection import split_list
    from independence_bench.workflows.plan import RunOptions

    return _options_of(
        RunOptions,
        values,
        _PASSED_AS_GIVEN,
        fresh=not values["resume"],
        scenarios=split_list(values["scenarios"]),
        selection=selection_of(values),
    )


def _options_of(
    kind: Callable[..., T], values: dict[str, Any], given: Sequence[str], **rest: Any
) -> T:
    """A workflow's options from a command's values: those named in `given` as given, `--suite`
    as `suite_id`, and the data folder and environment as read from here."""
    env = read_env(Path.cwd())
    return kind(
        **{name: values[name] for name in given},
        suite_id=values["suite"],
        data_dir=resolve_data_dir(values["data_dir"], env),
        env=env,
        **rest,
    )


@click.command()
@run_options
def run(**values: Any) -> int:
    """Run the benchmark: converse, judge, and print the leaderboard.

    Running the same command again resumes: stored calls are never paid for twice.

    \b
    Exit status:
      0    everything done
      2    bad input, nothing run
      3    finished, but some conversations or judgments failed
           (`aib runs --failed`; the same command retries them)
      130  stopped by Ctrl-C (a second one, or SIGTERM, stops at once);
           the same command resumes
      143  stopped by SIGTERM; the same command resumes
      129  stopped by SIGHUP (a closed terminal or SSH session); the same
           command resumes
    """
    from independence_bench.workflows.run import run_command

    return run_command(run_options_of(values), echo=echo_for())


@click.command()
@run_options
def estimate(**values: Any) -> None:
    """Print the calls, tokens and cost a run would take, before sending anything."""
    from independence_bench.workflows.estimate import estimate_command

    estimate_command(run_options_of(values), echo=echo_for())


@click.command("runs")
@click.option("--suite", default=None, help="Only runs of this suite.")
@click.option("--failed", is_flag=True, help="List every failed conversation with its error.")
@data_dir_option
def runs_(suite: str | None, failed: bool, data_dir: Path | None) -> None:
    """List the stored runs: complete, or partial with what is missing."""
    from independence_bench.workflows.runs import RunsOptions, runs_command

    env = read_env(Path.cwd())
    options = RunsOptions(suite_id=suite, data_dir=resolve_data_dir(data_dir, env), failed=failed)
    runs_command(options, echo=echo_for())


@click.command()
@click.option("--judge", required=True, help="Judge model id to (re-)judge stored transcripts.")
@click.option(
    "--base-url",
    type=ENDPOINT_URL,
    default=None,
    help="An OpenAI-compatible endpoint for the judge.",
)
@judge_form_option
@click.option("--suite", default=None, help="Only items of this suite.")
@click.option("--repeats", type=click.IntRange(1, 10), default=1, show_default=True)
@concurrency_option
@data_dir_option
def judge(**values: Any) -> int:
    """Judge stored transcripts with a judge; existing judgments are kept, new ones added.

    Exit status 0, or 3 when some judgments failed (2: bad input; 130/143/129: stopped by
    Ctrl-C/SIGTERM/SIGHUP after storing the calls in flight).
    """
    from independence_bench.workflows.judge import JudgeOptions, judge_command

    given = ("judge", "base_url", "judge_form", "repeats", "concurrency")
    return judge_command(_options_of(JudgeOptions, values, given), echo=echo_for())
