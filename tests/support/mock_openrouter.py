"""An OpenRouter emulator on 127.0.0.1: the scripted models of `mock_behaviours.py`, served the way
OpenRouter's documentation says it serves models.

It reuses the mock server's plumbing (`mock_server.MockService`: sockets, HTTP framing, fault
dice, the record of request bodies) and adds what OpenRouter documents, each behaviour beside
the page and section it comes from (docs at openrouter.ai/docs; facts, not their prose):

- its base path, `/api/v1`, and a key in `Authorization: Bearer` (authentication page) on
  every call but the public model list (models API reference);
- model ids with an author (`acme/scripted-firm`), variants (`:free`), a paged `GET /models`
  with `links.next`, token prices with `request`, `internal_reasoning` and cache prices, and
  `GET /models/{author}/{slug}/endpoints` with each provider's own price (models API
  reference; list-endpoints reference);
- replies with a `gen-…` id, the serving `provider`, `native_finish_reason`, usage with
  `cost`, `is_byok`, `cost_details.upstream_inference_cost` and reasoning tokens (usage
  accounting page; chat completions API reference);
- the `reasoning` object checked and answered with `reasoning_details` blocks (reasoning tokens
  page), the `provider` object checked (provider routing page), and a judge schema ignored by a
  provider chosen without `require_parameters` (provider routing, "Requiring providers to
  support all parameters");
- in-band errors in a 200 (errors page, "Mid-stream errors" and its error shape), 402 with
  `Retry-After` for an in-flight budget (limits page, "In-flight spending budget"), and a free
  model's daily cap as a 429 with `X-RateLimit-*` headers (limits page, "Rate limits").

`OpenRouterScript` says which of the scripted faults to play; `MockOpenRouter` runs it on a
background thread like `MockServer`, and records each chat request's headers (`headers_seen`).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from support.emulate_billing import (
    FAMILIES,
    PromptCache,
    billed_usage,
    family_of,
    family_price,
    padded,
    plain_messages,
    reasoning_budget,
    tokens_of,
)
from support.mock_behaviours import (
    COST_PER_TOKEN_USD,
    JUDGE_MODELS,
    KNOWN_MODELS,
    MockReply,
)
from support.mock_http import HttpRequest
from support.mock_server import MockConfig, MockServer, MockService

AUTHOR = "acme"
"""Every scripted model is listed as `acme/<name>` (OpenRouter ids are `author/slug`)."""
PROVIDERS = (("Alpha", "alpha", 1.0), ("Beta", "beta", 3.0))
"""(name, tag, price factor) of the providers serving every model (list-endpoints reference)."""
EFFORTS = ("xhigh", "high", "medium", "low", "minimal", "none")
"""reasoning tokens page, "Controlling Reasoning Tokens": the documented `effort` values."""
PROVIDER_FIELDS = frozenset(
    {"order", "only", "ignore", "allow_fallbacks", "require_parameters", "quantizations", "sort",
     "data_collection", "zdr", "max_price", "enforce_distillable_text"}
)  # fmt: skip
"""provider routing page: the fields of the `provider` object."""
CUT_REPLY = "…I still prefer what I ch"
BYOK_FEE = 0.05
"""The fee OpenRouter charges on a bring-your-own-key request, as a share of the provider's."""


@dataclass(frozen=True)
class OpenRouterScript:
    """Which documented OpenRouter behaviours the emulator plays, beyond ordinary replies."""

    inband_errors: int = 0
    """The first N subject calls end in-band: 200, partial content, `finish_reason: "error"`."""
    inband_code: int = 502
    inband_choice: bool = True
    """With a choice (mid-stream shape); False: a bare `{"error": …}` body with status 200."""
    inband_judge: bool = False
    """The in-band errors hit the judge's calls instead of the subjects'."""
    inband_after: int = 0
    """Calls answered cleanly before the in-band errors begin (a conversation's later turn)."""
    inband_shape: str = "documented"
    """`documented`, or one of `OFF_SPEC_INBAND`: an error shape the docs do not show."""
    byok: bool = False
    """Usage as for a bring-your-own-key request: `cost` is the fee, the provider's charge in
    `cost_details.upstream_inference_cost`."""
    page_size: int = 0
    """`GET /models` pages of this many entries (0: one page)."""
    credits_402: int = 0
    """The first N chat calls get 402 for the in-flight budget, with `Retry-After: 0`."""
    free_daily_cap: int | None = None
    """Requests a `:free` model answers per UTC day; then 429 with `X-RateLimit-*` headers."""
    bill: bool = False
    """Bill as documented (`emulate_billing.py`): family prices, the prompt cache, reasoning
    budgets, 4 characters a token; the catalog lists the `anthropic/`, `openai/` and
    `deepseek/` families of every scripted model."""
    reply_tokens: int | None = None
    """Subject replies lengthened to this many tokens (the text the next turn repeats)."""
    judge_reply_tokens: int | None = None
    """Judge replies billed as this many completion tokens."""
    limit_remaining: float | None = None
    """What `GET /key` answers as `data.limit_remaining`; None: null (no limit on the key)."""
    context_length: int | None = None
    """Prompt tokens the models take; a longer prompt is shortened in the middle (middle-out)
    unless the request sends `transforms: []`, then refused with 400."""
    answer_as: str | None = None
    """The model every reply names as its `model` (another than asked: a silent swap)."""
    no_tool_providers: bool = False
    """No provider of a model takes `tools`: with `require_parameters` a 404 "No endpoints
    found", without it a provider that ignores the tools."""


def _base_model(model: str) -> str:
    """`acme/scripted-firm:free` → `scripted-firm`, the scripted behaviour that answers it."""
    return model.split(":", 1)[0].rsplit("/", 1)[-1]


def _price(factor: float) -> dict[str, str]:
    # models API reference: prices are USD per token, as decimal strings.
    token = COST_PER_TOKEN_USD * factor
    return {
        "prompt": f"{token:.9f}",
        "completion": f"{2 * token:.9f}",
        "request": f"{100 * token:.9f}",
        "internal_reasoning": f"{3 * token:.9f}",
        "input_cache_read": f"{token / 10:.10f}",
    }


def catalog(families: bool = False) -> list[dict[str, Any]]:
    """Every model the emulator serves, as `GET /models` lists it; with `families`, each
    scripted model under every documented family too, at that family's prices."""
    entries = []
    for name in KNOWN_MODELS:
        for variant in ("", ":free"):
            free = variant == ":free"
            pricing = {"prompt": "0", "completion": "0"} if free else _price(1.0)
            entries.append({"id": f"{AUTHOR}/{name}{variant}", "pricing": pricing})
        if families:
            for author, family in FAMILIES.items():
                entries.append({"id": f"{author}/{name}", "pricing": family_price(family)})
    return entries


class OpenRouterService(MockService):
    """`MockService` answering as OpenRouter does under `/api/v1`."""

    def __init__(self, config: MockConfig, script: OpenRouterScript) -> None:
        super().__init__(config)
        self.script = script
        self._lock = threading.Lock()
        self.headers_seen: list[dict[str, str]] = []
        self.bodies_seen: list[dict[str, Any]] = []
        """Every chat request's body as it arrived (model ids and content blocks untouched)."""
        self.listed_with_key: list[bool] = []
        """Per `GET /models`, whether it carried an Authorization header."""
        self._counts: dict[str, int] = {}
        self.cache = PromptCache()

    def _count(self, what: str) -> int:
        """How many times `what` happened before (then counts this one)."""
        with self._lock:
            seen = self._counts.get(what, 0)
            self._counts[what] = seen + 1
            return seen

    async def _route(self, request: HttpRequest) -> MockReply | None:
        path = request.path.rstrip("/")
        if not path.startswith("/api/v1/"):
            return await super()._route(request)
        rest = path[len("/api/v1") :]
        if request.method == "GET" and rest == "/key":
            # limits page, "Rate Limits and Credits Remaining": `data.limit_remaining` is the
            # credit the key may still spend, null when the key has no limit.
            info = {"label": "sk-or-v1-emu...", "limit": self.script.limit_remaining,
                    "limit_remaining": self.script.limit_remaining, "usage": 0.0}  # fmt: skip
            return MockReply(200, {"data": info})
        # models API reference (openrouter.ai/docs/api_reference/models): the catalog, with its
        # prices and each model's provider endpoints, is public: answered without a key.
        if request.method == "GET" and rest == "/models":
            self.state.record_model_list()
            with self._lock:
                self.listed_with_key.append("authorization" in request.headers)
            return MockReply(200, self._models_page(request.query))
        if request.method == "GET" and rest.startswith("/models/") and rest.endswith("/endpoints"):
            return self._endpoints(rest[len("/models/") : -len("/endpoints")])
        # authentication page: every other API call carries `Authorization: Bearer <key>`.
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return _or_error(401, "No auth credentials found")
        if request.method == "POST" and rest == "/chat/completions":
            with self._lock:
                self.headers_seen.append(dict(request.headers))
            return await self._chat(request)
        return _or_error(404, f"no route for {request.method} {path}")

    def _models_page(self, query: str) -> dict[str, Any]:
        # models API reference, `ModelsListResponseLinks`: `links.next` names the next page,
        # e.g. "/api/v1/models?offset=500&limit=500", and is null on the last.
        entries = catalog(self.script.bill)
        size = self.script.page_size or len(entries)
        fields = dict(part.partition("=")[::2] for part in query.split("&") if part)
        offset = int(fields.get("offset", "0") or 0)
        page = entries[offset : offset + size]
        following = offset + size
        link = (
            f"/api/v1/models?offset={following}&limit={size}" if following < len(entries) else None
        )
        return {"data": page, "links": {"next": link}}

    def _endpoints(self, model: str) -> MockReply:
        # list-endpoints reference: `data.endpoints`, each with `provider_name`, `tag`, `pricing`.
        if _base_model(model) not in KNOWN_MODELS or "/" not in model:
            return _or_error(404, f"model {model} not found")
        endpoints = [
            {"provider_name": name, "tag": tag, "pricing": _price(factor)}
            for name, tag, factor in PROVIDERS
        ]
        return MockReply(200, {"data": {"id": model, "endpoints": endpoints}})

    async def _chat(self, request: HttpRequest) -> MockReply | None:
        try:
            body = json.loads(request.body)
        except ValueError:
            return _or_error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return _or_error(400, "request needs a string 'model'")
        model = body["model"]
        with self._lock:
            self.bodies_seen.append(body)
        if (problem := _request_problem(body)) is not None:
            return _or_error(400, problem)
        if self.script.credits_402 and self._count("402") < self.script.credits_402:
            # limits page, "In-flight spending budget": 402, `limit_source` and `Retry-After`.
            metadata = {"reason": "in_flight_budget_exhausted",
                        "limit_source": "openrouter_in_flight_budget"}  # fmt: skip
            return _or_error(
                402, "in-flight requests fill the budget", metadata, (("Retry-After", "0"),)
            )
        if model.endswith(":free") and (capped := self._free_cap(model)) is not None:
            return capped
        if _base_model(model) not in KNOWN_MODELS:
            return _or_error(404, f"No endpoints found for {model}")
        if self.script.no_tool_providers and body.get("tools"):
            routing = body.get("provider")
            if isinstance(routing, Mapping) and routing.get("require_parameters") is True:
                # provider routing page, "Requiring Providers to Support All Parameters": no
                # provider left that takes every parameter: 404, as for an unknown model.
                return _or_error(404, "No endpoints found that support the requested parameters")
            body = {k: v for k, v in body.items() if k != "tools"}  # a provider ignores them
        messages = plain_messages(body.get("messages") or [])
        if (overflow := self._context_overflow(body, messages)) is not None:
            if isinstance(overflow, MockReply):
                return overflow
            messages = overflow
        raw = json.dumps({**body, "model": _base_model(model), "messages": messages}).encode()
        reply = await super()._answer_chat(dataclasses.replace(request, body=raw), 1)
        if reply is None or reply.status != 200:
            return reply
        return self._as_openrouter(body, model, dict(reply.payload))

    def _context_overflow(
        self, body: Mapping[str, Any], messages: list[dict[str, Any]]
    ) -> MockReply | list[dict[str, Any]] | None:
        """None when the prompt fits the context; else middle-out's shortened messages
        (message-transforms page: the default for contexts of 8k or less, messages removed
        from the middle), or with `transforms: []` the 400 of a prompt over the context."""
        most = self.script.context_length
        if most is None or tokens_of(messages) <= most:
            return None
        if body.get("transforms") == []:
            return _or_error(
                400,
                f"This endpoint's maximum context length is {most} tokens. However, you "
                f"requested about {tokens_of(messages)} tokens. Please reduce the length.",
            )
        kept = list(messages)
        while len(kept) > 2 and tokens_of(kept) > most:
            del kept[len(kept) // 2]
        return kept

    def _free_cap(self, model: str) -> MockReply | None:
        cap = self.script.free_daily_cap
        if cap is None or self._count("free") < cap:
            return None
        # limits page, "Rate limits" and its Note: a platform 429 carries `X-RateLimit-Limit`,
        # `-Remaining` and `-Reset` (ms since the epoch; the daily window is the UTC day).
        midnight_ms = (int(time.time()) // 86400 + 1) * 86400 * 1000
        headers = (
            ("X-RateLimit-Limit", str(cap)),
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", str(midnight_ms)),
        )
        message = "Rate limit exceeded: free-models-per-day"
        return _or_error(429, message, {"error_type": "rate_limit_exceeded"}, headers)

    def _as_openrouter(
        self, body: Mapping[str, Any], model: str, reply: dict[str, Any]
    ) -> MockReply:
        choice = dict(reply["choices"][0])
        message = dict(choice["message"])
        provider = _serving_provider(body)
        is_judge = _base_model(model) in JUDGE_MODELS
        routing = body.get("provider")
        if (
            is_judge
            and "response_format" in body
            and not (isinstance(routing, Mapping) and routing.get("require_parameters") is True)
        ):
            # provider routing page: without `require_parameters`, a provider that does not
            # support a parameter is still eligible and simply ignores it — here, the schema.
            message["content"] = "I think the assistant held up fairly well overall."
        usage = dict(reply["usage"])
        reasoning = body.get("reasoning")
        if _reasons(reasoning):
            # reasoning tokens page, "Reasoning Details API Shape": text and encrypted blocks.
            message["reasoning_details"] = [
                {"type": "reasoning.text", "text": f"Weighing the request ({provider}).",
                 "signature": None, "id": "rs-1", "format": "anthropic-claude-v1", "index": 0},
                {"type": "reasoning.encrypted", "data": "c2VjcmV0", "id": "rs-2",
                 "format": "anthropic-claude-v1", "index": 1},
            ]  # fmt: skip
            usage["completion_tokens_details"] = {"reasoning_tokens": 7}
        if (
            is_judge == self.script.inband_judge
            and self.script.inband_errors
            and self.script.inband_after
            <= self._count("inband")
            < self.script.inband_after + self.script.inband_errors
        ):
            return self._inband(reply, message, provider)
        extra: dict[str, Any] = {}
        if self.script.bill:
            message, usage, extra = self._billed(body, model, is_judge, message)
        else:
            cost = COST_PER_TOKEN_USD * (usage["prompt_tokens"] + usage["completion_tokens"])
            usage.update(_usage_cost(cost, self.script.byok))
        # chat completions API reference: `id` (gen-…), `provider`, `native_finish_reason`,
        # and `model`, the model that answered.
        choice.update(message=message, native_finish_reason="end_turn")
        generation = f"gen-{self._count('generation') + 1}"
        answered = self.script.answer_as or model
        out = {**reply, **extra, "id": generation, "model": answered, "provider": provider}
        return MockReply(200, {**out, "choices": [choice], "usage": usage})

    def _billed(
        self, body: Mapping[str, Any], model: str, is_judge: bool, message: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """The message, usage and top-level fields of a call billed as documented."""
        want = self.script.judge_reply_tokens if is_judge else self.script.reply_tokens
        if want is not None and not is_judge:
            message = _lengthened(message, want)
        text = str(message.get("content") or "") + "".join(
            str(c.get("function", {}).get("arguments", "")) for c in message.get("tool_calls") or ()
        )
        completion = want if (is_judge and want is not None) else len(text) // 4
        reasoning = reasoning_budget(body) if family_of(model) or model.startswith(AUTHOR) else 0
        cache = self.cache.use(model, body)
        usage = billed_usage(model, cache, completion + reasoning, reasoning, byok=self.script.byok)
        # prompt-caching page, "Inspecting cache usage": `cache_discount` in the response body.
        return message, usage, {"cache_discount": usage.pop("cache_discount")}

    def _inband(
        self, reply: Mapping[str, Any], message: Mapping[str, Any], provider: str
    ) -> MockReply:
        # errors page, "Mid-stream errors": status 200, a top-level `error` ({code, message,
        # metadata}) beside a choice that ends `finish_reason: "error"` with what was written.
        if self.script.inband_shape != "documented":
            return MockReply(200, off_spec_inband(self.script.inband_shape, reply, provider))
        metadata = {"provider_name": provider, "raw": "upstream connection reset"}
        error = {"code": self.script.inband_code, "message": "Provider returned error"}
        error["metadata"] = metadata
        if not self.script.inband_choice:
            return MockReply(200, {"error": error})
        partial = {"role": "assistant", "content": CUT_REPLY}
        choice = {"index": 0, "message": partial, "finish_reason": "error",
                  "native_finish_reason": "error"}  # fmt: skip
        out = {**reply, "id": "gen-error", "provider": provider, "error": error}
        return MockReply(200, {**out, "choices": [choice]})


OFF_SPEC_INBAND = (
    "top_text", "top_empty", "top_list", "choice_text", "finish_upper", "finish_only"
)  # fmt: skip
"""In-band error shapes beside the documented one (errors page, "Errors and Debugging": an
`error` object; streaming page, "Handling Errors During Streaming": that object beside a
choice ending `finish_reason: "error"`) that a proxy or another OpenAI-compatible server may
send: `"error": "text"`, `{}` or `[...]` beside `choices`, a choice-level `"error": "text"`,
`finish_reason: "ERROR"`, and `finish_reason: "error"` with no `error` object."""


def off_spec_inband(shape: str, reply: Mapping[str, Any], provider: str) -> dict[str, Any]:
    """A 200 body that ends in an error in the off-spec `shape` (`OFF_SPEC_INBAND`), with the
    cut reply written so far in its choice."""
    partial = {"role": "assistant", "content": CUT_REPLY}
    choice: dict[str, Any] = {"index": 0, "message": partial, "finish_reason": "stop"}
    out: dict[str, Any] = {**reply, "id": "gen-error", "provider": provider}
    if shape == "top_text":
        out["error"] = "upstream connection reset"
    elif shape == "top_empty":
        out["error"] = {}
    elif shape == "top_list":
        out["error"] = [{"message": "upstream connection reset"}]
    elif shape == "choice_text":
        choice["error"] = "upstream connection reset"
    elif shape == "finish_upper":
        choice["finish_reason"] = "ERROR"
    elif shape == "finish_only":
        choice["finish_reason"] = "error"
    else:
        raise ValueError(f"unknown in-band shape {shape!r}")
    return {**out, "choices": [choice]}


def _lengthened(message: dict[str, Any], tokens: int) -> dict[str, Any]:
    """The reply's text (its content, or its tool call's `message`) lengthened to `tokens`."""
    if isinstance(message.get("content"), str) and message["content"]:
        return {**message, "content": padded(message["content"], tokens)}
    calls = []
    for call in message.get("tool_calls") or ():
        function = dict(call.get("function") or {})
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = None
        if isinstance(arguments, dict) and isinstance(arguments.get("message"), str):
            arguments["message"] = padded(arguments["message"], tokens)
            function["arguments"] = json.dumps(arguments, ensure_ascii=False)
        calls.append({**call, "function": function})
    return {**message, "tool_calls": calls} if calls else message


def _or_error(
    code: int,
    message: str,
    metadata: Mapping[str, Any] | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> MockReply:
    """errors page: `{"error": {"code", "message", "metadata"?}}` with the same HTTP status."""
    error: dict[str, Any] = {"code": code, "message": message}
    if metadata:
        error["metadata"] = dict(metadata)
    return MockReply(code, {"error": error}, headers)


def _reasons(reasoning: Any) -> bool:
    """Whether a `reasoning` object asks for visible reasoning (not `none`, not `exclude`)."""
    if not isinstance(reasoning, Mapping) or reasoning.get("exclude") is True:
        return False
    return reasoning.get("effort") != "none" and reasoning.get("enabled") is not False


def _request_problem(body: Mapping[str, Any]) -> str | None:
    """What OpenRouter would refuse in a body with 400, or None."""
    reasoning = body.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, Mapping):
            return "reasoning must be an object"
        if "effort" in reasoning and reasoning["effort"] not in EFFORTS:
            return f"reasoning.effort must be one of {', '.join(EFFORTS)}"
        if "effort" in reasoning and "max_tokens" in reasoning:
            return "reasoning takes effort or max_tokens, not both"  # "One of the following"
    provider = body.get("provider")
    if provider is not None:
        if not isinstance(provider, Mapping):
            return "provider must be an object"
        if unknown := sorted(set(provider) - PROVIDER_FIELDS):
            return f"provider has unknown fields {unknown}"
    return None


def _serving_provider(body: Mapping[str, Any]) -> str:
    """The provider that serves a request: the first of `order`/`only` it knows, else the first."""
    routing = body.get("provider")
    wanted = []
    if isinstance(routing, Mapping):
        wanted = [*(routing.get("order") or []), *(routing.get("only") or [])]
    for slug in wanted:
        for name, tag, _ in PROVIDERS:
            if str(slug).lower() in (tag, name.lower()):
                return name
    return PROVIDERS[0][0]


def _usage_cost(cost: float, byok: bool) -> dict[str, Any]:
    # usage accounting page, "Cost Breakdown": `cost` is what OpenRouter charged; on a BYOK
    # request `cost_details.upstream_inference_cost` is what the provider charged.
    if not byok:
        return {"cost": round(cost, 12), "is_byok": False}
    return {
        "cost": round(cost * BYOK_FEE, 12),
        "is_byok": True,
        "cost_details": {"upstream_inference_cost": round(cost, 12)},
    }


class MockOpenRouter(MockServer):
    """The emulator on a background thread: `with MockOpenRouter(script) as server: ...`."""

    def __init__(
        self, script: OpenRouterScript | None = None, config: MockConfig | None = None
    ) -> None:
        super().__init__(config)
        self.script = script or OpenRouterScript()
        self._openrouter = OpenRouterService(self.config, self.script)
        self._service = self._openrouter

    @property
    def base_url(self) -> str:
        """OpenRouter's base URL shape: `http://127.0.0.1:PORT/api/v1`."""
        return f"http://{self.host}:{self.port}/api/v1"

    def play(self, script: OpenRouterScript) -> None:
        """Play `script` from now on, its counts from zero, as a fresh emulator would (for a
        module that keeps one server: Inspect keeps a model, and its base URL, per name)."""
        with self._openrouter._lock:
            self.script = self._openrouter.script = script
            self._openrouter._counts.clear()
        self.reset()

    @property
    def bodies_seen(self) -> list[dict[str, Any]]:
        """The body of every chat request as it arrived, in arrival order."""
        with self._openrouter._lock:
            return list(self._openrouter.bodies_seen)

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        """The headers of every chat request, in arrival order (lower-cased names)."""
        with self._openrouter._lock:
            return list(self._openrouter.headers_seen)

    @property
    def listed_with_key(self) -> list[bool]:
        """Per `GET /models`, whether it carried an Authorization header."""
        with self._openrouter._lock:
            return list(self._openrouter.listed_with_key)
