"""The `ModelClient` for OpenRouter and any OpenAI-compatible server, on the official SDK.

One `OpenAICompatibleClient` per endpoint (base URL + key). It maps a `CompletionRequest` onto
the chat-completions API — OpenRouter's `reasoning.effort` and provider pinning go in the body's
extra fields — and maps every failure onto `ClientError`, marking what a retry can fix. The SDK's
own retries are off: the engine owns retrying, so that every attempt is bounded and counted.

The chat-completions call itself, the hot path, is one JSON POST through `chat_http.py` rather
than the SDK's request pipeline, which costs more CPU per call than the rest of the harness; its
replies and errors keep the SDK's meanings (statuses, `Retry-After`, error messages). The SDK
serves the cold paths (`GET /models`).
"""

from __future__ import annotations

import time
from typing import Any

import openai
from openai import AsyncOpenAI

from independence_bench.clients.http import HttpFailure, HttpReply, JsonPoster
from independence_bench.clients.protocol import (
    ClientError,
    Completion,
    CompletionRequest,
    NotJsonReply,
    ToolCall,
)
from independence_bench.clients.redact import Redactor

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    return _seconds(headers.get("retry-after"))


def _seconds(value: str | None) -> float | None:
    """A `Retry-After` in seconds (the HTTP-date form is not used by model APIs)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class OpenAICompatibleClient:
    """Chat completions on one endpoint through `openai.AsyncOpenAI`."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        is_openrouter: bool,
        timeout_s: float = 300.0,
    ) -> None:
        self._is_openrouter = is_openrouter
        self._sdk = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=0,
            timeout=timeout_s,
        )
        self._http = JsonPoster(base_url=base_url, api_key=api_key, timeout_s=timeout_s)
        self._json_schema_ok = True
        """Cleared when the endpoint rejects `response_format: json_schema`."""
        self._redact = Redactor([api_key])
        """Error texts come from the server and the SDK; a proxy may echo the key in them."""

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._sdk.close()

    async def list_models(self) -> list[dict[str, Any]]:
        """The entries of the endpoint's `GET /models` (raw JSON, so OpenRouter's `pricing`
        survives); raises `ClientError` (status None: no answer) or `NotJsonReply`."""
        try:
            data = await self._sdk.get(
                "/models",
                cast_to=object,
                options={"security": {"bearer_auth": True}, "timeout": 15.0},
            )
        except openai.APIStatusError as exc:
            content_type = exc.response.headers.get("content-type", "")
            error = NotJsonReply if "html" in content_type else ClientError
            raise error(
                self._redact(_error_text(exc)), retryable=False, status=exc.status_code
            ) from None
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise ClientError("no answer", retryable=True) from None
        if isinstance(data, str | bytes):
            raise NotJsonReply("HTTP 200 with a non-JSON body", retryable=False, status=200)
        entries = data.get("data") if isinstance(data, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": list(request.messages)}
        if request.tools:
            body["tools"] = list(request.tools)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        extra: dict[str, Any] = {}
        if request.reasoning_effort:
            extra["reasoning"] = {"effort": request.reasoning_effort}
        if request.provider_order:
            extra["provider"] = {"order": list(request.provider_order), "allow_fallbacks": False}
        if self._is_openrouter:
            extra["usage"] = {"include": True}
        if request.response_schema is not None:
            if self._json_schema_ok:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.schema_name,
                        "schema": dict(request.response_schema),
                        "strict": False,
                    },
                }
            else:
                body["response_format"] = {
                    "type": "json_object",
                    "schema": dict(request.response_schema),
                }
        # `extra_body` would be merged into the JSON by the SDK; the body is sent as is here.
        body.update(extra)
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        try:
            reply = await self._http.post("/chat/completions", self._body(request))
        except HttpFailure as exc:
            if exc.timed_out:
                raise ClientError("request timed out", retryable=True) from exc
            raise ClientError(self._redact(f"connection failed: {exc}"), retryable=True) from exc
        if reply.status >= 400:
            if reply.status == 400 and request.response_schema is not None and self._json_schema_ok:
                # Some servers (llama.cpp's, older vLLM) reject json_schema but take json_object.
                self._json_schema_ok = False
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
            if "json" not in reply.content_type:
                # An HTML page: the base URL points at a website or a login wall.
                raise NotJsonReply(
                    f"HTTP {reply.status} with a non-JSON body",
                    retryable=False,
                    status=reply.status,
                ) from None
            raise ClientError(
                "malformed response: the body is not valid JSON", retryable=True
            ) from None
        latency = time.perf_counter() - started
        return _completion_from(response, latency)


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
    return f"HTTP {exc.status_code}: {message or exc.message}"


def _reply_error_text(reply: HttpReply) -> str:
    """`HTTP 429: <the API's message>`, as `_error_text` words the SDK's errors."""
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


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
    cost = usage.get("cost")
    return Completion(
        content=_text(message.get("content")),
        tool_calls=tool_calls,
        reasoning=reasoning,
        finish_reason=_text(choice.get("finish_reason")),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cost_usd=float(cost)
        if isinstance(cost, int | float) and not isinstance(cost, bool)
        else None,
        latency_s=latency,
        served_by=_text(response.get("provider")) or _text(response.get("model")),
    )
