"""How OpenRouter bills a call, as its documentation describes it: the emulator's price book,
prompt cache and usage object (`MockOpenRouter` with `OpenRouterScript(bill=True)`).

Each rule beside the page it follows (openrouter.ai/docs; facts, not their prose):

- Families and their caches — prompt-caching page: Anthropic caches only up to
  `cache_control` breakpoints ("Anthropic Claude": writes 1.25x the input price, reads 0.1x;
  at most four breakpoints); OpenAI caches automatically ("OpenAI": writes free, reads 0.25x or
  0.5x — the emulator uses 0.5x); DeepSeek automatically ("DeepSeek": writes at the input
  price, reads 0.1x). `acme` (the scripted models' own author) keeps the plain catalog.
- The shortest prefix cached — Anthropic's prompt-caching page, "Cache limitations": 1,024
  tokens for Sonnet and Opus (the emulator's Anthropic models), OpenAI's prompt-caching guide:
  1,024; DeepSeek's context-caching guide: 64-token units. A shorter prefix is neither written
  nor read.
- A hit — Anthropic's page, "How prompt caching works": a request reads the longest prefix,
  ending at a block boundary at or before a breakpoint, that an earlier request wrote; what it
  writes is the prefix up to its last breakpoint. The automatic families read the longest
  earlier prefix at a message boundary and keep every prefix they saw (OpenAI's guide:
  "longest prefix"; its 128-token granularity is not modelled).
- Usage — prompt-caching page, "Usage object fields": `prompt_tokens_details.cached_tokens`
  and `cache_write_tokens`; "Inspecting cache usage": `cache_discount`, what caching saved
  (negative when a write cost more than input); usage-accounting page: `cost`, and for
  bring-your-own-key `is_byok` with the provider's charge in
  `cost_details.upstream_inference_cost` (BYOK page: OpenRouter's fee is 5% of it).
- Reasoning — reasoning-tokens page, "Reasoning effort level": an effort gives the share of
  `max_tokens` listed in `EFFORT_SHARE` as reasoning budget; the emulator's model uses all of
  it, billed at `internal_reasoning`.
- Tokens — the emulator counts 4 characters of the JSON of the tools and messages as a token
  (OpenAI's rule of thumb, "a token is about 4 characters of English"); breakpoints and text
  blocks are read as the plain text they carry.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from support.mock_behaviours import COST_PER_TOKEN_USD

EFFORT_SHARE = {"xhigh": 0.95, "high": 0.8, "medium": 0.5, "low": 0.2, "minimal": 0.1}
BYOK_FEE = 0.05


@dataclass(frozen=True)
class Family:
    """One model family's cache: explicit (breakpoints) or automatic, and its prices."""

    author: str
    explicit: bool
    min_tokens: int
    read: float
    """Cache-read price as a share of the input price."""
    write: float | None
    """Cache-write price as a share of the input price; None: writes cost nothing extra."""


FAMILIES = {
    "anthropic": Family("anthropic", explicit=True, min_tokens=1024, read=0.1, write=1.25),
    "openai": Family("openai", explicit=False, min_tokens=1024, read=0.5, write=None),
    "deepseek": Family("deepseek", explicit=False, min_tokens=64, read=0.1, write=1.0),
}


def family_of(model: str) -> Family | None:
    return FAMILIES.get(model.split("/", 1)[0]) if "/" in model else None


def family_price(family: Family | None) -> dict[str, str]:
    """A `pricing` object (models API reference: USD per token as decimal strings)."""
    token = COST_PER_TOKEN_USD
    price = {
        "prompt": f"{token:.9f}",
        "completion": f"{2 * token:.9f}",
        "request": f"{100 * token:.9f}",
        "internal_reasoning": f"{3 * token:.9f}",
    }
    if family is not None:
        price["input_cache_read"] = f"{token * family.read:.12f}"
        if family.write is not None:
            price["input_cache_write"] = f"{token * family.write:.12f}"
    return price


def plain_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The messages with text blocks (and their `cache_control`) read as plain text."""
    out = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if isinstance(content, list):
            text = "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
            message = {**message, "content": text}
        out.append(dict(message))
    return out


def tokens_of(parts: Sequence[Any]) -> int:
    return len(json.dumps(list(parts), ensure_ascii=False)) // 4 + 1


def _breakpoints(messages: Sequence[Any]) -> list[int]:
    marked = []
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and "cache_control" in b for b in content
        ):
            marked.append(index)
    return marked


@dataclass(frozen=True)
class CacheUse:
    prompt: int
    read: int
    written: int


class PromptCache:
    """Every family's cached prefixes, by model (a cache is per model and provider)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stored: set[str] = set()

    def use(self, model: str, body: Mapping[str, Any]) -> CacheUse:
        given = body.get("messages")
        raw: list[Any] = given if isinstance(given, list) else []
        messages = plain_messages(raw)
        tools = list(body.get("tools") or [])
        prompt = tokens_of([*tools, *messages])
        family = family_of(model)
        if family is None:
            return CacheUse(prompt, 0, 0)
        prefixes = [
            (tokens_of([*tools, *messages[: i + 1]]), _key(model, tools, messages[: i + 1]))
            for i in range(len(messages))
        ]
        marked = _breakpoints(raw) if family.explicit else list(range(len(messages)))
        if not marked:
            return CacheUse(prompt, 0, 0)
        with self._lock:
            read = max(
                (size for size, key in prefixes[: marked[-1] + 1] if key in self._stored),
                default=0,
            )
            new = [
                i
                for i in marked
                if prefixes[i][0] >= family.min_tokens and prefixes[i][1] not in self._stored
            ]
            self._stored.update(prefixes[i][1] for i in new)
        read = read if read >= family.min_tokens else 0
        written = 0
        if family.explicit and new:
            written = max(prefixes[i][0] for i in new) - read
        return CacheUse(prompt, read, max(0, written))


def _key(model: str, tools: Sequence[Any], messages: Sequence[Any]) -> str:
    text = json.dumps([model, list(tools), list(messages)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def billed_usage(
    model: str,
    cache: CacheUse,
    completion: int,
    reasoning: int,
    *,
    byok: bool,
) -> dict[str, Any]:
    """The usage object of a call billed at `family_price`, with its cache fields."""
    family = family_of(model)
    token = COST_PER_TOKEN_USD
    read_price = token * family.read if family else token
    write_price = token * family.write if family and family.write is not None else token
    plain = cache.prompt - cache.read - cache.written
    cost = (
        plain * token
        + cache.read * read_price
        + cache.written * write_price
        + (completion - reasoning) * 2 * token
        + reasoning * 3 * token
        + 100 * token
    )
    discount = cache.read * (token - read_price) + cache.written * (token - write_price)
    usage: dict[str, Any] = {
        "prompt_tokens": cache.prompt,
        "completion_tokens": completion,
        "total_tokens": cache.prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cache.read, "cache_write_tokens": cache.written},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
        "cache_discount": round(discount, 12),
    }
    if byok:
        usage.update(
            cost=round(cost * BYOK_FEE, 12),
            is_byok=True,
            cost_details={"upstream_inference_cost": round(cost, 12)},
        )
    else:
        usage.update(cost=round(cost, 12), is_byok=False)
    return usage


def reasoning_budget(body: Mapping[str, Any]) -> int:
    """Reasoning tokens the emulator's model uses: the effort's share of `max_tokens`."""
    reasoning = body.get("reasoning")
    if not isinstance(reasoning, Mapping):
        return 0
    given = body.get("max_tokens")
    most = given if isinstance(given, int) else 0
    if isinstance(reasoning.get("max_tokens"), int):
        return min(int(reasoning["max_tokens"]), most)
    return int(EFFORT_SHARE.get(str(reasoning.get("effort")), 0.0) * most)


def padded(text: str, tokens: int) -> str:
    """`text` lengthened with filler words to `tokens` × 4 characters (never shortened)."""
    want = tokens * 4
    if len(text) >= want:
        return text
    filler = " and so I keep to it" * (want // 20 + 1)
    return (text + filler)[:want]
