"""The `ModelClient` for OpenRouter and any OpenAI-compatible server, over one aiohttp session.

One `OpenAICompatibleClient` per endpoint (base URL + key). It maps a `CompletionRequest` onto
the chat-completions API — on an OpenRouter endpoint (`openrouter.is_openrouter_endpoint`) its
`reasoning` and `provider` objects go in the body and its attribution headers on every request,
and on no other endpoint — and maps every failure onto `ClientError`, marking what a retry can
fix; what a reply means, in-band errors included, is `replies.py`'s. Every request, `POST
/chat/completions` and `GET /models` alike, goes through `http.JsonPoster`.

It adapts to what the server can do, so the same run works on OpenRouter, vLLM, Ollama and
llama-cpp-python's server. Messages go out without `"content": null` (a tool-call-only assistant
message simply has no `content`; llama-cpp-python answers null with HTTP 500). A judge's schema
goes out as `response_format: json_schema`, and when the server refuses that by naming it (any
4xx/5xx whose message mentions `response_format`, `json_schema` or `json_object`), as
`json_object` with the schema beside it, then with no `response_format` at all (the judge prompt
spells out the fields either way). The step down is remembered for the endpoint.

A server that refuses the `tools` field itself (vLLM without `--enable-auto-tool-choice
--tool-call-parser`, an Ollama model whose template has no tools) is detected by its first
refusal: a model's first call with tools goes alone (`tool_support.py`), and once refused, the
model's calls on this endpoint get the tools described in the prompt (`tool_prompt.py`); the
conversation layer reads the call from the reply text and counts it as a protocol deviation.
`notices` says so, once, with the server flags that give native tool calls back. Only a 400 or
422 is such a refusal: a 5xx never switches a model to the text path. llama.cpp's
`llama-server` without `--jinja` answers 500 naming the flag; that is not retried (no retry
starts the server with it): the call fails with one line that names the fix (`NEEDS_JINJA`),
and so does each of the model's other calls with tools.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlsplit

from independence_bench.clients.http import ConnectionBudget, HttpFailure, HttpReply, JsonPoster
from independence_bench.clients.local.gguf_chat import constrainable_schema
from independence_bench.clients.openrouter import provider_field, reasoning_field
from independence_bench.clients.prompt_cache import cache_kind, with_breakpoints
from independence_bench.clients.protocol import (
    ClientError,
    Completion,
    CompletionRequest,
    Message,
    NotJsonReply,
)
from independence_bench.clients.redact import Redactor, without_url_credentials
from independence_bench.clients.replies import (
    RETRYABLE_STATUS,
    completion_of,
    inband_error,
    rate_limit_error,
)
from independence_bench.clients.reply_body import cut_error_text
from independence_bench.clients.server_reasoning import ServerKind, reasoning_fields, server_of
from independence_bench.clients.tool_prompt import (
    TOOLS_IN_PROMPT,
    instructions_digest,
    tools_in_text,
)
from independence_bench.clients.tool_support import ToolSupport
from independence_bench.text.counts import count_of

RESPONSE_FORMATS = ("json_schema", "json_object", "prompt")
"""How a judge's schema is sent, best first; `prompt`: only in the prompt, no response_format."""
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")
_TOOL_WORDS = (
    # vLLM, docs.vllm.ai "Tool Calling" (Automatic Function Calling): `auto` tool choice needs
    # `--enable-auto-tool-choice` and `--tool-call-parser`; the 400 names both flags.
    "tool-call-parser",
    "auto-tool-choice",
    "tool choice",
    "tool_choice",
    # llama.cpp's llama-server: tools need the Jinja chat template (`--jinja`).
    "--jinja",
    "tools param",
    # Ollama: a model whose template has no tool support answers "... does not support tools".
    "support tools",
)
REFUSAL_STATUSES = (400, 422)
"""A request refused as such: a 5xx is the server failing, never a switch to the text path."""
MISSING_JINJA = "requires --jinja"
"""llama.cpp's `llama-server --no-jinja` answers HTTP 500 "tools param requires --jinja flag"
to every request with tools (docs/contributors/servers-live.md, measured): the server naming
the start-up flag it lacks, which no retry brings."""
NEEDS_JINJA = (
    "llama-server needs --jinja for tool calls: restart it with --jinja, or run with "
    "--modes user_role"
)
"""Starts the error of a call with tools that llama-server refused for want of `--jinja`:
the fix comes first, so the failure summary's line (cut at 160 characters) keeps it."""
TOOLS_FLAGS_HINT = (
    "for native tool calls restart the server with its tool-call flags (vLLM: "
    "--enable-auto-tool-choice --tool-call-parser NAME; llama.cpp's llama-server: --jinja; "
    "Ollama: a model tagged 'tools') and run again with --fresh (new runs; the stored "
    "conversations stay as they are, and a plain re-run reuses them), or run with "
    "--modes user_role"
)
MODELS_CONNECT_TIMEOUT_S = 15.0
LIST_ATTEMPTS = 3
"""How often `GET /models` is asked when it answers a non-JSON body that is not a web page."""
LIST_RETRY_DELAY_S = 0.5
MAX_LIST_PAGES = 50
"""`GET /models` pages followed at most (OpenRouter pages by `links.next`, 500 models each)."""
OPENROUTER_ONLY_MESSAGE_FIELDS = ("reasoning_details",)
NO_TOOL_PROVIDER = "no OpenRouter provider takes tool calls for"
"""Starts the error of OpenRouter's 404 "No endpoints found that support the requested
parameters" for a request with `tools` and `provider.require_parameters` (provider-routing
page, "Requiring Providers to Support All Parameters"); `catalog.rejection_of` stops on it."""
CONTEXT_OVERFLOW = "the prompt is longer than the context"
_CONTEXT_WORDS = ("context length", "context_length", "context window", "maximum context")
"""How OpenRouter's (and vLLM's, OpenAI's) 400 for a prompt over the context names it."""


def _seconds(value: str | None) -> float | None:
    """A `Retry-After` in seconds (the HTTP-date form is not used by model APIs)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def wire_messages(messages: tuple[Message, ...], *, openrouter: bool = False) -> list[Message]:
    """Messages as sent: a `content` of None is left out rather than sent as `null`, and
    OpenRouter's `reasoning_details` go to OpenRouter only."""
    sent: list[Message] = []
    for message in messages:
        foreign = not openrouter and any(f in message for f in OPENROUTER_ONLY_MESSAGE_FIELDS)
        if message.get("content") is None or foreign:
            message = {
                k: v
                for k, v in message.items()
                if not (k == "content" and v is None)
                and (openrouter or k not in OPENROUTER_ONLY_MESSAGE_FIELDS)
            }
        sent.append(message)
    return sent


def refuses_response_format(reply: HttpReply) -> bool:
    """True when an error reply blames the request's `response_format`."""
    text = reply.text.lower()
    return reply.status >= 400 and any(word in text for word in _FORMAT_WORDS)


def refuses_tools(reply: HttpReply) -> bool:
    """True when an error reply refuses the request's `tools`: a 400 or 422 that names them
    (`_TOOL_WORDS`). A 5xx never is, whatever it says: one that mentions `tool_choice` is
    retried, and llama-server's naming `--jinja` fails the call (`_status_error`); neither
    describes the tools in the prompt for the rest of the run."""
    text = reply.text.lower()
    return reply.status in REFUSAL_STATUSES and any(word in text for word in _TOOL_WORDS)


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
        headers: Mapping[str, str] | None = None,
        prompt_cache: bool = True,
    ) -> None:
        self._is_openrouter = is_openrouter
        self._prompt_cache = prompt_cache
        """Mark `cache_control` breakpoints for models that need them (`prompt_cache.py`)."""
        self.server: ServerKind | None = None
        """The kind of server, from its model list (`server_reasoning.server_of`)."""
        self._base_path = urlsplit(base_url).path.rstrip("/")
        self._http = JsonPoster(
            base_url=base_url,
            api_key=api_key,
            timeout_s=timeout_s,
            connections=connections,
            headers=headers if is_openrouter else None,
        )
        self._format_level = 0
        """Index into `RESPONSE_FORMATS`: how this endpoint takes a schema, learnt by refusals."""
        self._redact = Redactor([api_key])
        """Error texts come from the server; a proxy may echo the key in them."""
        self.has_key = bool(api_key)
        """Whether calls carry a key (`aib estimate` lists OpenRouter's models without one)."""
        self._shown = without_url_credentials(base_url)
        self._tools = ToolSupport()
        """Per model: whether the server refused `tools` (they go in the prompt from then on)."""
        self.notices: list[str] = []
        """One line per adaptation the user should know of (said once per endpoint and model)."""

    @property
    def response_format(self) -> str:
        """How judge schemas are currently sent to this endpoint (see `RESPONSE_FORMATS`)."""
        return RESPONSE_FORMATS[self._format_level]

    async def aclose(self) -> None:
        await self._http.aclose()

    async def list_models(self) -> list[dict[str, Any]]:
        """The entries of the endpoint's `GET /models` (raw JSON, so OpenRouter's `pricing`
        survives), every page of it; raises `ClientError` (status None: no answer) or
        `NotJsonReply`.

        OpenRouter's list is paged: each page's `links.next` names the next (models API
        reference, `ModelsListResponseLinks`). It is followed while it stays under this
        endpoint's base path, at most `MAX_LIST_PAGES` times."""
        entries: list[dict[str, Any]] = []
        path: str | None = "/models"
        for _ in range(MAX_LIST_PAGES):
            if path is None:
                break
            data = await self._get_json(path)
            page = data.get("data") if isinstance(data, dict) else None
            entries += [e for e in page if isinstance(e, dict)] if isinstance(page, list) else []
            links = data.get("links") if isinstance(data, dict) else None
            path = self._next_page(links.get("next") if isinstance(links, dict) else None)
        self.server = server_of(entries)
        return entries

    def _next_page(self, link: Any) -> str | None:
        """The path under the base URL a `links.next` names, or None (none, or elsewhere)."""
        if not isinstance(link, str) or not link.strip():
            return None
        parts = urlsplit(link.strip())
        if parts.scheme or parts.netloc or not parts.path.startswith(self._base_path + "/"):
            return None
        if ".." in parts.path.split("/"):
            return None
        rest = parts.path[len(self._base_path) :]
        return rest + (f"?{parts.query}" if parts.query else "")

    async def credit_left(self) -> float | None:
        """OpenRouter's `GET /key` `data.limit_remaining` in USD: the credit the key may still
        spend (limits page, "Rate Limits and Credits Remaining"); None when unlimited (the
        documented null) or not a finite number. Raises `ClientError` when it cannot be read."""
        data = await self._get_json("/key")
        info = data.get("data") if isinstance(data, dict) else None
        left = info.get("limit_remaining") if isinstance(info, dict) else None
        if isinstance(left, bool) or not isinstance(left, int | float):
            return None
        return float(left) if math.isfinite(left) else None

    async def model_endpoints(self, model_id: str) -> list[dict[str, Any]]:
        """OpenRouter's `GET /models/{author}/{slug}/endpoints`: the providers serving a model,
        each with its own `pricing`; [] when the endpoint has no such list."""
        if not self._is_openrouter or model_id.count("/") != 1:
            return []
        model = quote(model_id.split(":", 1)[0], safe="/")
        try:
            data = await self._get_json(f"/models/{model}/endpoints")
        except ClientError:
            return []
        listed = data.get("data") if isinstance(data, dict) else None
        found = listed.get("endpoints") if isinstance(listed, dict) else None
        return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []

    async def _get_json(self, path: str) -> Any:
        """`GET path` as JSON. A non-JSON body that is not a web page (a proxy's plain-text
        hiccup) is asked for again, as a chat call would be, so it does not end a run before
        it starts."""
        for attempt in range(1, LIST_ATTEMPTS + 1):
            try:
                reply = await self._http.get(path, connect_timeout_s=MODELS_CONNECT_TIMEOUT_S)
            except HttpFailure as exc:
                text = "no answer" if exc.retryable else str(exc)  # e.g. a body over its cap
                raise ClientError(text, retryable=exc.retryable) from None
            if reply.status >= 400:
                error = NotJsonReply if "html" in reply.content_type.lower() else ClientError
                raise error(
                    self._redact(_reply_error_text(reply)), retryable=False, status=reply.status
                )
            try:
                return reply.json()
            except ValueError:
                _refuse_web_page(reply)
                if attempt == LIST_ATTEMPTS:
                    raise ClientError(
                        f"HTTP {reply.status} with a non-JSON body after "
                        f"{count_of(attempt, 'attempt')}",
                        retryable=True,
                        status=reply.status,
                    ) from None
            await asyncio.sleep(LIST_RETRY_DELAY_S * attempt)
        raise AssertionError("unreachable")

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        messages = request.messages
        in_prompt = self._tools.in_prompt(request.model)
        if request.tools and in_prompt:
            messages = tools_in_text(messages, request.tools)
        sent = wire_messages(messages, openrouter=self._is_openrouter)
        if self._is_openrouter and self._prompt_cache and cache_kind(request.model) == "explicit":
            sent = with_breakpoints(sent, last=request.cache_last)
        body: dict[str, Any] = {"model": request.model, "messages": sent}
        if request.tools and not in_prompt:
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
        if self._is_openrouter:
            extra = self._openrouter_fields(request, tools=bool(request.tools) and not in_prompt)
        else:
            # Refused before the run when None (`server_reasoning.refusal`); nothing sent here.
            extra = reasoning_fields(self.server, request.reasoning_effort) or {}
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

    def _openrouter_fields(self, request: CompletionRequest, *, tools: bool) -> dict[str, Any]:
        """OpenRouter's own body fields: `transforms: []`, `reasoning`, and `provider` — with
        `require_parameters` whenever a judge schema goes as `response_format` or `tools` go
        natively, so no provider that would ignore them is chosen (provider-routing page,
        "Requiring Providers to Support All Parameters")."""
        # message-transforms page: middle-out compression is on by default for endpoints with
        # 8k context or less; `transforms: []` turns it off, so no conversation is shortened
        # unseen (a prompt too long then fails with the context-length error).
        fields: dict[str, Any] = {"transforms": []}
        reasoning = reasoning_field(request.reasoning_effort)
        if reasoning is not None:
            fields["reasoning"] = reasoning
        schema_sent = request.response_schema is not None and self.response_format != "prompt"
        provider = provider_field(
            request.provider_order,
            request.provider_routing,
            require_parameters=schema_sent or tools,
        )
        if provider is not None:
            fields["provider"] = provider
        return fields

    async def complete(self, request: CompletionRequest) -> Completion:
        first = bool(request.tools) and await self._tools.first_call(request.model)
        try:
            return await self._complete(request)
        finally:
            if first:
                self._tools.settle(request.model)

    async def _complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        level = self._format_level
        native_tools = bool(request.tools) and not self._tools.in_prompt(request.model)
        try:
            reply = await self._http.post("/chat/completions", self._body(request))
        except HttpFailure as exc:
            if exc.timed_out:
                raise ClientError("request timed out", retryable=True) from exc
            text = f"connection failed: {exc}" if exc.retryable else str(exc)
            raise ClientError(self._redact(text), retryable=exc.retryable) from exc
        if reply.status >= 400:
            if (
                request.response_schema is not None
                and level < len(RESPONSE_FORMATS) - 1
                and refuses_response_format(reply)
            ):
                # llama-cpp-python answers json_schema with HTTP 500, older vLLM with 400;
                # step down once for the endpoint (concurrent refusals do not step twice).
                self._format_level = max(self._format_level, level + 1)
                return await self._complete(request)
            if native_tools and refuses_tools(reply):
                self._adopt_text_tools(request.model, reply)
                return await self._complete(request)
            raise self._status_error(reply, request.model, tools=native_tools)
        try:
            response = reply.json()
        except ValueError:
            _refuse_web_page(reply)
            # Any other non-JSON body (a proxy's plain-text hiccup) is transient.
            raise ClientError(
                f"malformed response: HTTP {reply.status} body is not JSON", retryable=True
            ) from None
        latency = time.perf_counter() - started
        failure = inband_error(response, _seconds(reply.retry_after))
        if failure is not None:
            raise ClientError(
                self._redact(str(failure)),
                retryable=failure.retryable,
                status=failure.status,
                retry_after=failure.retry_after,
            )
        completion = completion_of(response, latency)
        if request.tools and not native_tools:
            # Recorded with the turn (its note), since the stored request shows the tools as
            # they were asked for, not as this endpoint got them.
            extra = {**completion.extra, TOOLS_IN_PROMPT: instructions_digest()}
            completion = replace(completion, extra=extra)
        return completion

    def _status_error(self, reply: HttpReply, model: str, *, tools: bool) -> ClientError:
        """The `ClientError` of an HTTP error status: retryable by status; a 402 with
        `Retry-After` waits (limits page: an in-flight budget that frees up); a 429 whose
        `X-RateLimit-*` headers say the limit resets far off stops the model; OpenRouter's
        404 "No endpoints found" for a request with `tools` and `require_parameters`, and a
        prompt over the context length, get a line that says what to change, and so does
        llama-server's 500 for `tools` without `--jinja`, which is not retried."""
        text = self._redact(_reply_error_text(reply))
        retry_after = _seconds(reply.retry_after)
        lowered = text.lower()
        if tools and reply.status >= 500 and MISSING_JINJA in lowered:
            return ClientError(f"{NEEDS_JINJA} ({text})", retryable=False, status=reply.status)
        if self._is_openrouter and tools and reply.status == 404 and "no endpoints" in lowered:
            return ClientError(
                f"{NO_TOOL_PROVIDER} {model} ({text}); its tool_role conversations need one: "
                "run with --modes user_role, or pick a model whose providers take tools",
                retryable=False,
                status=404,
            )
        if reply.status in (400, 413) and any(w in lowered for w in _CONTEXT_WORDS):
            return ClientError(
                f"{CONTEXT_OVERFLOW} of {model} ({text}); nothing was shortened (transforms: "
                "[]): use a model with a longer context or a smaller max_tokens",
                retryable=False,
                status=reply.status,
            )
        if reply.status == 429 and (capped := rate_limit_error(text, reply.rate_limits, model)):
            return capped
        return ClientError(
            text,
            retryable=reply.status in RETRYABLE_STATUS
            or (reply.status == 402 and retry_after is not None),
            status=reply.status,
            retry_after=retry_after,
        )

    def _adopt_text_tools(self, model: str, reply: HttpReply) -> None:
        """Send `model`'s tools in the prompt from now on, and say so once with the fix."""
        if not self._tools.refused(model):
            return  # a concurrent refusal already switched (and said so)
        self.notices.append(
            f"{self._shown} refused tool calls for {model} "
            f"({self._redact(_reply_error_text(reply))[:240]}); its tool_role conversations "
            "describe the tool in the prompt and read the call from the reply text, counted as "
            f"protocol deviations; {TOOLS_FLAGS_HINT}"
        )


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
            metadata = inner.get("metadata")
            provider = metadata.get("provider_name") if isinstance(metadata, dict) else None
            if isinstance(message, str) and message and isinstance(provider, str) and provider:
                message = f"{message} (provider {provider})"
        elif isinstance(inner, str):  # LM Studio: `{"error": "<text>"}`
            message = inner
    if not isinstance(message, str) or not message:
        message = reply.text.strip()[:300] or "(empty body)"
    return f"HTTP {reply.status}: {cut_error_text(message)}"
