"""The requests a run sends: a subject's turn, a user model's and a judge's call, from a model
configuration.

Each carries the configuration's sampling settings, its reasoning setting
(`ModelSpec.reasoning_sent`: nothing for `off`, an effort, or OpenRouter's whole `reasoning`
object) and where it may be routed (a provider list, or OpenRouter's `provider` object); the
client decides what of that reaches the wire (`openai_compat.py`: OpenRouter-only fields go to
OpenRouter only).
`refuse_changed_settings` keeps a stored run's settings from changing under its label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import CompletionRequest, Message
from independence_bench.errors import UserError
from independence_bench.store.store import RunRecord

JUDGE_MAX_TOKENS = 1500
SAMPLING_SETTINGS = ("id", "temperature", "reasoning_effort", "max_tokens", "seed", "provider")
"""What decides a model's replies: a run stored under a label keeps these for all its items."""


def refuse_changed_settings(run: RunRecord, spec: ModelSpec) -> None:
    """Refuse to resume a run whose stored settings differ from `spec`'s.

    Item ids depend on the label, not the settings (so a label names a row of the leaderboard),
    so `label: x` at temperature 0.2 would otherwise reuse the conversations of `label: x` at
    0.7. Nothing has been sent when this raises."""
    if run.source != "run":
        return
    now = spec.stored_config()
    changed = [
        f"{name} {run.model_config.get(name)!r} → {now.get(name)!r}"
        for name in SAMPLING_SETTINGS
        if name in run.model_config and run.model_config.get(name) != now.get(name)
    ]
    if changed:
        raise UserError(
            f"run {run.run_index} of {run.model_label!r} is stored with other sampling settings "
            f"({'; '.join(changed)}); use a new label, or --fresh for new run numbers"
        )


def subject_request(
    spec: ModelSpec, messages: tuple[Message, ...], tools: tuple[Any, ...]
) -> CompletionRequest:
    """One turn of a conversation with the model under test: its conversation so far is a
    prefix worth a cache breakpoint (`prompt_cache.py`)."""
    return replace(_request(spec, messages, spec.max_tokens), tools=tools, cache_last=True)


def user_model_request(spec: ModelSpec, messages: tuple[Message, ...]) -> CompletionRequest:
    """One call of the user model that writes a human turn (`user_turns.py`), with its
    sampling settings."""
    return _request(spec, messages, spec.max_tokens)


def judge_request(
    judge: ModelSpec,
    messages: tuple[Message, ...],
    schema: Mapping[str, Any],
    schema_name: str,
) -> CompletionRequest:
    """One call of a judge, its reply form's schema attached."""
    request = _request(judge, messages, JUDGE_MAX_TOKENS)
    return replace(request, response_schema=schema, schema_name=schema_name)


def _request(spec: ModelSpec, messages: tuple[Message, ...], max_tokens: int) -> CompletionRequest:
    """A request carrying `spec`'s settings: sampling, reasoning and routing."""
    return CompletionRequest(
        model=spec.id,
        messages=messages,
        temperature=spec.temperature,
        max_tokens=max_tokens,
        reasoning_effort=spec.reasoning_sent,
        provider_order=spec.provider_pin,
        provider_routing=spec.provider_routing,
        seed=spec.seed,
    )
