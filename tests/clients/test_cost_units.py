"""Worked values behind issue 36: breakpoints, cache families, the answering model, how a
reasoning effort reaches a local server, the estimate's cache split, and the cache fields of a
reply (hostile values count as absent)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from independence_bench.clients.model_identity import answered_by_other
from independence_bench.clients.prompt_cache import cache_kind, min_cached_tokens, with_breakpoints
from independence_bench.clients.replies import completion_of
from independence_bench.clients.server_reasoning import reasoning_fields, refusal, server_of
from independence_bench.engine.estimate import CacheRule

MARK = {"type": "ephemeral"}


def test_breakpoints_mark_the_first_and_last_message_and_copy_only_those() -> None:
    system = {"role": "system", "content": "rules"}
    middle = {"role": "assistant", "content": "earlier"}
    last = {"role": "user", "content": [{"type": "text", "text": "now"}]}
    sent = with_breakpoints([system, middle, last], last=True)
    assert sent[0] == {"role": "system", "content": [{"type": "text", "text": "rules",
                                                      "cache_control": MARK}]}  # fmt: skip
    assert sent[1] is middle
    assert sent[2]["content"] == [{"type": "text", "text": "now", "cache_control": MARK}]
    assert last["content"][0] == {"type": "text", "text": "now"}  # the request is untouched
    judge = with_breakpoints([system, {"role": "user", "content": "transcript"}], last=False)
    assert judge[1] == {"role": "user", "content": "transcript"}
    assert "cache_control" in judge[0]["content"][0]
    assert with_breakpoints([system], last=True)[0]["content"][0]["cache_control"] == MARK


@pytest.mark.parametrize(
    ("model", "kind", "least"),
    [
        ("anthropic/claude-sonnet-4.5", "explicit", 1024),
        ("anthropic/claude-3.5-haiku", "explicit", 2048),
        ("anthropic/claude-haiku-4.5", "explicit", 4096),
        ("qwen/qwen3-max", "explicit", 1024),
        ("openai/gpt-4o-mini", "automatic", 1024),
        ("google/gemini-2.5-pro", "automatic", 4096),
        ("deepseek/deepseek-chat", "automatic", 64),
        ("llama3.1:8b", "automatic", 1024),
    ],
)
def test_cache_families(model: str, kind: str, least: int) -> None:
    assert cache_kind(model) == kind
    assert min_cached_tokens(model) == least


@pytest.mark.parametrize(
    ("asked", "answered", "other"),
    [
        ("openai/gpt-4o", "openai/gpt-4o-2024-08-06", False),
        ("acme/model:free", "acme/model", False),
        ("llama3", "llama3:latest", False),
        ("llama3", "library/llama3", False),
        ("anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5-20250929", False),
        ("openai/gpt-4o", "openai/gpt-4o-mini", True),  # another model, not a snapshot
        ("openai/gpt-4o", "anthropic/claude-3-haiku", True),
        ("openrouter/auto", "openai/gpt-4o", True),
        ("acme/model", None, False),
        ("acme/model", "  ", False),
    ],
)
def test_a_reply_names_another_model(asked: str, answered: str | None, other: bool) -> None:
    assert answered_by_other(asked, answered) is other


def test_a_reasoning_effort_reaches_each_server_in_its_documented_form() -> None:
    assert server_of([{"id": "m", "owned_by": "vllm"}]) == "vllm"
    assert server_of([{"id": "m:latest", "owned_by": "library"}]) == "ollama"
    assert server_of([{"id": "m", "owned_by": "organization_owner"}]) is None
    assert server_of([]) is None
    assert reasoning_fields("ollama", "low") == {"reasoning_effort": "low"}
    assert reasoning_fields("vllm", "none") == {"chat_template_kwargs": {"enable_thinking": False}}
    assert reasoning_fields("vllm", "low") is None
    assert reasoning_fields(None, "none") is None
    assert reasoning_fields("ollama", {"max_tokens": 100}) is None  # OpenRouter's object
    assert reasoning_fields(None, None) == {}
    assert refusal("m@none", "http://x/v1", "ollama", "none") is None
    line = refusal("m@low", "http://x/v1", "vllm", "low")
    assert line is not None and "\n" not in line and "vLLM takes only none" in line


def test_the_estimate_reads_and_writes_as_the_family_caches() -> None:
    explicit = CacheRule("explicit", 1024)
    assert explicit.split(0, 900) == (0, 0)  # under the minimum: neither
    assert explicit.split(0, 1500) == (0, 1500)  # the first turn writes its prompt
    assert explicit.split(1500, 1900) == (1500, 400)  # the next reads it, writes what it added
    assert explicit.split(900, 1300) == (0, 1300)  # a prefix too short to have been written
    automatic = CacheRule("automatic", 1024)
    assert automatic.split(1500, 1900) == (1500, 0)  # writes cost nothing extra
    assert CacheRule("none", 0).split(5000, 6000) == (0, 0)


def _reply(usage: dict[str, Any], **top: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": "hi"}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"choices": [choice], "usage": usage, **top}


def test_a_replys_cache_fields_are_read_and_hostile_ones_count_as_absent() -> None:
    details = {"cached_tokens": 900, "cache_write_tokens": 120}
    read = completion_of(
        _reply({"prompt_tokens_details": details}, cache_discount=-0.0004, model="a/b"), 0.1
    )
    assert (read.cached_tokens, read.cache_write_tokens) == (900, 120)
    assert read.cache_discount == -0.0004 and read.answered_model == "a/b"
    in_usage = completion_of(_reply({"cache_discount": 0.002}), 0.1)
    assert in_usage.cache_discount == 0.002
    hostile = {"cached_tokens": -5, "cache_write_tokens": "12"}
    bad = completion_of(
        _reply({"prompt_tokens_details": hostile}, cache_discount=math.nan, model=7), 0.1
    )
    assert (bad.cached_tokens, bad.cache_write_tokens, bad.cache_discount) == (None, None, None)
    assert bad.answered_model is None
    huge = completion_of(_reply({}, cache_discount=1e308), 0.1)
    assert huge.cache_discount is None
