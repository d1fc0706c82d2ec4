"""The `ModelClient` for OpenRouter and any OpenAI-compatible server, on the official SDK.

One `OpenAICompatibleClient` per endpoint (base URL + key). It maps a `CompletionRequest` onto
the chat-completions API — OpenRouter's `reasoning.effort` and provider pinning go in the body's
extra fields — and maps every failure onto `ClientError`, marking what a retry can fix. The SDK's
own retries are off: the engine owns retrying, so that every attempt is bounded and counted.
"""

from __future__ import annotations

import time
from typing import Any

import openai
from openai import AsyncOpenAI

from independence_bench.client import ClientError, Completion, CompletionRequest, ToolCall

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _extra(obj: Any, name: str) -> Any:
    """A field the SDK's typed model does not declare (e.g. OpenRouter's `usage.cost`)."""
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


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
        self._json_schema_ok = True
        """Cleared when the endpoint rejects `response_format: json_schema`."""

    async def aclose(self) -> None:
        await self._sdk.close()

    async def preflight(self) -> str | None:
        """None when the endpoint answers at all (any HTTP status), else what went wrong."""
        try:
            await self._sdk.models.list(timeout=15.0)
        except openai.APIStatusError:
            return None
        except (openai.APIConnectionError, openai.APITimeoutError):
            return (
                f"cannot reach {self._sdk.base_url}: no answer; start the server or fix the "
                "base URL (--base-url / --judge-base-url / base_url in models.yaml)"
            )
        except openai.APIResponseValidationError:
            return None
        return None

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
        if extra:
            body["extra_body"] = extra
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        try:
            response = await self._sdk.chat.completions.create(**self._body(request))
        except openai.BadRequestError as exc:
            if request.response_schema is not None and self._json_schema_ok:
                # Some servers (llama.cpp's, older vLLM) reject json_schema but take json_object.
                self._json_schema_ok = False
                return await self.complete(request)
            raise ClientError(_error_text(exc), retryable=False, status=exc.status_code) from exc
        except openai.APIStatusError as exc:
            raise ClientError(
                _error_text(exc),
                retryable=exc.status_code in RETRYABLE_STATUS,
                status=exc.status_code,
                retry_after=_retry_after(exc.response.headers),
            ) from exc
        except openai.APITimeoutError as exc:
            raise ClientError("request timed out", retryable=True) from exc
        except openai.APIConnectionError as exc:
            raise ClientError(f"connection failed: {exc}", retryable=True) from exc
        except openai.APIResponseValidationError as exc:
            raise ClientError(f"malformed response: {exc}", retryable=True) from exc
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


def _completion_from(response: Any, latency: float) -> Completion:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise ClientError("the endpoint returned no choices", retryable=True)
    choice = choices[0]
    message = choice.message
    tool_calls = tuple(
        ToolCall(id=call.id or "", name=call.function.name, arguments=call.function.arguments or "")
        for call in (message.tool_calls or [])
        if getattr(call, "function", None) is not None
    )
    reasoning = _extra(message, "reasoning") or _extra(message, "reasoning_content")
    usage = getattr(response, "usage", None)
    cost = _extra(usage, "cost") if usage is not None else None
    return Completion(
        content=message.content,
        tool_calls=tool_calls,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        finish_reason=choice.finish_reason,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
        latency_s=latency,
        served_by=_extra(response, "provider") or getattr(response, "model", None),
    )
