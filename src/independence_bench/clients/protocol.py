"""The one protocol for talking to models.

The model under test, the judge and the embedded local model are all a `ModelClient`: an object
with `async complete(request) -> Completion`. Requests and completions are frozen values that
hold plain OpenAI chat-format messages, so they can be hashed, stored and replayed byte for byte.
Failures are raised as `ClientError`, which says whether retrying can help.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

ReasoningEffort = Literal["off", "none", "minimal", "low", "medium", "high", "xhigh"]
"""What a model configuration may ask for. `off` sends no reasoning setting at all; `none` asks
OpenRouter to switch reasoning off (`reasoning.effort: "none"`), as the published runs did."""

Message = Mapping[str, Any]
"""One OpenAI chat-format message (`role`, `content`, optional `tool_calls` / `tool_call_id`)."""


@dataclass(frozen=True)
class CompletionRequest:
    """Everything that determines one chat completion call."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | Mapping[str, Any] | None = None
    """OpenRouter's `reasoning.effort` (`none` … `xhigh`), or its whole `reasoning` object
    (`effort` | `max_tokens`, `exclude`, `enabled`); None sends nothing."""
    provider_order: tuple[str, ...] = ()
    """Pin OpenRouter to these providers, without fallbacks."""
    provider_routing: Mapping[str, Any] | None = None
    """OpenRouter's whole `provider` object (`only`, `ignore`, `sort`, …), when a models.yaml
    gives one instead of a list; None: `provider_order` alone says where to route."""
    seed: int | None = None
    response_schema: Mapping[str, Any] | None = None
    """A JSON schema the reply must follow (judge calls), mapped to what the endpoint takes."""
    schema_name: str = "judgment"
    top_logprobs: int | None = None
    """Ask for this many most likely tokens at the reply's first position, with their
    log-probabilities (`Completion.top_logprobs`); None asks for none."""
    cache_last: bool = False
    """The messages are a conversation's turn, whose prefix the next turn repeats or this one
    reads: a model that caches only at breakpoints gets one on the last message too
    (`prompt_cache.py`). A wire detail: not part of the request's key or its stored record."""


@dataclass(frozen=True)
class ToolCall:
    """A function call the model made."""

    id: str
    name: str
    arguments: str
    """Raw JSON argument text, exactly as the model produced it (it may be malformed)."""


@dataclass(frozen=True)
class TokenLogprob:
    """One candidate token at a position of a reply, and its natural-log probability."""

    token: str
    logprob: float


@dataclass(frozen=True)
class Completion:
    """What one call returned, with what it cost."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    """The endpoint's own cost figure; None when it gave none (never a made-up 0)."""
    latency_s: float = 0.0
    served_by: str | None = None
    """The model or provider name the endpoint reports having used."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    cut_chars: int = 0
    """Characters the reply cap (`engine/reply_cap.py`) cut off this reply; 0 when whole."""
    generation_id: str | None = None
    """The endpoint's id of this generation (OpenRouter: `GET /generation?id=` audits it)."""
    native_finish_reason: str | None = None
    """The serving provider's own finish reason, beside the normalised `finish_reason`."""
    reasoning_tokens: int | None = None
    """Reasoning tokens the endpoint counted (`usage.completion_tokens_details`)."""
    reasoning_details: tuple[Mapping[str, Any], ...] = ()
    """OpenRouter's `reasoning_details` blocks, unmodified: passed back on the next turn."""
    top_logprobs: tuple[TokenLogprob, ...] | None = None
    """The most likely tokens at the reply's first position, most likely first, when the
    request asked for them (`CompletionRequest.top_logprobs`) and the endpoint returned them."""
    cached_tokens: int | None = None
    """Prompt tokens read from the provider's cache (`usage.prompt_tokens_details.cached_tokens`,
    OpenRouter's prompt-caching page, "Usage object fields"); None when not reported."""
    cache_write_tokens: int | None = None
    """Prompt tokens written to the cache (`prompt_tokens_details.cache_write_tokens`)."""
    cache_discount: float | None = None
    """What caching saved on this call in USD (`cache_discount`: negative for a write dearer
    than input, as Anthropic's); None when not reported."""
    answered_model: str | None = None
    """The model the reply says answered it (the reply's `model`), to compare with the one asked."""


class ClientError(Exception):
    """A call that failed. `retryable` says whether the same call may succeed later."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        stops_model: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.stops_model = stops_model
        """No call of this model can succeed for a long while (a daily cap): stop sending it."""


class NotJsonReply(ClientError):
    """The endpoint answered with something that is not JSON, e.g. an HTML page: a base URL
    that points at a website or a login wall rather than an API."""


@runtime_checkable
class ModelClient(Protocol):
    """Anything that can answer a chat completion request."""

    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one request; raise `ClientError` on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections, processes or weights held by the client."""
        ...
