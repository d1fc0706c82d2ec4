"""What a run asks for: `RunOptions`, and the suite, model specs and client pool they resolve to.

`aib run` and `aib estimate` take the same options and plan the same run, so both read them
here: `planned_suite` (the suite narrowed by `--scenarios` and the selectors), `resolve_models`
(`--models`, `--config` or `--preset`, the judge, and the embedded models when nothing is named
and no key is set) and `runs_per_model`. Everything here fails as a `UserError` before a store
is opened or a call is sent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from independence_bench.clients.config import (
    DEFAULT_JUDGE,
    ModelSpec,
    check_base_url,
    load_models_file,
    specs_from_names,
)
from independence_bench.clients.endpoints import ClientFactory, ClientPool, RetryPolicy
from independence_bench.clients.local.local_models import LOCAL_RUNS, all_local, offline_defaults
from independence_bench.clients.local.weights import INTERIM
from independence_bench.clients.openrouter import is_openrouter_endpoint, openrouter_key
from independence_bench.clients.presets import load_preset
from independence_bench.clients.redact import without_url_credentials
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.errors import UserError
from independence_bench.judging.forms import judge_form_named, judge_form_of
from independence_bench.store.claims import LEASE_S
from independence_bench.suites.selection import EVERYTHING, Selection
from independence_bench.suites.suite import Suite, load_suite

DEFAULT_API_RUNS = 5
"""Runs per model when `--runs` is not given and a model is reached over an API."""


@dataclass(frozen=True)
class RunOptions:
    models: str | None = None
    config_path: Path | None = None
    judge: str | None = None
    judge_form: str | None = None
    """A name in `JUDGE_FORMS`; None = the judge's own (`judging.forms.judge_form_of`)."""
    suite_id: str = "v2"
    runs: int | None = None
    base_url: str | None = None
    judge_base_url: str | None = None
    concurrency: int | None = None
    """Calls in flight per endpoint at most (`--concurrency`); None: adaptive (`ratelimit.py`)."""
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
    """Overrides every tested model's reasoning effort (not the judge's): `off` sends none,
    `none` … `xhigh` go as OpenRouter's `reasoning.effort`."""
    temperature: float | None = None
    """Overrides every tested model's sampling temperature (not the judge's)."""
    selection: Selection = EVERYTHING
    """Run only these experiments, prompt variants and delivery modes (own content hash)."""
    reply_cap: int = REPLY_CAP_CHARS
    """Characters kept of each text field of a reply; longer ones are cut and flagged."""
    prompt_cache: bool = True
    """Mark `cache_control` breakpoints for models that need them (`--no-prompt-cache`: none)."""
    allow_partial: bool = False
    """Run what the OpenRouter key's remaining credit covers when the estimate is larger
    (`--allow-partial`), instead of stopping before the first call."""
    claim_lease_s: float = LEASE_S
    """How long this process's claims on calls in flight outlive it if it is killed
    (`store/claims.py`); tests shorten it."""
    user_model: str | None = None
    """`--user-model`: the model that plays the human in suite `adaptive` (any form `--judge`
    takes); None: the judge's model at `USER_MODEL_TEMPERATURE`."""
    user_model_base_url: str | None = None
    """`--user-model-base-url`: the user model's endpoint (default: --base-url)."""


def planned_suite(options: RunOptions) -> Suite:
    """The suite `options` ask for, narrowed by `--scenarios` and the selectors."""
    suite = load_suite(options.suite_id)
    if options.scenarios:
        suite = suite.subset(options.scenarios)
    return suite.select(options.selection)


def offline_run(options: RunOptions) -> bool:
    """No models named, no endpoint and no OpenRouter key: use the embedded models."""
    chosen = options.models or options.config_path or options.preset or options.base_url
    return not chosen and not openrouter_key(options.env)


def runs_per_model(options: RunOptions, specs: tuple[ModelSpec, ...]) -> int:
    """`--runs`, else fewer for embedded models (slow on a CPU) than for API models."""
    return options.runs or (LOCAL_RUNS if all_local(specs) else DEFAULT_API_RUNS)


def on_chosen_endpoint(spec: ModelSpec, command_line_url: str | None) -> ModelSpec:
    """`spec` on the endpoint the one precedence rule picks, for tested models and judges alike:
    the command line's URL (`--base-url`; for a judge `--judge-base-url`, else `--base-url`),
    else the spec's own `base_url`/`base_urls` (models.yaml), else OpenRouter. A URL given on
    the command line therefore holds for every model it applies to: no transcript goes to an
    endpoint the command did not name."""
    if command_line_url is None:
        return spec
    # model_copy skips pydantic's validators, so the URL is checked here.
    url = check_base_url(command_line_url)
    return spec.model_copy(update={"base_url": url, "base_urls": ()})


def resolve_models(options: RunOptions) -> tuple[tuple[ModelSpec, ...], ModelSpec | None]:
    """The model specs and judge spec a run option set asks for, each on the endpoint
    `on_chosen_endpoint` picks."""
    given = given_sources(options)
    if len(given) > 1:
        raise UserError(f"give one of {' or '.join(given)}, not several")
    config_judge: ModelSpec | None = None
    if options.config_path is not None or options.preset is not None:
        models_file = (
            load_models_file(options.config_path)
            if options.config_path is not None
            else load_preset(str(options.preset))
        )
        specs = tuple(on_chosen_endpoint(s, options.base_url) for s in models_file.models)
        config_judge = models_file.judge
    elif options.models:
        specs = specs_from_names(options.models, base_url=options.base_url)
    elif offline_run(options):
        subject, offline_judge = offline_defaults(options.seed)
        specs, config_judge = (subject,), offline_judge
    else:
        raise UserError(
            "no models to test; pass --models a,b, --config models.yaml or --preset NAME"
        )
    if options.seed is not None:
        specs = tuple(s.model_copy(update={"seed": options.seed}) for s in specs)
    if options.reasoning_effort is not None:
        effort = {"reasoning_effort": options.reasoning_effort}
        specs = tuple(s.model_copy(update=effort) for s in specs)
    if options.temperature is not None:
        specs = tuple(s.model_copy(update={"temperature": options.temperature}) for s in specs)
    judge_url = options.judge_base_url or options.base_url
    if options.judge:
        named = ModelSpec(id=options.judge, label=options.judge, temperature=0.0, seed=options.seed)
        judge = on_chosen_endpoint(named, judge_url)
    elif config_judge is not None:
        judge = on_chosen_endpoint(config_judge, judge_url)
    else:
        elsewhere = (
            s.base_url for s in specs if not is_openrouter_endpoint(s.base_url, options.env)
        )
        custom = judge_url or next(elsewhere, None)
        if custom and not is_openrouter_endpoint(custom, options.env):
            # The default judge is on OpenRouter: transcripts of models on another endpoint
            # would leave for an API the command never named.
            raise UserError(
                f"--judge is required with a custom endpoint ({without_url_credentials(custom)}); "
                f"name a model that endpoint serves{_or_judge_in(options)}"
            )
        judge = ModelSpec(id=DEFAULT_JUDGE, label=DEFAULT_JUDGE, temperature=0.0, seed=options.seed)
    if options.judge_form is not None:
        judge = judge.model_copy(update={"judge_form": judge_form_named(options.judge_form)})
    judge_form_of(judge)  # a models.yaml judge's `judge_form`, checked before anything runs
    labels = [s.display_label for s in specs]
    duplicated = sorted({label for label in labels if labels.count(label) > 1})
    if duplicated:
        fix = (
            "name each model once in --models"
            if options.models
            else f"give each a 'label' in {options.config_path or 'the models file'}"
        )
        raise UserError(f"model configurations share a label: {duplicated}; {fix}")
    return specs, judge


USER_MODEL_TEMPERATURE = 0.7
"""The user model's default sampling temperature: varied enough to write for each reply, low
enough to keep to its rules. Recorded on every call with its seed."""
USER_MODEL_MAX_TOKENS = 400
"""A user-model turn is one chat message of at most 80 words; 400 tokens leave room for a
model that thinks first, and cap what one round can cost."""


def resolve_user_model(
    options: RunOptions, suite: Suite, judge: ModelSpec | None
) -> ModelSpec | None:
    """The model that plays the human in `suite`'s adaptive scenarios, on its endpoint by
    `on_chosen_endpoint`'s rule (`--user-model-base-url`, else `--base-url`); None when the
    suite has none. Without `--user-model` it is the judge's model (offline: the embedded
    judge), sampled at `USER_MODEL_TEMPERATURE` with the run's seed (0 when none is given)."""
    if not suite.adaptive:
        if options.user_model is not None:
            raise UserError(
                f"--user-model plays the human in suite adaptive; suite {suite.id} scripts "
                "every human turn: drop --user-model or use --suite adaptive"
            )
        return None
    settings = {
        "temperature": USER_MODEL_TEMPERATURE,
        "seed": options.seed if options.seed is not None else 0,
        "max_tokens": USER_MODEL_MAX_TOKENS,
    }
    if options.user_model is not None:
        spec = ModelSpec(id=options.user_model, **settings)
        return on_chosen_endpoint(spec, options.user_model_base_url or options.base_url)
    if judge is None:
        raise UserError("suite adaptive needs a model to play the human: pass --user-model MODEL")
    # The judge's model, on the judge's endpoint unless --user-model-base-url names another.
    spec = judge.model_copy(update={**settings, "label": None, "judge_form": None})
    return on_chosen_endpoint(spec, options.user_model_base_url)


def given_sources(options: RunOptions) -> list[str]:
    """The options naming the models to test that the user gave, of --models, --config and
    --preset (errors name only these, never one the user did not give)."""
    named = (("--models", options.models), ("--config", options.config_path))
    return [flag for flag, value in (*named, ("--preset", options.preset)) if value is not None]


def _or_judge_in(options: RunOptions) -> str:
    if options.config_path is not None:
        return f", or add a judge to {options.config_path}"
    return ""


def missing_key_hint(options: RunOptions) -> str:
    """What a run without an OpenRouter key can do instead, by the options it was given."""
    hint = ", or use --base-url for a local OpenAI-compatible server"
    given = given_sources(options)
    if given:
        return f"{hint}, or drop {given[0]} to run offline with the embedded models"
    if options.judge:
        return f"{hint}, or drop --judge to judge with the embedded judge"
    return hint


def make_pool(
    env: Mapping[str, str],
    concurrency: int | None,
    factories: tuple[ClientFactory, ...],
    timeout_s: float = 300.0,
    missing_key_hint: str = "",
    prompt_cache: bool = True,
) -> ClientPool:
    """The endpoints of a run or a judging pass, with one limiter each; `missing_key_hint`
    ends the error for a missing OpenRouter key (`ClientPool`)."""
    return ClientPool(
        env=env,
        concurrency=concurrency,
        factories=factories,
        timeout_s=timeout_s,
        missing_key_hint=missing_key_hint,
        prompt_cache=prompt_cache,
    )


class StatusLines:
    """Status lines on a stream before the progress bars (model loading, weight assembly).

    A line ending in `INTERIM` is a step of work still going on. On a terminal the next line
    is drawn over it, so the ten steps of a weight file's assembly end as the one line saying
    it is assembled; in a log, where nothing can be drawn over, a series of steps of one piece
    of work (the same text before the last ": ") shows only its first step.
    """

    def __init__(self, stream: TextIO, *, terminal: bool) -> None:
        self._stream = stream
        self._terminal = terminal
        self._interim: str | None = None
        """The series of the interim line printed last; None: the last line was final."""

    def __call__(self, text: str) -> None:
        series = text.rsplit(": ", 1)[0] if text.endswith(INTERIM) else None
        if self._interim is not None:
            if self._terminal:
                self._stream.write("\x1b[1A\x1b[2K")  # up one line and clear it
            elif series == self._interim:
                return
        self._stream.write(text + "\n")
        self._stream.flush()
        self._interim = series


def status_lines(show: bool) -> Callable[[str], None] | None:
    """Where status lines before the progress bars go (model loading, weight assembly)."""
    if not show:
        return None
    return StatusLines(sys.stderr, terminal=sys.stderr.isatty())
