"""The options several `aib` commands share, each written once, and where they read from.

A decorator here adds one option or one block of options to a command, with its name, default
and help; a command module combines them and adds only what is its own. `read_env` and
`resolve_data_dir` turn the environment (and `.env`) into what an options object holds.

Importing this module imports click and nothing heavy: `aib --help` renders every command's
options from it, so the defaults it shows come from light modules (`stats/core.py`,
`clients/protocol.py`, `suites/__init__.py`, `judging/default_judges.py`).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import click

from independence_bench.clients.protocol import ReasoningEffort
from independence_bench.judging.default_judges import DEFAULT_JUDGE, LOCAL_JUDGE
from independence_bench.judging.forms import FORM_HELP, JUDGE_FORMS
from independence_bench.stats.core import DEFAULT_RESAMPLES, Resampling
from independence_bench.suites import DEFAULT_SUITE

if TYPE_CHECKING:
    from independence_bench.suites.selection import Selection

F = TypeVar("F", bound=Callable[..., Any])
DATA_DIR_ENV = "AIB_DATA_DIR"
EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)


def read_env(cwd: Path) -> dict[str, str]:
    """The process environment, with `.env` in the working directory filling unset names.

    A `.env` that is not UTF-8 or has a line that is not `NAME=value` is a `UserError` naming
    the line, not a warning: a key that silently went missing would fail later, far away."""
    env = dict(os.environ)
    dotenv = cwd / ".env"
    if dotenv.is_file():
        # python-dotenv parses quoting, `export`, comments and multi-line values as shells do.
        from dotenv import dotenv_values
        from dotenv.parser import parse_stream

        from independence_bench.errors import UserError, read_user_text

        text = read_user_text(dotenv, str(dotenv), "fix or remove it")
        for binding in parse_stream(io.StringIO(text)):
            # A line with no `=` parses as a name with no value; it is most often a key pasted
            # alone, so neither case quotes the line.
            if binding.error or (binding.key is not None and binding.value is None):
                raise UserError(
                    f"{dotenv} line {binding.original.line} is not NAME=value; fix or remove it"
                )
        for name, value in dotenv_values(stream=io.StringIO(text)).items():
            if value is not None:
                env.setdefault(name, value)
    return env


def echo_for(*, as_json: bool = False) -> Callable[[str], None]:
    """Where a command's output goes: stdout, with every control character a label, a reply or
    a server's error may carry made visible (`text.outputs`); JSON stays valid JSON."""
    from independence_bench.text.outputs import terminal_json, terminal_text

    clean = terminal_json if as_json else terminal_text
    return lambda text: click.echo(clean(text))


def resolve_data_dir(value: Path | None, env: Mapping[str, str]) -> Path:
    """`--data-dir`, else `$AIB_DATA_DIR`, else `./aib-data`."""
    if value is not None:
        return value
    return Path(env.get(DATA_DIR_ENV) or "aib-data")


def data_dir_of(values: Mapping[str, Any]) -> Path:
    """The store folder of a command's `--data-dir`, else of the environment or `.env`."""
    return resolve_data_dir(values["data_dir"], read_env(Path.cwd()))


def selection_of(values: Mapping[str, Any]) -> Selection:
    """The checked selection of a command's `--experiments`, `--variants` and `--modes`."""
    from independence_bench.suites.selection import Selection

    return Selection.parse(values["experiments"], values["variants"], values["modes"])


def models_of(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The model configurations of a command's `--models`; empty shows every one."""
    from independence_bench.suites.selection import split_list

    return split_list(values["models"])


def resampling_of(values: Mapping[str, Any]) -> Resampling:
    """The bootstrap of a command's `--resamples` and `--seed`, each at its default where the
    command has no such option (`aib judges` has no `--resamples`, `report` and `view` no seed)."""
    return Resampling(values.get("resamples", DEFAULT_RESAMPLES), values.get("seed", 0))


class CommaList(click.types.StringParamType):
    """A comma-separated list that names at least one thing: `--models ""` is a mistake, not
    "everything" (leave the option out for that). The text is kept as given."""

    name = "LIST"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not any(part.strip() for part in value.split(",")):
            self.fail(
                f"{value!r} names nothing; give one or more, separated by commas, or leave the "
                "option out",
                param,
                ctx,
            )
        return value


class FiniteRange(click.FloatRange):
    """A `FloatRange` that also refuses `nan` and `inf` (which compare false with any bound)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number; give a number like 30", param, ctx)
        return number


class EndpointUrl(click.types.StringParamType):
    """An http(s) URL of an OpenAI-compatible endpoint, checked as every `base_url` is
    (`clients.config.check_base_url`); an empty one is refused, not read as "no URL"."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        from independence_bench.clients.config import check_base_url

        return check_base_url(value)


COMMA_LIST = CommaList()
ENDPOINT_URL = EndpointUrl()
SEED_RANGE = click.IntRange(0, 2**63 - 1)
"""Seeds are 0..2**63-1: what a signed 64-bit integer holds (OpenAI-compatible servers take no
more), and no negative value (llama.cpp reads -1 as "pick a random seed")."""


def _block(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator adding `options` in the order given (the order `--help` lists them)."""

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Where the store lives (default ${DATA_DIR_ENV} or ./aib-data).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
judge_form_option = click.option(
    "--judge-form",
    type=click.Choice(JUDGE_FORMS),
    default=None,
    help="How the judge is asked: "
    + "; ".join(f"{form}: {text}" for form, text in FORM_HELP.items())
    + ". Stored as '<judge>#<form>' except holistic. Default: the judge's own (holistic).",
)
"""`--judge-form` of `aib run`, `aib estimate` and `aib judge` (README, "Judge forms")."""

concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(1, 4096),
    default=None,
    help="Cap on calls in flight per endpoint (default: adaptive: starts high, halves on "
    "429/503, regrows on success; always within the open-file limit).",
)
resamples_option = click.option(
    "--resamples",
    type=click.IntRange(100, 1_000_000),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples for the intervals.",
)
bootstrap_seed_option = click.option(
    "--seed", type=SEED_RANGE, default=0, show_default=True, help="Bootstrap seed."
)
bootstrap_options = _block(resamples_option, bootstrap_seed_option)
"""`--resamples` and `--seed`, for the commands that show intervals."""

scored_by_option = click.option(
    "--judge", default=None, help="Use this judge's scores (default: the run's judge)."
)
every_suite_option = click.option(
    "--suite", default=None, help="Only this suite (default: every suite in the store)."
)
analysed_suite_option = click.option(
    "--suite", default=None, help="Suite to analyse (default: the one in the store)."
)


def out_option(folder: str) -> Callable[[F], F]:
    """`--out`, the folder a command writes, by default `<data-dir>/<folder>`."""
    return click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"Folder to write (default: <data-dir>/{folder}).",
    )


selector_options = _block(
    click.option(
        "--experiments",
        type=COMMA_LIST,
        default=None,
        help="Only these experiments, comma-separated (identity, resistance, boundary, stability).",
    ),
    click.option(
        "--variants",
        type=COMMA_LIST,
        default=None,
        help="Only these prompt variants, comma-separated (neutral, strong_independence).",
    ),
    click.option(
        "--modes",
        type=COMMA_LIST,
        default=None,
        help="Only these delivery modes (user_role, tool_role).",
    ),
)
"""`--experiments`, `--variants`, `--modes`: one cell of a suite alone (`suites/selection.py`)."""

shown_models_option = click.option(
    "--models",
    type=COMMA_LIST,
    default=None,
    help="Only these model configurations, comma-separated (label or model id).",
)
"""`--models` of the commands that read the store: which configurations to show."""

shown_results_options = _block(selector_options, shown_models_option, data_dir_option)
"""What a command that shows stored results reads and narrows them to: one cell of the suite
(`selector_options`, read by `selection_of`), some model configurations (`--models`, read by
`models_of`), from the store in `--data-dir` (`data_dir_of`)."""


class DataHelp(click.Option):
    """An option whose help is built from the package's data (suites, presets, defaults) when
    `--help` is shown, so it never lists a stale choice and `aib --help` stays import-light."""

    def __init__(self, *args: Any, help_from: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_from = help_from

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self._help_from()
        return super().get_help_record(ctx)


def _choices(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _data_names(folder: str) -> tuple[str, ...]:
    """The YAML files shipped in `data/<folder>`, by name: what `suites.available_suites` and
    `presets.available_presets` list, read here without importing pydantic."""
    found = resources.files("independence_bench").joinpath("data", folder).iterdir()
    return tuple(sorted(p.name.removesuffix(".yaml") for p in found if p.name.endswith(".yaml")))


def _suites_help() -> str:
    return f"Suite: {_choices(_data_names('suites'))}."


def _presets_help() -> str:
    presets = _choices(_data_names("presets"))
    return f"A shipped model list: {presets} (see 'aib models'); like --config."


# Written out so `--help` imports nothing heavy; tests/cli/test_help_from_data.py pins it to
# its sources (local_models.LOCAL_RUNS, plan.DEFAULT_API_RUNS).
RUNS_HELP = "Runs per model. Default: 1 when every model is local (embedded:, gguf:, hf:), else 5."
JUDGE_HELP = (
    f"Judge model id, in the forms of --models. Default: {DEFAULT_JUDGE} when a tested model is "
    f"on OpenRouter, else {LOCAL_JUDGE} on this machine (a smoke-test judge)."
)


run_options = _block(
    selector_options,
    click.option(
        "--models",
        type=COMMA_LIST,
        default=None,
        help="Comma-separated model ids to test: an OpenRouter id (openai/gpt-4o-mini), a "
        "server's model name with --base-url, or a local model: embedded:NAME, "
        "gguf:/path/file.gguf, hf:owner/repo/file.gguf. Default: the embedded offline model "
        "when no key and no endpoint are set.",
    ),
    click.option(
        "--offline",
        is_flag=True,
        default=False,
        help="Only models on this machine; with no --models, the embedded pair, even when an "
        "API key is set.",
    ),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="A models.yaml with models (and optionally the judge).",
    ),
    click.option(
        "--preset",
        default=None,
        cls=DataHelp,
        help_from=_presets_help,
    ),
    click.option(
        "--reasoning-effort",
        type=click.Choice(EFFORTS),
        default=None,
        help="Set every tested model's reasoning effort: off sends no setting; none … xhigh go "
        "to OpenRouter as reasoning.effort (none turns reasoning off).",
    ),
    click.option(
        "--temperature",
        type=FiniteRange(0.0, 2.0),
        default=None,
        help="Set every tested model's sampling temperature (the judge keeps its own).",
    ),
    click.option("--judge", default=None, help=JUDGE_HELP),
    judge_form_option,
    click.option(
        "--user-model",
        default=None,
        help="Suite adaptive: the model that plays the human, in the forms of --judge. "
        "Default: the judge's model at temperature 0.7.",
    ),
    click.option(
        "--user-model-base-url",
        type=ENDPOINT_URL,
        default=None,
        help="Endpoint for the user model (default: --base-url).",
    ),
    click.option(
        "--suite", default=DEFAULT_SUITE, show_default=True, cls=DataHelp, help_from=_suites_help
    ),
    click.option(
        "--scenarios",
        type=COMMA_LIST,
        default=None,
        help="Only these scenario ids of the suite, comma-separated (a quick smoke run).",
    ),
    click.option("--runs", type=click.IntRange(1, 100), default=None, help=RUNS_HELP),
    click.option(
        "--base-url",
        type=ENDPOINT_URL,
        default=None,
        help="An OpenAI-compatible endpoint for the models (and the judge).",
    ),
    click.option(
        "--judge-base-url",
        type=ENDPOINT_URL,
        default=None,
        help="Endpoint for the judge (default: --base-url).",
    ),
    concurrency_option,
    click.option(
        "--seed",
        type=SEED_RANGE,
        default=None,
        help="Sampling seed sent with every request (0..2**63-1).",
    ),
    click.option(
        "--timeout",
        "timeout_s",
        type=FiniteRange(0.1, 3600),
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
        type=FiniteRange(0, min_open=True),
        default=None,
        help="Stop sending new calls before this session would spend more USD (resumable).",
    ),
    click.option(
        "--prompt-cache/--no-prompt-cache",
        default=True,
        help="Mark cache_control breakpoints for models that cache only with them (Anthropic, "
        "Alibaba on OpenRouter); others cache on their own.",
    ),
    click.option(
        "--allow-partial",
        is_flag=True,
        help="Start even when the estimate exceeds the OpenRouter key's remaining credit.",
    ),
    data_dir_option,
)
"""The options `aib run` and `aib estimate` share."""

analysis_options = _block(
    analysed_suite_option,
    click.option("--judge", default=None, help="Use this judge's scores (default: the main one)."),
    click.option(
        "--judges",
        type=COMMA_LIST,
        default=None,
        help="A judge panel, comma-separated: mean per item.",
    ),
    json_option,
    data_dir_option,
)
"""The options every store-only analysis command shares."""
