"""What a chat-completions reply means: a `Completion`, or an error it carries in its body.

OpenRouter's errors page: once a model has started, the HTTP status stays 200 and an error
arrives in the body — a top-level `error` object (`code`, `message`, `metadata` with
`provider_name`, `raw`, `error_type`), and/or a choice that ends with `finish_reason: "error"`.
Such a reply is never a finished answer: `inband_error` turns it into a `ClientError` that is
retried when its code says a retry can help (429, 5xx, 408, or no code) and stops without blind
retries on a key (401) or credit (402, unless `Retry-After` says when to come back) error, the
provider's message and name in its text. `completion_of` reads the rest: text, tool calls,
reasoning (`reasoning`, `reasoning_content`, or the text of `reasoning_details`), the
generation id, native finish reason and serving provider, the model that answered, token
counts, cache reads and writes and the cache discount, and cost — with
bring-your-own-key cost as OpenRouter's fee (`usage.cost`) plus the provider's charge
(`usage.cost_details.upstream_inference_cost`, usage-accounting page). Fields of the wrong
type count as absent: every byte here came from a server.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from typing import Any

from independence_bench.clients.protocol import ClientError, Completion, TokenLogprob, ToolCall

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
STOPPING_STATUS = frozenset({401, 402})
"""Codes that no retry fixes and that stop the run (`catalog.rejection_of`): key, credits."""
RAW_CHARS = 300
LONG_WAIT_S = 120.0
"""A rate limit that resets later than this is a cap (a free model's daily one), not a pause."""
_DAILY_CAP = re.compile(r"per[- _]?day", re.IGNORECASE)
"""How a 429's message names a daily cap (OpenRouter: "Rate limit exceeded:
free-models-per-day"), for when no `X-RateLimit-*` header came with it."""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_MAX_COUNT = 2**62
"""Token counts beyond this are nonsense (and beyond SQLite's INTEGER); they count as absent."""


def _count(value: Any) -> int | None:
    """A token count: a non-negative int that fits the store; anything else is absent."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value < _MAX_COUNT else None


MAX_CALL_COST_USD = 10_000.0
"""A reported cost above this is nonsense (two `1e308` costs once summed to `Infinity`)."""


def _cost(value: Any) -> float | None:
    """A cost in USD: a finite, non-negative number up to `MAX_CALL_COST_USD` (`NaN`,
    `Infinity`, `1e308`, `-1` count as absent)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        cost = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return cost if math.isfinite(cost) and 0 <= cost <= MAX_CALL_COST_USD else None


def _code(value: Any) -> int | None:
    """An error code as a number (OpenRouter sends a number; a proxy may send its text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if isinstance(value, str) and value.strip().isdigit():
        return _code(int(value.strip()))
    return None


def _error_text(error: Mapping[str, Any], served_by: str | None) -> str:
    """`<message> (provider X; code 429): <raw>`, each part only when the server gave it."""
    metadata = _mapping(error.get("metadata"))
    message = _text(error.get("message")) or "the provider ended the reply with an error"
    provider = _text(metadata.get("provider_name")) or served_by
    details = [f"provider {provider}"] if provider else []
    code = _code(error.get("code"))
    if code is not None:
        details.append(f"code {code}")
    text = message + (f" ({'; '.join(details)})" if details else "")
    raw = metadata.get("raw")
    raw_text = raw if isinstance(raw, str) else (None if raw is None else repr(raw))
    if raw_text and raw_text.strip() and raw_text.strip() != message:
        text += f": {raw_text.strip()[:RAW_CHARS]}"
    return text


def _error_object(value: Any) -> dict[str, Any]:
    """An `error` of any type as the documented object: a string is its message, anything
    else that is not an object (a list, a number, `true`) is kept as its `raw` text."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        return {"message": value}
    return {"metadata": {"raw": repr(value)[:RAW_CHARS]}}


def _carried_error(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error a reply's body carries, or None when it carries none.

    OpenRouter's "Errors and Debugging" page (openrouter.ai/docs/api/reference/
    errors-and-debugging): once the model has started, the status stays 200 and "any error
    occurred while the LLM is producing the output will be emitted in the response body";
    the streaming page ("Handling Errors During Streaming") shows it as a top-level `error`
    beside `choices` and a choice with `finish_reason: "error"`. Documented shapes are an
    object; a proxy or another server may send a string, `{}`, a list or any other value, at
    the top or in any choice, and may spell the finish reason `ERROR`: every non-null
    `error`, and every finish reason that reads `error` in any case, is an error."""
    choices = body.get("choices")
    listed = [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
    for value in (body.get("error"), *(c.get("error") for c in listed)):
        if value is not None:
            return _error_object(value)
    for choice in listed:
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish.strip().casefold() == "error":
            return {}
    return None


def inband_error(response: Any, retry_after: float | None = None) -> ClientError | None:
    """The error a 200 reply carries in its body (`_carried_error`), or None."""
    body = _mapping(response)
    error = _carried_error(body)
    if error is None:
        return None
    served_by = _text(body.get("provider"))
    code = _code(error.get("code"))
    text = "in-band error: " + _error_text(error, served_by)
    if code in STOPPING_STATUS and not (code == 402 and retry_after is not None):
        return ClientError(text, retryable=False, status=code)
    if code == 429 and (capped := _daily_cap(text, _text(body.get("model")) or "model")):
        return capped
    retryable = code is None or code in RETRYABLE_STATUS or code == 402
    return ClientError(text, retryable=retryable, status=code, retry_after=retry_after)


def rate_limit_error(
    message: str, limits: Mapping[str, str], model: str, now: float | None = None
) -> ClientError | None:
    """A 429 whose `X-RateLimit-*` headers (limits page, "Handling 429 errors") say the limit
    is used up until a reset too far away to wait for: one line that stops the model. None
    when they say nothing of the kind (then the 429 is retried as usual)."""
    remaining, reset = limits.get("x-ratelimit-remaining"), limits.get("x-ratelimit-reset")
    if remaining is None or reset is None or remaining.strip() != "0":
        return _daily_cap(message, model)
    try:
        reset_s = float(reset) / 1000.0  # milliseconds since the epoch
    except ValueError:
        return None
    if not math.isfinite(reset_s):
        return None
    wait = reset_s - (time.time() if now is None else now)
    if wait <= LONG_WAIT_S:
        return ClientError(message, retryable=True, status=429, retry_after=max(0.0, wait))
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(reset_s))
    cap = limits.get("x-ratelimit-limit", "?")
    return ClientError(
        f"{model}: rate limit of {cap} requests used up until {when} ({message}); the same "
        "command resumes it after then (on a :free model, credits raise its daily limit)",
        retryable=False,
        status=429,
        stops_model=True,
    )


def _daily_cap(message: str, model: str) -> ClientError | None:
    """The model-stopping error of a 429 whose message names a daily cap, else None."""
    if _DAILY_CAP.search(message) is None:
        return None
    return ClientError(
        f"{model}: daily rate limit used up ({message}); the same command resumes it tomorrow "
        "(UTC); on a :free model, credits raise its daily limit",
        retryable=False,
        status=429,
        stops_model=True,
    )


def _reasoning_details(message: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return ()
    return tuple(block for block in details if isinstance(block, dict))


def reasoning_text(details: tuple[Mapping[str, Any], ...]) -> str | None:
    """The readable text of `reasoning_details` blocks (text and summaries; encrypted blocks
    have none), joined by blank lines; None when there is none."""
    parts = []
    for block in details:
        text = _text(block.get("text")) or _text(block.get("summary"))
        if text and text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts) or None


def _total_cost(usage: Mapping[str, Any]) -> float | None:
    """`usage.cost`, plus the provider's own charge on a bring-your-own-key request."""
    fee = _cost(usage.get("cost"))
    if usage.get("is_byok") is not True:
        return fee
    upstream = _cost(_mapping(usage.get("cost_details")).get("upstream_inference_cost"))
    if fee is None or upstream is None:
        return fee if upstream is None else upstream
    return fee + upstream


_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


def split_thinking(content: str | None) -> tuple[str | None, str | None]:
    """`(reply, reasoning)` of a content that carries the model's `<think>` block.

    A reasoning model served without a reasoning parser writes `<think>...</think>` before its
    answer; when the chat template opened the tag itself, only `</think>` shows. A block cut
    off before its end is all reasoning (no reply). Content without either tag is returned as
    it is.
    """
    if content is None:
        return None, None
    stripped = content.lstrip()
    opened = stripped.startswith(_THINK_OPEN)
    if opened:
        stripped = stripped[len(_THINK_OPEN) :]
    elif _THINK_CLOSE not in stripped or _THINK_OPEN in stripped:
        return content, None
    thought, closed, reply = stripped.partition(_THINK_CLOSE)
    if not closed:
        return None, thought.strip() or None
    return reply.strip() or None, thought.strip() or None


def completion_of(response: Any, latency: float) -> Completion:
    """A `Completion` from the reply's JSON (its in-band errors already ruled out)."""
    choices = _mapping(response).get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ClientError("the endpoint returned no choices", retryable=True)
    choice = choices[0]
    message = _mapping(choice.get("message"))
    calls = message.get("tool_calls")
    tool_calls = tuple(
        ToolCall(
            id=_text(call.get("id")) or "",
            name=_text(function.get("name")) or "",
            arguments=_text(function.get("arguments")) or "",
        )
        for call in (calls if isinstance(calls, list) else [])
        if isinstance(call, dict) and isinstance(function := call.get("function"), dict)
    )
    details = _reasoning_details(message)
    # vLLM >= 0.11, Ollama and OpenRouter name the field `reasoning`, vLLM <= 0.10 and
    # LM Studio `reasoning_content`; a server with no reasoning parser leaves `<think>` in the
    # content (split off here, so neither the transcript nor the judge sees it).
    content, thought = split_thinking(_text(message.get("content")))
    reasoning = (
        _text(message.get("reasoning"))
        or _text(message.get("reasoning_content"))
        or reasoning_text(details)
        or thought
    )
    usage = _mapping(response.get("usage"))
    # prompt-caching page, "Usage object fields": `usage.prompt_tokens_details` carries
    # `cached_tokens` (read from the cache) and `cache_write_tokens` (written to it).
    cache_usage = _mapping(usage.get("prompt_tokens_details"))
    return Completion(
        content=content,
        tool_calls=tool_calls,
        reasoning=reasoning,
        finish_reason=_text(choice.get("finish_reason")),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cost_usd=_total_cost(usage),
        latency_s=latency,
        served_by=_text(response.get("provider")) or _text(response.get("model")),
        generation_id=_text(response.get("id")),
        native_finish_reason=_text(choice.get("native_finish_reason")),
        reasoning_tokens=_count(
            _mapping(usage.get("completion_tokens_details")).get("reasoning_tokens")
        ),
        reasoning_details=details,
        top_logprobs=first_token_logprobs(choice.get("logprobs")),
        cached_tokens=_count(cache_usage.get("cached_tokens")),
        cache_write_tokens=_count(cache_usage.get("cache_write_tokens")),
        cache_discount=_discount(response.get("cache_discount", usage.get("cache_discount"))),
        answered_model=_text(response.get("model")),
    )


def _discount(value: Any) -> float | None:
    """A `cache_discount` in USD: finite, at most `MAX_CALL_COST_USD` either way (negative is
    a cache write dearer than plain input, prompt-caching page, "Inspecting cache usage")."""
    number = _finite(value)
    return number if number is not None and abs(number) <= MAX_CALL_COST_USD else None


MAX_TOP_LOGPROBS = 20
"""The most `top_logprobs` the OpenAI API allows; longer lists a server sends are cut."""


def first_token_logprobs(logprobs: Any) -> tuple[TokenLogprob, ...] | None:
    """The candidates at the reply's first token, from a choice's `logprobs` object.

    OpenAI API reference, "The chat completion object": `choices[].logprobs.content[]` holds
    one entry per generated token, each with `top_logprobs`, a list of `{token, logprob,
    bytes}`. None when that is absent or not a list; entries that are not a string token with a
    finite log-probability are left out, and log-probabilities above 0 count as 0.
    """
    content = _mapping(logprobs).get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    top = content[0].get("top_logprobs")
    if not isinstance(top, list):
        return None
    out: list[TokenLogprob] = []
    for entry in top[:MAX_TOP_LOGPROBS]:
        token, logprob = _mapping(entry).get("token"), _finite(_mapping(entry).get("logprob"))
        if isinstance(token, str) and logprob is not None:
            out.append(TokenLogprob(token, min(0.0, logprob)))
    return tuple(out)


def _finite(value: Any) -> float | None:
    """A finite number as a float; anything else (`NaN`, a string, a huge int) is absent."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
