"""Endpoints: which client serves a model, how many calls it may have in flight, and retrying.

A `ClientPool` turns a `ModelSpec` into an `Endpoint` — one client and one adaptive concurrency
limiter (`ratelimit.py`) per base URL and key, shared by every model on it; a model with several
`base_urls` gets an `EndpointGroup` (`endpoint_group.py`) over theirs. Every limiter starts and
stays within the open-file budget (`open_files.connection_budget`), which the pool's clients
also share as one `http.ConnectionBudget`; with no `concurrency` (no `--concurrency`) limits
start high and adapt. `call_with_retry` sends one request through an endpoint's limiter with
bounded, jittered exponential backoff that honours `Retry-After`, and tells the limiter about
every 429 and 503 so it can back off.
API keys are read from the environment mapping handed in, never from module state.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from independence_bench.clients.config import ModelSpec, check_base_url
from independence_bench.clients.endpoint_group import EndpointGroup
from independence_bench.clients.http import ConnectionBudget
from independence_bench.clients.open_files import connection_budget
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.openrouter import (
    KEY_ALIAS_ENV,
    KEY_ENV,
    attribution_headers,
    free_requests_per_minute,
    is_openrouter_endpoint,
    openrouter_key,
    openrouter_url,
)
from independence_bench.clients.protocol import (
    ClientError,
    Completion,
    CompletionRequest,
    ModelClient,
)
from independence_bench.clients.ratelimit import (
    THROTTLE_STATUSES,
    AdaptiveLimiter,
    RatePacer,
    limiter_for,
)
from independence_bench.clients.redact import without_url_credentials
from independence_bench.clients.send_guard import check_before_send
from independence_bench.errors import UserError
from independence_bench.text.counts import count_of

OPENROUTER_KEY_ENV = KEY_ENV
GENERIC_KEY_ENV = "AIB_API_KEY"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed call is tried again."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
        backoff: float = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        jittered: float = backoff * (0.5 + rng.random() / 2)
        if retry_after is not None:
            return min(self.max_delay_s, max(retry_after, jittered))
        return jittered


@dataclass
class Endpoint:
    """One client and the limiter that bounds its calls in flight."""

    name: str
    client: ModelClient
    limiter: AdaptiveLimiter
    calls: int = 0
    failures: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    pacers: dict[str, RatePacer] = field(default_factory=dict)
    """Per model id, the pace its calls start at (OpenRouter's `:free` models)."""

    async def send(self, request: CompletionRequest) -> Completion:
        """One counted call through the limiter; a 429 or 503 shrinks the limit, a reply grows
        it."""
        pacer = self.pacers.get(request.model)
        if pacer is not None:
            await pacer.wait()
        async with self.limiter as permit:
            check_before_send()  # the run may have stopped, or lost the claim, while it waited
            self.calls += 1
            try:
                completion = await self.client.complete(request)
            except ClientError as exc:
                self.failures += 1
                if exc.status in THROTTLE_STATUSES:
                    permit.throttled()
                raise
            permit.succeeded()
            return completion


ClientFactory = Callable[[ModelSpec], tuple[str, ModelClient, int] | None]
"""Builds (endpoint name, client, concurrency) for specs it handles, or None to decline."""


class ClientPool:
    """Endpoints for model specs, created on first use and shared by all specs on them.

    `concurrency` caps each endpoint's calls in flight (None: adaptive, from
    `ratelimit.ADAPTIVE_START`); `connections` bounds the connections of all endpoints together
    (default: the open-file budget of the process now, `open_files.connection_budget`)."""

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        concurrency: int | None = None,
        factories: tuple[ClientFactory, ...] = (),
        timeout_s: float = 300.0,
        connections: int | None = None,
        missing_key_hint: Callable[[ModelSpec], str] | None = None,
        prompt_cache: bool = True,
        keyless: bool = False,
    ) -> None:
        """`missing_key_hint` ends the error for a missing OpenRouter key, per model: what else
        the command can be given (the pool does not know the command's options); `prompt_cache`
        False sends no `cache_control` breakpoints (`--no-prompt-cache`). `keyless` lets
        OpenRouter's endpoint go without a key, for its public model list only (`aib
        estimate`; OpenRouter's Models API page: the catalog with pricing)."""
        self._env = env
        self._prompt_cache = prompt_cache
        self._missing_key_hint = missing_key_hint
        self._keyless = keyless
        self._concurrency = concurrency
        self.connections = ConnectionBudget(connections or connection_budget())
        self._factories = factories
        self._timeout_s = timeout_s
        self._endpoints: dict[str, Endpoint] = {}
        self._of_spec: dict[int, tuple[ModelSpec, Endpoint]] = {}
        """Per spec object (specs are frozen), its endpoint: the engine asks once per call, and
        checking the URL and reading the key each time cost more than the call's store write."""

    def endpoint_for(self, spec: ModelSpec) -> Endpoint:
        known = self._of_spec.get(id(spec))
        if known is not None and known[0] is spec:
            return known[1]
        endpoint = self._resolve(spec)
        self._of_spec[id(spec)] = (spec, endpoint)
        return endpoint

    def _resolve(self, spec: ModelSpec) -> Endpoint:
        for factory in self._factories:
            made = factory(spec)
            if made is not None:
                name, client, limit = made
                if name not in self._endpoints:
                    self._endpoints[name] = Endpoint(name, client, AdaptiveLimiter(limit))
                return self._endpoints[name]
        if len(spec.base_urls) > 1:
            return self._group_for(spec)
        # Checked here too: a spec copied with a new URL (`--base-url` over a config) skips
        # pydantic's validation, and this is where every connection starts.
        base_url = check_base_url((spec.base_url or openrouter_url(self._env)).rstrip("/"))
        key = self._api_key(spec)
        name = f"{base_url}#{spec.api_key_env or ''}"
        on_openrouter = self.is_openrouter(spec)
        if name not in self._endpoints:
            client = OpenAICompatibleClient(
                base_url=base_url,
                api_key=key,
                is_openrouter=on_openrouter,
                timeout_s=self._timeout_s,
                connections=self.connections,
                headers=attribution_headers(self._env),
                prompt_cache=self._prompt_cache,
            )
            shown = without_url_credentials(base_url)
            limiter = limiter_for(self._concurrency, self.connections.limit)
            self._endpoints[name] = Endpoint(shown, client, limiter)
        endpoint = self._endpoints[name]
        rate = free_requests_per_minute(spec.id, self._env) if on_openrouter else None
        if rate is not None and spec.id not in endpoint.pacers:
            endpoint.pacers[spec.id] = RatePacer(rate)
        return endpoint

    def is_openrouter(self, spec: ModelSpec) -> bool:
        """Whether `spec`'s endpoint is OpenRouter (`openrouter.is_openrouter_endpoint`)."""
        return not spec.base_urls[1:] and is_openrouter_endpoint(spec.base_url, self._env)

    def _group_for(self, spec: ModelSpec) -> Endpoint:
        """One endpoint spreading calls over the endpoints of `spec.base_urls`."""
        name = " | ".join(spec.base_urls) + f"#{spec.api_key_env or ''}"
        if name not in self._endpoints:
            members = [
                self.endpoint_for(spec.model_copy(update={"base_url": url, "base_urls": ()}))
                for url in spec.base_urls
            ]
            group = EndpointGroup(members)
            capacity = min(group.capacity, self.connections.limit or group.capacity)
            self._endpoints[name] = Endpoint(group.name, group, AdaptiveLimiter(capacity))
        return self._endpoints[name]

    def _api_key(self, spec: ModelSpec) -> str | None:
        if spec.api_key_env:
            key = self._env.get(spec.api_key_env)
            if not key:
                raise UserError(
                    f"model {spec.id} needs the API key in ${spec.api_key_env}, which is not set; "
                    "export it or put it in .env"
                )
            return key
        if self.is_openrouter(spec):
            key = openrouter_key(self._env)
            if not key and not self._keyless:
                hint = self._missing_key_hint(spec) if self._missing_key_hint else ""
                raise UserError(
                    f"{spec.id} is reached through OpenRouter, but ${OPENROUTER_KEY_ENV} (or "
                    f"${KEY_ALIAS_ENV}) is not set; export your OpenRouter key or put it in "
                    f".env{hint}"
                )
            return key
        if spec.base_url and without_url_credentials(spec.base_url) != spec.base_url:
            return None  # the URL's own credentials, not the ambient generic key
        return self._env.get(GENERIC_KEY_ENV)

    def endpoints(self) -> list[Endpoint]:
        return list(self._endpoints.values())

    async def aclose(self) -> None:
        for endpoint in self._endpoints.values():
            await endpoint.client.aclose()
        self._endpoints.clear()
        self._of_spec.clear()


def reseeded(request: CompletionRequest, rejected: int) -> CompletionRequest:
    """The request to send after `rejected` replies were turned down as empty or damaged.

    A seeded model answers the same request with the same reply, so asking again with the
    same seed would bring the same empty reply back: each rejected reply moves the seed on by
    one (seed + rejected). A failed call (an error, no reply) is retried unchanged, so the seed
    sent depends only on what the model answered, and the same run sends the same seeds.
    """
    if request.seed is None or rejected == 0:
        return request
    return replace(request, seed=request.seed + rejected)


async def call_with_retry(
    endpoint: Endpoint,
    request: CompletionRequest,
    policy: RetryPolicy,
    *,
    accept: Callable[[Completion], bool] = lambda _: True,
    salvage: Callable[[Completion], bool] = lambda _: False,
) -> tuple[CompletionRequest, Completion]:
    """Send `request`, retrying retryable failures and unacceptable (e.g. empty) replies.

    A reply `accept` rejects but `salvage` still finds usable (e.g. a tool call whose JSON was
    cut off but whose text can be recovered) is kept and returned only if no attempt succeeds.
    Returns the reply with the request that produced it: after a rejected reply a seeded
    request is sent with the next seed (`reseeded`). Raises the last `ClientError` when every
    attempt failed.
    """
    last_error: ClientError | None = None
    kept: tuple[CompletionRequest, Completion] | None = None
    rejected = 0
    for attempt in range(1, policy.max_attempts + 1):
        sent = reseeded(request, rejected)
        try:
            completion = await endpoint.send(sent)
        except ClientError as exc:
            if not exc.retryable:
                raise
            last_error = exc
        else:
            if accept(completion):
                return sent, completion
            rejected += 1
            if salvage(completion):
                kept = (sent, completion)
                last_error = ClientError("the reply was damaged", retryable=True)
            else:
                last_error = ClientError("the model returned an empty reply", retryable=True)
        if attempt < policy.max_attempts:
            check_before_send()  # a stopping run does not wait out a backoff to give up
            retry_after = last_error.retry_after if last_error else None
            await asyncio.sleep(policy.delay(attempt, retry_after, endpoint.rng))
    if kept is not None:
        return kept
    assert last_error is not None
    raise ClientError(
        f"gave up after {count_of(policy.max_attempts, 'attempt')}: {last_error}",
        retryable=False,
        status=last_error.status,
    )
