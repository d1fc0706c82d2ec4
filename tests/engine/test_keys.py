"""What a stored row is keyed by: request keys, stored requests, item ids and suite hashes.

A key that leaves something out reuses an old answer for a changed question; a key that takes in
something irrelevant pays twice. Each test changes one thing and checks exactly which keys move.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from independence_bench.clients.protocol import CompletionRequest
from independence_bench.conversations.conversation import (
    TOOL_NAME,
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.engine.request_keys import (
    digest,
    item_id,
    request_key,
    request_record,
    run_item_id,
)
from independence_bench.store.records import RunRecord
from independence_bench.suites.suite import Suite, load_suite

BASE = CompletionRequest(
    model="m",
    messages=({"role": "user", "content": "hi"},),
    tools=({"type": "function", "function": {"name": "t"}},),
    temperature=0.7,
    max_tokens=100,
    reasoning_effort="low",
    provider_order=("a",),
    seed=1,
    response_schema={"type": "object"},
    schema_name="s",
)
CHANGES: dict[str, Any] = {
    "model": "m2",
    "messages": ({"role": "user", "content": "hello"},),
    "tools": (),
    "temperature": 0.2,
    "max_tokens": 101,
    "reasoning_effort": "high",
    "provider_order": ("b",),
    "seed": 2,
    "response_schema": {"type": "object", "required": []},
}


def test_the_request_key_is_a_stable_sha256_hex() -> None:
    key = request_key(BASE, sample="run1")
    assert key == request_key(replace(BASE), sample="run1")
    assert len(key) == 64 and int(key, 16) >= 0


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_every_request_field_is_in_the_key(field: str) -> None:
    changed = replace(BASE, **{field: CHANGES[field]})
    assert request_key(changed, sample="run1") != request_key(BASE, sample="run1")


def test_the_sample_tag_separates_runs_and_judge_repeats() -> None:
    keys = {request_key(BASE, sample=s) for s in ("run1", "run2", "judge0:i", "judge1:i")}
    assert len(keys) == 4


def test_the_schema_name_is_only_a_label() -> None:
    renamed = replace(BASE, schema_name="other")
    assert request_key(renamed, sample="run1") == request_key(BASE, sample="run1")


def test_the_stored_request_is_exactly_what_was_sent() -> None:
    assert request_record(BASE) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "t"}}],
        "temperature": 0.7,
        "max_tokens": 100,
        "reasoning_effort": "low",
        "provider_order": ["a"],
        "seed": 1,
        "response_schema": {"type": "object"},
    }


def test_item_ids_change_with_each_coordinate_and_nothing_else() -> None:
    suite = load_suite("v2")
    other_suite = suite.subset(["direct"])
    coordinates = ("label", 1, "variant", "tool_role", "direct")
    base = item_id(suite, *coordinates)
    assert len(base) == 24 and base == item_id(load_suite("v2"), *coordinates)
    moved = {
        item_id(other_suite, *coordinates),
        item_id(suite, "label2", 1, "variant", "tool_role", "direct"),
        item_id(suite, "label", 2, "variant", "tool_role", "direct"),
        item_id(suite, "label", 1, "variant2", "tool_role", "direct"),
        item_id(suite, "label", 1, "variant", "user_role", "direct"),
        item_id(suite, "label", 1, "variant", "tool_role", "psych"),
    }
    assert base not in moved and len(moved) == 6


def _suite_with(suite: Suite, **changes: Any) -> Suite:
    return Suite(**{**suite.model_dump(), **changes})


def test_the_suite_hash_covers_every_word_sent_and_only_that() -> None:
    suite = load_suite("v2")
    fields = suite.model_dump()
    first, *rest = fields["scenarios"]
    variant = fields["variants"][0]
    assert _suite_with(suite).content_hash == suite.content_hash
    assert suite.subset([s.id for s in suite.scenarios]).content_hash == suite.content_hash
    changed = [
        _suite_with(suite, scenarios=[{**first, "turns": [*first["turns"], "one more"]}, *rest]),
        _suite_with(suite, scenarios=[{**first, "rubric": "stability"}, *rest]),
        _suite_with(suite, scenarios=[*rest, first]),
        _suite_with(suite, variants=[{**variant, "system_prompt": "Be yourself."}]),
        _suite_with(suite, delivery={**fields["delivery"], "greeting": "Hello."}),
        _suite_with(suite, delivery={**fields["delivery"], "message_description": "Words."}),
        _suite_with(suite, delivery_modes=["user_role"]),
        _suite_with(suite, formula="lite"),
        _suite_with(suite, version=suite.version + 1),
    ]
    hashes = {s.content_hash for s in changed}
    assert suite.content_hash not in hashes and len(hashes) == len(changed)


def test_system_prompt_and_tool_follow_the_delivery_mode() -> None:
    delivery = load_suite("v2").delivery
    assert system_prompt("Be you.  \n", delivery, "user_role") == "Be you.  \n"
    assert system_prompt("Be you.  \n", delivery, "tool_role") == (
        f"Be you.\n\n{delivery.tool_role_instructions.strip()}"
    )
    tool = tool_definition(delivery)
    assert tool["type"] == "function" and tool["function"]["name"] == TOOL_NAME
    assert tool["function"]["description"] == delivery.tool_description
    parameters = tool["function"]["parameters"]
    assert parameters["required"] == ["message"]
    assert parameters["properties"]["message"] == {
        "type": "string",
        "description": delivery.message_description,
    }


def test_the_first_tool_role_turn_and_a_finished_conversation() -> None:
    delivery = load_suite("v2").delivery
    common: dict[str, Any] = dict(
        system="S", delivery=delivery, mode="tool_role", conversation_key="k"
    )
    first = build_messages(human_turns=("h1", "h2"), replies=(), **common)
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool"]
    assert first[0] == {"role": "system", "content": "S"}
    assert first[3]["content"] == "h1"
    with pytest.raises(ValueError, match="already has a reply"):
        build_messages(human_turns=("h1",), replies=("r1",), **common)
    user_first = build_messages(human_turns=("h1",), replies=(), **{**common, "mode": "user_role"})
    assert user_first == ({"role": "system", "content": "S"}, {"role": "user", "content": "h1"})


def test_key_formats_are_stable_so_a_store_keeps_its_cache_across_versions() -> None:
    # A changed key format silently re-sends every stored call and orphans every stored item:
    # these digests were computed by this code and must only change on purpose.

    from independence_bench.clients.protocol import CompletionRequest
    from independence_bench.engine.request_keys import item_id, request_key

    request = CompletionRequest(
        model="m",
        messages=({"role": "user", "content": "café"},),
        temperature=0.7,
        seed=3,
        max_tokens=100,
        reasoning_effort="low",
        provider_order=("acme",),
        response_schema={"type": "object"},
        schema_name="s",
    )
    assert request_key(request, sample="run1") == (
        "ae5d32d55d9e3513bd41386ef7d7d332eee09a1b3c68de46ccf7b7edf7209415"
    )
    suite = SimpleNamespace(id="v2", content_hash="h")
    assert item_id(suite, "m", 1, "neutral", "tool_role", "direct") == "7ef047515b6c62ff280a8f23"  # type: ignore[arg-type]


def test_an_imported_conversation_is_named_as_a_run_of_ours_names_it() -> None:
    # `aib import` (legacy folders, Inspect logs) names an item from its stored run record;
    # the same conversation run by `aib run` must get the same id, and imported ids stay put.
    suite = SimpleNamespace(id="v2", content_hash="h")
    run = RunRecord(7, "m", "model/m", "v2", 1, "h", 1, {}, "0", "legacy")
    imported = run_item_id(run, "neutral", "tool_role", "direct")
    assert imported == item_id(suite, "m", 1, "neutral", "tool_role", "direct")  # type: ignore[arg-type]
    assert imported == "7ef047515b6c62ff280a8f23"
    assert run_item_id(replace(run, suite_hash="h2"), "neutral", "tool_role", "direct") != imported
    assert run_item_id(replace(run, run_index=2), "neutral", "tool_role", "direct") != imported


def test_digest_is_sha256_of_canonical_json_and_takes_any_text() -> None:
    # The keys of imported rows (legacy turns and verdicts, Inspect calls) were this digest
    # before it moved to `request_keys`: the same payload keeps its key.
    payload = {"import": "legacy", "file": "run/é.json", "sha256": "00", "n": [1, 2.5]}
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert digest(payload) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    # A lone surrogate (JSON's "\\udc80" in an imported file) hashes instead of raising.
    assert len(digest({"raw": "lone \udc80"})) == 64


ODD_REQUESTS = [
    BASE,
    replace(BASE, messages=({"role": "user", "content": "lone \udc80 surrogate, café, 漢字"},)),
    replace(BASE, provider_routing={"order": ["b", "a"], "allow_fallbacks": False}),
    replace(BASE, top_logprobs=5, tools=(), response_schema=None, reasoning_effort=None),
    replace(
        BASE,
        messages=(
            {"role": "system", "content": "S"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "x", "b": 1, "a": [2.5]}]},
            {"role": "tool", "tool_call_id": "x", "content": '{"\\u00e9": "\\n"}'},
        ),
        temperature=float("nan"),
    ),
]


@pytest.mark.parametrize("request_", ODD_REQUESTS, ids=range(len(ODD_REQUESTS)))
def test_the_key_built_from_parts_is_the_key_of_the_whole_request(
    request_: CompletionRequest,
) -> None:
    # The key is assembled from each message's and field's encoding (encoded once, stored as
    # is); it must be the digest of the whole request encoded at once, as it always was.
    import hashlib
    import json

    fields = request_record(request_)
    fields["provider"] = fields.pop("provider_order")
    fields["schema"] = fields.pop("response_schema")
    whole = json.dumps(
        {**fields, "sample": "run1"}, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    expected = hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()
    assert request_key(request_, sample="run1") == expected
