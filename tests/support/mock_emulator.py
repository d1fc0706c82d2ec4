"""What a server emulator is, and the reply reshaping the three of them share.

A `ServerEmulator` makes the mock server answer as one kind of OpenAI-compatible server does
(`emulate_vllm.py`, `emulate_ollama.py`, `emulate_lmstudio.py`): which requests it refuses and
with what error body, how the scripted model's reply comes back (reasoning fields, `<think>` in
the content, tool calls written as text when the server parses none) and the shape of its
`GET /v1/models`. Each emulator's `flags` are the server settings a test can switch on, named
after the server's own option; each behaviour cites the documentation it comes from where the
emulator implements it.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from support.mock_behaviours import MockReply
from support.mock_llamacpp import tool_calls_as_text

JsonObject = dict[str, Any]
THOUGHT = "The persona matters here; I weigh the request before I answer."
"""The reasoning a scripted reasoning model writes before its answer."""


@dataclass(frozen=True)
class ServerEmulator:
    """One server kind: its refusals, its reply shape and its model list."""

    name: str
    flags: frozenset[str]
    """The server settings a test may switch on (`MockConfig.server_flags`)."""
    refuse: Callable[[Mapping[str, Any], frozenset[str]], MockReply | None]
    """The error the server answers a request body with, or None when it takes it."""
    shape: Callable[[MockReply, Mapping[str, Any], frozenset[str]], MockReply]
    """The scripted model's reply as this server returns it, given the request body."""
    list_models: Callable[[JsonObject], JsonObject]
    """The server's `GET /v1/models` payload, from the mock's own listing."""


def message_of(reply: MockReply) -> JsonObject | None:
    """A copy of the reply's first choice's message, or None for an error or odd reply."""
    choices = reply.payload.get("choices")
    if reply.status != 200 or not isinstance(choices, list) or not choices:
        return None
    message = choices[0].get("message") if isinstance(choices[0], Mapping) else None
    return dict(message) if isinstance(message, Mapping) else None


def with_message(reply: MockReply, message: Mapping[str, Any]) -> MockReply:
    """`reply` with its first choice's message replaced."""
    choices = list(reply.payload["choices"])
    choices[0] = {**choices[0], "message": dict(message)}
    return MockReply(reply.status, {**reply.payload, "choices": choices}, reply.headers)


def reasoning_in_field(reply: MockReply, field: str) -> MockReply:
    """The reply with `THOUGHT` in its message's `field` (`reasoning`, `reasoning_content`)."""
    message = message_of(reply)
    return reply if message is None else with_message(reply, {**message, field: THOUGHT})


def reasoning_in_content(reply: MockReply) -> MockReply:
    """The reply with `<think>THOUGHT</think>` before its content, as a reasoning model writes
    it when the server does not separate reasoning from the answer (a parsed tool call leaves
    the block alone in the content)."""
    message = message_of(reply)
    if message is None:
        return reply
    content = message.get("content") if isinstance(message.get("content"), str) else ""
    return with_message(reply, {**message, "content": f"<think>\n{THOUGHT}\n</think>\n\n"
                                 f"{content}"})  # fmt: skip


def place_reasoning(reply: MockReply, flags: frozenset[str]) -> MockReply:
    """The reply with `THOUGHT` where the server's `flags` put a reasoning model's thoughts:
    flag `reasoning` or `reasoning_content` names the message field, `think_in_content` puts a
    `<think>` block before the content; none of them: no reasoning."""
    for field in ("reasoning", "reasoning_content"):
        if field in flags:
            return reasoning_in_field(reply, field)
    return reasoning_in_content(reply) if "think_in_content" in flags else reply


def calls_written(reply: MockReply) -> MockReply:
    """The reply with its structured tool calls written into the content as plain
    `<tool_call>` blocks: a model's raw output on a server that parses no tool calls."""
    written = tool_calls_as_text(reply)
    message = message_of(written)
    if written is reply or message is None:
        return reply
    return with_message(written, {**message, "content": html.unescape(message["content"])})


def error_object(status: int, message: str, error_type: str) -> MockReply:
    """`{"error": {"message", "type", "param": null, "code": null}}`, OpenAI's error shape."""
    error = {"message": message, "type": error_type, "param": None, "code": None}
    return MockReply(status, {"error": error})
