"""What makes a model call or a conversation the same one again: the keys of the store.

A completion is stored under `request_key`, a hash of everything that determines it (model,
parameters, messages, tools, schema) plus a *sample* tag that separates runs and judge repeats;
`request_record` is the request as stored; `item_id` names a conversation by suite hash, model
label, run, prompt variant, delivery mode and scenario. The same command recomputes the same
keys, which is how it resumes without paying twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import CompletionRequest
from independence_bench.store.records import RunRecord
from independence_bench.store.texts import EncodedRequest, encode_request, joined_object
from independence_bench.suites.suite import Suite
from independence_bench.text.lossless import utf8

_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""The keys' one spelling; built once (`json.dumps` with options builds an encoder per call)."""


_KEY_NAMES = {"provider_order": "provider", "response_schema": "schema"}
"""The two fields the key has always named differently from the stored request."""


def digest(payload: Mapping[str, Any]) -> str:
    """sha256 of `payload`'s canonical JSON: every key of the store is one (imported rows'
    keys too, `legacy/` and `inspect_tasks/log_import.py`)."""
    canonical = _CANONICAL.encode(payload)
    # `utf8` equals strict UTF-8 wherever that succeeds, so ordinary keys never change; a
    # reply with a lone surrogate (any text a server sends) hashes instead of crashing.
    return hashlib.sha256(utf8(canonical)).hexdigest()


def request_key(request: CompletionRequest, *, sample: str) -> str:
    """Hash of everything that determines a completion; `sample` separates runs and repeats."""
    return keyed_record(request, sample=sample)[0]


def keyed_record(
    request: CompletionRequest, *, sample: str
) -> tuple[str, dict[str, Any], EncodedRequest | None]:
    """`request_key` and `request_record` of one request, and the record's canonical parts
    (`texts.EncodedRequest`): built and encoded once, hashed here and stored as they are."""
    record = request_record(request)
    encoded = encode_request(record)
    assert encoded is not None  # a record always has its list of messages
    # The key has always named two fields differently from the stored request; renaming them
    # would change every key and make a re-run pay again for everything in the store.
    parts = {_KEY_NAMES.get(name, name): value for name, value in encoded.fields.items()}
    parts["messages"] = "[" + ",".join(encoded.messages) + "]"
    parts["sample"] = _CANONICAL.encode(sample)
    # `joined_object` spells the object exactly as `digest` would encode it whole.
    return hashlib.sha256(utf8(joined_object(parts))).hexdigest(), record, encoded


def request_record(request: CompletionRequest) -> dict[str, Any]:
    """The request as stored: the exact messages and parameters sent. OpenRouter's routing
    object and `top_logprobs` are fields only when given, so the keys of every other request
    stay as they were."""
    record: dict[str, Any] = {
        "model": request.model,
        "messages": list(request.messages),
        "tools": list(request.tools),
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "reasoning_effort": request.reasoning_effort,
        "provider_order": list(request.provider_order),
        "seed": request.seed,
        "response_schema": request.response_schema,
    }
    if request.provider_routing is not None:
        record["provider_routing"] = dict(request.provider_routing)
    if request.top_logprobs is not None:
        record["top_logprobs"] = request.top_logprobs
    return record


def item_id(
    suite: Suite,
    label: str,
    run_index: int,
    variant: str,
    mode: str,
    scenario: str,
    user_model: str | None = None,
) -> str:
    """A conversation's id. `user_model` (`user_model_identity`) is given in a suite whose
    human turns a user model writes: another user model, or the same one at another
    temperature or seed, writes other conversations. Left out otherwise, so every other id
    stays as it was."""
    place = (suite.id, suite.content_hash, label, run_index, variant, mode, scenario)
    return _item_id(*place, user_model)


def run_item_id(run: RunRecord, variant: str, mode: str, scenario: str) -> str:
    """`item_id` of a conversation of the stored `run` (its suite, hash, label and index): an
    imported conversation (`aib import`) is named as a run of ours names it."""
    place = (run.suite_id, run.suite_hash, run.model_label, run.run_index, variant, mode)
    return _item_id(*place, scenario, None)


def _item_id(
    suite_id: str,
    suite_hash: str,
    label: str,
    run_index: int,
    variant: str,
    mode: str,
    scenario: str,
    user_model: str | None,
) -> str:
    place: dict[str, Any] = {
        "suite": suite_id,
        "suite_hash": suite_hash,
        "model": label,
        "run": run_index,
        "variant": variant,
        "mode": mode,
        "scenario": scenario,
    }
    if user_model is not None:
        place["user_model"] = user_model
    return digest(place)[:24]


def user_model_identity(spec: ModelSpec | None) -> str | None:
    """What names a user model's conversations: its label and the settings that decide its
    words (not its endpoint, like a tested model's conversations)."""
    if spec is None:
        return None
    config = spec.stored_config()
    decisive = ("id", "temperature", "reasoning_effort", "max_tokens", "seed", "provider")
    named = {"label": spec.display_label, **{k: config.get(k) for k in decisive}}
    return json.dumps(named, sort_keys=True, ensure_ascii=False, default=str)
