"""What a run asks for: `RunOptions`, and the plan they resolve to, made once (`plan_run`).

`aib run` and `aib estimate` take the same options and plan the same run, so both read them
here. `plan_run` makes the one frozen `RunPlan` every later step reads: the suite narrowed by
`--scenarios` and the selectors (`planned_suite`) with the experiments the selection leaves out,
the tested models (`resolve_models`: `--models`, `--config` or `--preset`, and the embedded
models when nothing is named and no key is set, or with `--offline`), the judge (`choose_judge`,
the one place a judge is chosen, `aib judge`'s too, its defaults in `judging/default_judges.py`),
the user model of an adaptive suite (`resolve_user_model`) and the runs per model.
Everything here fails as a `UserError` before a store is opened or a call is sent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from independence_bench.clients.config import (
    ModelSpec,
    check_base_url,
    load_models_file,
    specs_from_names,
)
from independence_bench.clients.endpoints import ClientFactory, ClientPool, RetryPolicy
from independence_bench.clients.local.local_models import (
    DEFAULT_SUBJECT,
    LOCAL_RUNS,
    all_local,
)
from independence_bench.clients.local.weights import INTERIM, embedded_models, is_local_model
from independence_bench.clients.openrouter import KEY_ENV, is_openrouter_endpoint, openrouter_key
from independence_bench.clients.presets import load_preset
from independence_bench.clients.redact import without_url_credentials
from independence_bench.engine.engine import RunPlan
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.errors import UserError
from independence_bench.judging.default_judges import DEFAULT_JUDGE, LOCAL_JUDGE
from independence_bench.judging.forms import judge_form_named, judge_form_of
from independence_bench.store.claims import LEASE_S
from independence_bench.suites import DEFAULT_SUITE
from independence_bench.suites.selection import EVERYTHING, Selection
from independence_bench.suites.suite import Suite, load_suite

DEFAULT_API_RUNS = 5
"""Runs per model when `--runs` is not given and a model is reached over an API."""
LOCAL_JUDGE_MAX_TOKENS = 1024
"""The embedded judge's reply cap: its holistic reply fits, and a CPU stops sooner."""


@dataclass(frozen=True)
class RunOptions:
    models: str | None = None
    config_path: Path | None = None
    judge: str | None = None
    offline: bool = False
    """`--offline`: only models on this machine; with nothing named, the embedded pair, even
    when a key is set."""
    judge_form: str | None = None
    """A name in `JUDGE_FORMS`; None = the judge's own (`judging.forms.judge_form_of`)."""
    suite_id: str = DEFAULT_SUITE
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


def plan_run(options: RunOptions) -> RunPlan:
    """The run `options` ask for, planned once: the suite loaded once and narrowed, what the
    selection leaves out of it, every model role on its endpoint, and the runs per model."""
    whole = load_suite(options.suite_id)
    suite = whole.narrowed(options.scenarios, options.selection)
    specs, judge = resolve_models(options)
    return RunPlan(
        suite=suite,
        models=specs,
        judge=judge,
        runs=runs_per_model(options, specs),
        user_model=resolve_user_model(options, suite, judge),
        left_out=options.selection.left_out(whole.experiments),
    )


def planned_suite(options: RunOptions) -> Suite:
    """The suite `options` ask for, narrowed by `--scenarios` and the selectors."""
    return load_suite(options.suite_id).narrowed(options.scenarios, options.selection)


def offline_run(options: RunOptions) -> bool:
    """No models named and no endpoint, and `--offline` or no OpenRouter key: use the embedded
    models."""
    chosen = options.models or options.config_path or options.preset or options.base_url
    return not chosen and (options.offline or not openrouter_key(options.env))


def offline_notice(options: RunOptions) -> str | None:
    """The line `aib run` prints before it runs on the embedded models by default."""
    if not offline_run(options) or options.judge:
        return None
    why = "--offline" if options.offline else "no --models and no API key"
    return (
        f"{why}: running offline with {DEFAULT_SUBJECT} judged by {LOCAL_JUDGE} "
        "(a smoke-test judge; see README for a strong one)"
    )


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
        seed = options.seed if options.seed is not None else 0
        specs = (ModelSpec(id=DEFAULT_SUBJECT, seed=seed),)  # seeded: reproducible per build
    elif options.base_url is None:
        raise UserError(
            f"no models to test: ${KEY_ENV} is set, which turns the offline default off; add "
            "--offline to run the embedded models anyway, or pass --models a,b, --config "
            "models.yaml or --preset NAME"
        )
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
    judge = choose_judge(options, specs, config_judge)
    check_local_names(options, (*specs, judge))
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


def judge_named(model: str, *, seed: int | None, form: str | None = None) -> ModelSpec:
    """The spec of a judge named by its model id (`--judge`, or a default): temperature 0."""
    judge = ModelSpec(id=model, label=model, temperature=0.0, seed=seed)
    return (
        judge if form is None else judge.model_copy(update={"judge_form": judge_form_named(form)})
    )


def choose_judge(
    options: RunOptions, specs: tuple[ModelSpec, ...], config_judge: ModelSpec | None
) -> ModelSpec:
    """The judge of a run, the one place it is chosen: `--judge`, else the models file's, else
    the default: `DEFAULT_JUDGE` (strong, on OpenRouter) when a tested model is on OpenRouter,
    else `LOCAL_JUDGE` on this machine (`--offline`, local models, a `--base-url` server), so
    the default never sends a transcript to an API the command did not name."""
    judge_url = options.judge_base_url or options.base_url
    if options.judge:
        judge = on_chosen_endpoint(judge_named(options.judge, seed=options.seed), judge_url)
    elif config_judge is not None:
        judge = on_chosen_endpoint(config_judge, judge_url)
    elif options.judge_base_url is not None:
        raise UserError(
            f"--judge is required with --judge-base-url "
            f"({without_url_credentials(options.judge_base_url)}); name a model that endpoint "
            "serves"
        )
    elif not options.offline and any(_on_openrouter(s, options) for s in specs):
        judge = judge_named(DEFAULT_JUDGE, seed=options.seed)
    else:
        seed = options.seed if options.seed is not None else 0
        judge = judge_named(LOCAL_JUDGE, seed=seed).model_copy(
            update={"max_tokens": LOCAL_JUDGE_MAX_TOKENS}
        )
    if options.judge_form is not None:
        judge = judge.model_copy(update={"judge_form": judge_form_named(options.judge_form)})
    judge_form_of(judge)  # a models.yaml judge's `judge_form`, checked before anything runs
    return judge


def local_user_notice(options: RunOptions, suite: Suite, judge: ModelSpec | None) -> str | None:
    """The line saying the embedded judge's model also plays the human (suite `adaptive` with
    no `--user-model` and the local judge): a smoke-test user model, as the judge is."""
    if not suite.adaptive or options.user_model is not None:
        return None
    if judge is None or judge.id != LOCAL_JUDGE:
        return None
    return (
        f"suite adaptive: the human's pressure is written by {LOCAL_JUDGE} at temperature "
        f"{USER_MODEL_TEMPERATURE:g} (a smoke-test user model; name a strong one with "
        "--user-model MODEL)"
    )


def local_judge_notice(options: RunOptions, judge: ModelSpec | None) -> str | None:
    """The line saying the default judge is the embedded one when the run named models (the
    offline default has its own, `offline_notice`)."""
    if judge is None or judge.id != LOCAL_JUDGE or options.judge or offline_run(options):
        return None
    return (
        f"judging with {LOCAL_JUDGE} on this machine, a smoke-test judge (no tested model is on "
        "OpenRouter, so no transcript goes there unasked); name a strong one with --judge MODEL"
    )


def _on_openrouter(spec: ModelSpec, options: RunOptions) -> bool:
    if is_local_model(spec.id) or spec.api_key_env:
        return False
    return not spec.base_urls[1:] and is_openrouter_endpoint(spec.base_url, options.env)


def check_local_names(options: RunOptions, specs: tuple[ModelSpec, ...]) -> None:
    """Refuse an unknown `embedded:` name, and with `--offline` any model not on this machine,
    each in its own line before anything loads."""
    shipped = embedded_models()
    for spec in specs:
        if spec.id.startswith("embedded:") and spec.id not in shipped:
            raise UserError(
                f"unknown embedded model {spec.id!r}; the shipped ones are: {', '.join(shipped)}"
            )
        if options.offline and not is_local_model(spec.id):
            raise UserError(
                f"--offline runs only models on this machine, and {spec.id!r} is not one; name "
                "embedded:NAME, gguf:/path/file.gguf or hf:owner/repo/file.gguf, or drop --offline"
            )


def given_sources(options: RunOptions) -> list[str]:
    """The options naming the models to test that the user gave, of --models, --config and
    --preset (errors name only these, never one the user did not give)."""
    named = (("--models", options.models), ("--config", options.config_path))
    return [flag for flag, value in (*named, ("--preset", options.preset)) if value is not None]


def missing_key_hint(options: RunOptions, judge: ModelSpec | None) -> Callable[[ModelSpec], str]:
    """What a run without an OpenRouter key can do instead, per model: the exact flag that keeps
    that model on this machine, and the id form when an id lacks OpenRouter's provider prefix."""

    def hint(spec: ModelSpec) -> str:
        is_judge = judge is not None and spec.id == judge.id
        named_as_model = options.models is not None and spec.id in options.models.split(",")
        if is_judge and not named_as_model:
            fix = f"; or judge on this machine with --judge {LOCAL_JUDGE}"
        else:
            fix = (
                f"; or test a model on this machine with --models {DEFAULT_SUBJECT} (or "
                "--offline for the embedded pair), or a server's model with --base-url URL"
            )
        return fix + id_form_hint(spec.id)

    return hint


def id_form_hint(model: str) -> str:
    """A clause for an OpenRouter model id without its provider prefix (`gpt-4o-mini`)."""
    if "/" in model or is_local_model(model):
        return ""
    return (
        f"; note {model!r} has no provider prefix: OpenRouter ids read provider/model, e.g. "
        "openai/gpt-4o-mini (see openrouter.ai/models)"
    )


def run_pool(
    options: RunOptions,
    factories: tuple[ClientFactory, ...],
    judge: ModelSpec | None,
    *,
    keyless: bool = False,
) -> ClientPool:
    """The endpoints of `aib run` and `aib estimate`, with one limiter each: the same
    endpoints, limits and key hint, so an estimate meets a missing key or an endpoint as the run
    would; `keyless` lets OpenRouter's endpoint go without a key (only its public model list is
    asked, `aib estimate`)."""
    return ClientPool(
        env=options.env,
        concurrency=options.concurrency,
        factories=factories,
        timeout_s=options.timeout_s,
        missing_key_hint=missing_key_hint(options, judge),
        prompt_cache=options.prompt_cache,
        keyless=keyless,
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
