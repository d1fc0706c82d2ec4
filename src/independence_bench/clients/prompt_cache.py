"""Prompt caching as OpenRouter documents it: which models need `cache_control` breakpoints,
where aib puts them, and the shortest prefix each family caches.

OpenRouter's prompt-caching page: most providers cache a repeated prompt prefix on their own
(OpenAI, DeepSeek, Gemini 2.5, Grok, …: "automatic"); Anthropic and Alibaba cache only up to a
`cache_control: {"type": "ephemeral"}` breakpoint the request marks on a content block
("explicit"), at most four per request (Anthropic section). aib marks the first message of
such a model's requests (a subject's system prompt, a judge's fixed instructions) and, on a
conversation's turns (`CompletionRequest.cache_last`), the last message too: Anthropic's
prompt-caching page ("How prompt caching works") says a request reads the longest cached
prefix ending at a block boundary at or before a breakpoint, so each turn reads what the turn
before wrote and writes only what it added. A judge's transcript is never repeated, so writing
it (1.25x the input price) would only cost: a judge call marks its instructions alone.
Automatic families are sent nothing.

The breakpoints are a wire detail: `with_breakpoints` is applied by the client to the messages
it sends, never to the `CompletionRequest` the store keys calls by. A run with
`--no-prompt-cache` and one without ask for the same replies, so they share every stored call
and switching the flag never pays for work again (the stored request is the conversation asked
for; whether its prefix came from a cache is in the completion's `cached_tokens`).

`min_cached_tokens` is the shortest prefix a family caches (a shorter one is billed as plain
input, neither written nor read): Anthropic's page, "Cache limitations": 1,024 tokens for
Sonnet and Opus, 2,048 for Haiku 3 and 3.5, 4,096 for Haiku 4.5; OpenAI's prompt-caching guide
and OpenRouter's OpenAI section: 1,024; Gemini's context-caching page ("Implicit caching"):
1,024 for Flash, 4,096 for Pro; DeepSeek's context-caching guide: 64-token units. `aib estimate`
reads it; the emulator in `tests/support/mock_openrouter.py` follows the same pages on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from independence_bench.clients.protocol import Message

CacheKind = Literal["explicit", "automatic"]
EXPLICIT_AUTHORS = ("anthropic", "qwen", "alibaba")
"""Model authors whose provider caches only at breakpoints (Anthropic; Alibaba serves `qwen/`)."""
BREAKPOINT = {"type": "ephemeral"}
"""The `cache_control` value of a breakpoint (the default five-minute cache)."""


def cache_kind(model_id: str) -> CacheKind:
    """`explicit` for a model that needs breakpoints, else `automatic` (caches on its own)."""
    author = model_id.split("/", 1)[0].lower() if "/" in model_id else ""
    return "explicit" if author in EXPLICIT_AUTHORS else "automatic"


def min_cached_tokens(model_id: str) -> int:
    """The shortest prompt prefix the model's family caches (see the module docstring)."""
    name = model_id.lower()
    if name.startswith("anthropic/"):
        if "haiku-4" in name:
            return 4096
        return 2048 if "haiku" in name else 1024
    if name.startswith("google/"):
        return 4096 if "pro" in name else 1024
    if name.startswith("deepseek/"):
        return 64
    return 1024


def _marked(message: Message) -> dict[str, Any]:
    """`message` with a breakpoint on its (last) content block; a string content becomes one
    text block (Anthropic's messages take either; the block is the same text)."""
    content = message.get("content")
    if isinstance(content, str):
        block: dict[str, Any] = {"type": "text", "text": content, "cache_control": BREAKPOINT}
        return {**message, "content": [block]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": BREAKPOINT}]}
    return dict(message)


def with_breakpoints(messages: Sequence[Message], *, last: bool) -> list[Message]:
    """The messages as sent to an explicit-caching model: a breakpoint on the first message
    and, when `last` (a conversation's turn), on the last. Only these one or two messages
    are copied; the others are passed through as they are."""
    sent = list(messages)
    ends = (0, len(sent) - 1) if last else (0,)
    marked = [i for i in ends if 0 <= i < len(sent) and sent[i].get("content")]
    for index in dict.fromkeys(marked):
        sent[index] = _marked(sent[index])
    return sent
