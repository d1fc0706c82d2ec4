"""The `ModelClient` for OpenRouter and any OpenAI-compatible server, over one aiohttp session.

One `OpenAICompatibleClient` per endpoint (base URL + key). It maps a `CompletionRequest` onto
the chat-completions API — OpenRouter's `reasoning.effort` and provider pinning go in the body's
extra fields — and maps every failure onto `ClientError`, marking what a retry can fix. Every
request, `POST /chat/completions` and `GET /models` alike, goes through `http.JsonPoster`.

It adapts to what the server can do, so the same run works on OpenRouter, vLLM, Ollama and
llama-cpp-python's server. Messages go out without `"content": null` (a tool-call-only assistant
message simply has no `content`; llama-cpp-python answers null with HTTP 500). A judge's schema
goes out as `response_format: json_schema`, and when the server refuses that by naming it (any
4xx/5xx whose message mentions `response_format`, `json_schema` or `json_object`), as
`json_object` with the schema beside it, then with no `response_format` at all (the judge prompt
spells out the fields either way). The step down is remembered for the endpoint.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from independence_bench.clients.http import ConnectionBudget, HttpFailure, HttpReply, JsonPoster
from independence_bench.clients.local.gguf_chat import constrainable_schema
from independence_bench.clients.protocol import (
    ClientError,
    Completion,
    CompletionRequest,
    Message,
    NotJsonReply,
    TokenLogprob,
    ToolCall,
)
from independence_bench.clients.redact import Redactor

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
RESPONSE_FORMATS = ("json_schema", "json_object", "prompt")
"""How a judge's schema is sent, best first; `prompt`: only in the prompt, no response_format."""
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")
MODELS_CONNECT_TIMEOUT_S = 15.0
LIST_ATTEMPTS = 3
"""How often `GET /models` is asked when it answers a non-JSON body that is not a web page."""
LIST_RETRY_DELAY_S = 0.5


def _seconds(value: str | None) -> float | None:
    """A `Retry-After` in seconds (the HTTP-date form is not used by model APIs)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def wire_messages(messages: tuple[Message, ...]) -> list[Message]:
    """Messages as sent: a `content` of None is left out rather than sent as `null`."""
    return [
        {k: v for k, v in m.items() if k != "content"} if m.get("content") is None else m
        for m in messages
    ]


def refuses_response_format(reply: HttpReply) -> bool:
    """True when an error reply blames the request's `response_format`."""
    text = reply.text.lower()
    return reply.status >= 400 and any(word in text for word in _FORMAT_WORDS)


def _is_web_page(reply: HttpReply) -> bool:
    return "html" in reply.content_type.lower() or reply.body.lstrip()[:1] == b"<"


class OpenAICompatibleClient:
    """Chat completions and the model list of one endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        is_openrouter: bool,
        timeout_s: float = 300.0,
        connections: ConnectionBudget | None = None,
    ) -> None:
        self._is_openrouter = is_openrouter
        self._http = JsonPoster(
            base_url=base_url, api_key=api_key, timeout_s=timeout_s, connections=connections
        )
        self._format_level = 0
        """Index into `RESPONSE_FORMATS`: how this endpoint takes a schema, learnt by refusals."""
        self._redact = Redactor([api_key])
        """Error texts come from the server; a proxy may echo the key in them."""

    @property
    def response_format(self) -> str:
        """How judge schemas are currently sent to this endpoint (see `RESPONSE_FORMATS`)."""
        return RESPONSE_FORMATS[self._format_level]

    async def aclose(self) -> None:
        await self._http.aclose()

    async def list_models(self) -> list[dict[str, Any]]:
        """The entries of the endpoint's `GET /models` (raw JSON, so OpenRouter's `pricing`
        survives); raises `ClientError` (status None: no answer) or `NotJsonReply`.

        A non-JSON body that is not a web page (a proxy's plain-text hiccup) is asked for
        again, as a chat call would be, so it does not end a run before it starts."""
        for attempt in range(1, LIST_ATTEMPTS + 1):
            try:
                reply = await self._http.get("/models", connect_timeout_s=MODELS_CONNECT_TIMEOUT_S)
            except HttpFailure:
                raise ClientError("no answer", retryable=True) from None
            if reply.status >= 400:
                error = NotJsonReply if "html" in reply.content_type.lower() else ClientError
                raise error(
                    self._redact(_reply_error_text(reply)), retryable=False, status=reply.status
                )
            try:
                data = reply.json()
                break
            except ValueError:
                _refuse_web_page(reply)
                if attempt == LIST_ATTEMPTS:
                    raise ClientError(
                        f"HTTP {reply.status} with a non-JSON body after {attempt} attempts",
                        retryable=True,
                        status=reply.status,
                    ) from None
            await asyncio.sleep(LIST_RETRY_DELAY_S * attempt)
        entries = data.get("data") if isinstance(data, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": wire_messages(request.messages)}
        if request.tools:
            body["tools"] = list(request.tools)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        if request.top_logprobs is not None:
            # OpenAI API reference, "Create chat completion": `logprobs` (boolean) and
            # `top_logprobs` (0-20, needs `logprobs: true`); OpenRouter's API reference lists
            # both among its request parameters and passes them to providers that support them.
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
        extra: dict[str, Any] = {}
        if request.reasoning_effort:
            extra["reasoning"] = {"effort": request.reasoning_effort}
        if request.provider_order:
            extra["provider"] = {"order": list(request.provider_order), "allow_fallbacks": False}
        if self._is_openrouter:
            extra["usage"] = {"include": True}
        if request.response_schema is not None:
            if self.response_format == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.schema_name,
                        "schema": dict(request.response_schema),
                        "strict": False,
                    },
                }
            elif self.response_format == "json_object":
                # Only llama.cpp's servers read a schema here, and turn it into a grammar: a
                # long maxLength makes one they cannot build (the server then dies), so send
                # the subset they enforce, as the embedded client does.
                body["response_format"] = {
                    "type": "json_object",
                    "schema": constrainable_schema(request.response_schema),
                }
        # `extra_body` would be merged into the JSON by the SDK; the body is sent as is here.
        body.update(extra)
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        level = self._format_level
        try:
            reply = await self._http.post("/chat/completions", self._body(request))
        except HttpFailure as exc:
            if exc.timed_out:
                raise ClientError("request timed out", retryable=True) from exc
            raise ClientError(self._redact(f"connection failed: {exc}"), retryable=True) from exc
        if reply.status >= 400:
            if (
                request.response_schema is not None
                and level < len(RESPONSE_FORMATS) - 1
                and refuses_response_format(reply)
            ):
                # llama-cpp-python answers json_schema with HTTP 500, older vLLM with 400;
                # step down once for the endpoint (concurrent refusals do not step twice).
                self._format_level = max(self._format_level, level + 1)
                return await self.complete(request)
            raise ClientError(
                self._redact(_reply_error_text(reply)),
                retryable=reply.status in RETRYABLE_STATUS,
                status=reply.status,
                retry_after=_seconds(reply.retry_after),
            )
        try:
            response = reply.json()
        except ValueError:
            _refuse_web_page(reply)
            # Any other non-JSON body (a proxy's plain-text hiccup) is transient.
            raise ClientError(
                f"malformed response: HTTP {reply.status} body is not JSON", retryable=True
            ) from None
        latency = time.perf_counter() - started
        return _completion_from(response, latency)


def _refuse_web_page(reply: HttpReply) -> None:
    """Raise `NotJsonReply` for an HTML page where JSON was due: the base URL points at a
    website or a login wall, which no retry fixes."""
    if _is_web_page(reply):
        raise NotJsonReply(
            f"HTTP {reply.status} with a non-JSON body", retryable=False, status=reply.status
        ) from None


def _reply_error_text(reply: HttpReply) -> str:
    """`HTTP 429: <the API's message>`, or the start of the body when it has no message."""
    try:
        body = reply.json()
    except ValueError:
        body = None
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
    if not isinstance(message, str) or not message:
        message = reply.text.strip()[:300] or "(empty body)"
    return f"HTTP {reply.status}: {message}"


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


def _cost(value: Any) -> float | None:
    """A cost in USD: a finite, non-negative number (`NaN`, `Infinity`, `-1` count as absent)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        cost = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


def _completion_from(response: Any, latency: float) -> Completion:
    """A `Completion` from the reply's JSON; fields of the wrong type count as absent."""
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
    reasoning = _text(message.get("reasoning")) or _text(message.get("reasoning_content"))
    usage = _mapping(response.get("usage"))
    return Completion(
        content=_text(message.get("content")),
        tool_calls=tool_calls,
        reasoning=reasoning,
        finish_reason=_text(choice.get("finish_reason")),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cost_usd=_cost(usage.get("cost")),
        latency_s=latency,
        served_by=_text(response.get("provider")) or _text(response.get("model")),
        top_logprobs=first_token_logprobs(choice.get("logprobs")),
    )


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
