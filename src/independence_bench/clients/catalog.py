"""What each endpoint serves and at what price, checked before anything is sent or stored.

`survey_endpoints` asks every endpoint of a run for its model list (`GET /models`) before the
store is opened, so that the mistakes a user can fix end as one line and leave no half-written
store: an endpoint that does not answer, answers HTML (a base URL that points at a web page),
rejects the key, or does not list a model the run asks for. The same listings carry prices in
OpenRouter's format (`pricing.prompt` / `pricing.completion`, USD per token, with `request`,
`internal_reasoning` and `input_cache_read`/`input_cache_write` where given), read from every
page of the list; a model pinned to a provider is priced at that provider's own price from
`GET /models/{id}/endpoints`. `resolve_prices` combines them with the prices a `models.yaml`
gives. During a run, `rejection_of` turns an HTTP 401 (key), 402 (credits; one with
`Retry-After` is waited for first) or 404 (model id) or an HTML reply on a chat call into the
same kind of one-line error, because every later call to that model would fail the same way.
A 403 does not stop a run: OpenRouter uses it for one flagged input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from independence_bench.clients.budget import Price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import GENERIC_KEY_ENV, OPENROUTER_KEY_ENV, ClientPool
from independence_bench.clients.openai_compat import NO_TOOL_PROVIDER
from independence_bench.clients.openrouter import KEY_ALIAS_ENV
from independence_bench.clients.protocol import ClientError, NotJsonReply
from independence_bench.clients.server_reasoning import refusal
from independence_bench.errors import UserError


@dataclass(frozen=True)
class Listing:
    """What one endpoint's `GET /models` said: the model ids and any prices it gave."""

    endpoint: str
    ids: frozenset[str]
    prices: Mapping[str, Price]
    pinned_prices: Mapping[str, Price] = field(default_factory=dict)
    """Per model configuration label, the price of the provider it is pinned to."""


def key_env_of(spec: ModelSpec, openrouter: bool) -> str:
    """The environment variable that holds the key for `spec`'s endpoint."""
    if spec.api_key_env:
        return spec.api_key_env
    return f"{OPENROUTER_KEY_ENV} (or {KEY_ALIAS_ENV})" if openrouter else GENERIC_KEY_ENV


def _endpoint_refusal(
    endpoint: str, spec: ModelSpec, error: ClientError, openrouter: bool
) -> UserError | None:
    """The error for an endpoint that refuses every call alike (HTML, a rejected key), else None."""
    if isinstance(error, NotJsonReply):
        return UserError(
            f"{endpoint} answered with a web page instead of JSON ({error}); the base URL should "
            "be the API's (it usually ends in /v1)"
        )
    if error.status == 401:
        return UserError(
            f"{endpoint} rejected the API key ({error}); put a valid key in "
            f"${key_env_of(spec, openrouter)} (environment or .env) and run the same command "
            "again"
        )
    return None


def rejection_of(
    spec: ModelSpec, endpoint: str, error: ClientError, *, openrouter: bool = False
) -> UserError | None:
    """The run-stopping error for a chat call that no retry or other item can fix, else None."""
    refusal = _endpoint_refusal(endpoint, spec, error, openrouter)
    if refusal is not None:
        return refusal
    if error.status == 402:
        return UserError(
            f"{endpoint} refused model {spec.id} for payment ({error}); add credits to the "
            "account and run the same command again (completed calls are kept)"
        )
    if error.status == 404 and str(error).startswith(NO_TOOL_PROVIDER):
        return UserError(f"{endpoint}: {error}")
    if error.status == 404:
        return UserError(
            f"{endpoint} does not serve model {spec.id!r} ({error}); check the model id and "
            "the base URL, then run the same command again"
        )
    return None


def _listed(model_id: str, ids: frozenset[str]) -> bool:
    """Whether an endpoint that lists `ids` serves `model_id`.

    OpenRouter's variant suffixes (`:nitro`, `:floor`, …) are not listed on their own, and
    Ollama serves `name` as `name:latest`.
    """
    base = model_id.split(":", 1)[0]
    return model_id in ids or base in ids or f"{model_id}:latest" in ids


def _usd(pricing: Mapping[str, Any], name: str) -> float | None:
    """One price of a `pricing` object (a decimal string or number); None when absent or not a
    finite non-negative number (OpenRouter marks dynamic-price routers with -1)."""
    value = pricing.get(name)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        usd = float(value)
    except ValueError:
        return None
    return usd if math.isfinite(usd) and usd >= 0 else None


def _price_of(entry: Mapping[str, Any], source: str = "endpoint's model list") -> Price | None:
    pricing = entry.get("pricing")
    if not isinstance(pricing, Mapping):
        return None
    prompt, completion = _usd(pricing, "prompt"), _usd(pricing, "completion")
    if prompt is None or completion is None:
        return None
    if max(prompt, completion) > 1:
        return None  # over $1 a token: not a price to compute costs with
    reasoning = _usd(pricing, "internal_reasoning")
    return Price(
        prompt,
        completion,
        source,
        request=_usd(pricing, "request") or 0.0,
        reasoning=reasoning or None,  # 0: reasoning is priced as output
        cache_read=_usd(pricing, "input_cache_read"),
        cache_write=_usd(pricing, "input_cache_write"),
    )


def _provider_price(slug: str, endpoints: Sequence[Mapping[str, Any]]) -> Price | None:
    """The price of provider `slug` among a model's endpoints (matched by its `tag`, or its
    name as a slug: `fireworks` is `Fireworks`)."""
    wanted = slug.lower()
    for entry in endpoints:
        tag = str(entry.get("tag") or "").lower()
        name = str(entry.get("provider_name") or "").lower().replace(" ", "-")
        if wanted in (tag, tag.split("/", 1)[0], name):
            return _price_of(entry, f"{slug}'s price (model endpoints list)")
    return None


def _listing(endpoint: str, entries: Sequence[Mapping[str, Any]], source: str) -> Listing:
    ids = frozenset(str(e["id"]) for e in entries if isinstance(e.get("id"), str))
    prices: dict[str, Price] = {}
    for entry in entries:
        price = _price_of(entry, source)
        if price is not None and isinstance(entry.get("id"), str):
            prices[entry["id"]] = price
    return Listing(endpoint, ids, prices)


async def survey_endpoints(
    pool: ClientPool, specs: Sequence[ModelSpec], *, require_answer: bool = True
) -> dict[str, Listing | None]:
    """Check every endpoint `specs` use and return its listing (None: it keeps no list).

    Raises `UserError` for a missing key, an endpoint that does not answer (unless
    `require_answer` is False, as for `aib estimate`), answers HTML or rejects the key, and for
    a model its endpoint's list does not hold. A list of one model is not trusted to be
    complete: llama.cpp's server lists one and answers to any name.
    """
    on_endpoint: dict[str, list[ModelSpec]] = {}
    clients: dict[str, Any] = {}
    for spec in specs:
        endpoint = pool.endpoint_for(spec)
        on_endpoint.setdefault(endpoint.name, []).append(spec)
        clients[endpoint.name] = endpoint.client
    listings: dict[str, Listing | None] = {}
    for name, client in clients.items():
        lister = getattr(client, "list_models", None)
        if lister is None:
            listings[name] = None
            continue
        try:
            entries = await lister()
        except ClientError as exc:
            if exc.status == 401 and not require_answer and not sends_key(client):
                # Asked without a key (`aib estimate`) of a list that wants one (a gateway in
                # OPENROUTER_BASE_URL): its prices are unknown, not a rejected key.
                listings[name] = None
                continue
            if exc.status is not None or require_answer:
                openrouter = pool.is_openrouter(on_endpoint[name][0])
                _raise_listing_failure(name, on_endpoint[name], exc, openrouter)
            listings[name] = None
            continue
        # OpenRouter's list is public (models API reference): `aib estimate` reads it keyless.
        openrouter = pool.is_openrouter(on_endpoint[name][0])
        source = "OpenRouter's public model list" if openrouter else "endpoint's model list"
        listing = await _with_pinned_prices(
            _listing(name, entries, source), clients[name], on_endpoint[name]
        )
        listings[name] = listing
        if len(listing.ids) < 2:
            continue
        for spec in on_endpoint[name]:
            if not _listed(spec.id, listing.ids):
                form = (
                    "; OpenRouter ids read provider/model, e.g. openai/gpt-4o-mini"
                    if openrouter and "/" not in spec.id
                    else ""
                )
                raise UserError(
                    f"{name} does not list model {spec.id!r}; check the id against the "
                    f"endpoint's model list (for OpenRouter: openrouter.ai/models){form}"
                )
    return listings


async def _with_pinned_prices(listing: Listing, client: Any, specs: Sequence[ModelSpec]) -> Listing:
    """`listing` with the price of each pinned configuration's provider, where the endpoint
    lists a model's providers (OpenRouter's `GET /models/{id}/endpoints`)."""
    lister = getattr(client, "model_endpoints", None)
    if lister is None:
        return listing
    pinned: dict[str, Price] = {}
    for spec in specs:
        slug = spec.pinned_providers[0] if spec.pinned_providers else None
        if slug is not None and (price := _provider_price(slug, await lister(spec.id))):
            pinned[spec.display_label] = price
    return Listing(listing.endpoint, listing.ids, listing.prices, pinned)


def sends_key(client: Any) -> bool:
    """Whether `client` sends a key (an `OpenAICompatibleClient` built with one)."""
    return bool(getattr(client, "has_key", True))


def _raise_listing_failure(
    name: str, specs: Sequence[ModelSpec], error: ClientError, openrouter: bool
) -> None:
    """Turn a failed `GET /models` into a `UserError`; return when the run can go ahead."""
    if error.status is None:
        raise UserError(
            f"cannot reach {name}: {error}; start the server or fix the base URL "
            "(--base-url / --judge-base-url / base_url in models.yaml)"
        )
    refusal = _endpoint_refusal(name, specs[0], error, openrouter)
    if refusal is not None:
        raise refusal
    # Other statuses (no /models route, 403 on listing, a flaky 5xx): the chat calls decide.


def resolve_prices(
    specs: Sequence[ModelSpec], listings: Mapping[str, Listing | None], pool: ClientPool
) -> dict[str, Price | None]:
    """Each configuration's price by label: `models.yaml` first (the user said so), then the
    endpoint's model list, then $0 for a model run on this machine; None when none applies."""
    prices: dict[str, Price | None] = {}
    for spec in specs:
        if spec.price_prompt_per_mtok is not None and spec.price_completion_per_mtok is not None:
            prices[spec.display_label] = Price(
                spec.price_prompt_per_mtok / 1_000_000,
                spec.price_completion_per_mtok / 1_000_000,
                "models.yaml",
            )
            continue
        listing = listings.get(pool.endpoint_for(spec).name)
        found = None
        if listing is not None:
            found = (
                listing.pinned_prices.get(spec.display_label)
                or listing.prices.get(spec.id)
                or listing.prices.get(spec.id.split(":", 1)[0])
            )
        if found is None and spec.runs_locally:
            found = Price(0.0, 0.0, "local")
        prices[spec.display_label] = found
    return prices


def refuse_unsent_reasoning(pool: ClientPool, specs: Sequence[ModelSpec]) -> None:
    """Raise `UserError` for a configuration whose reasoning setting its endpoint cannot be
    sent (`server_reasoning.refusal`): its label would name a setting the model never got.
    Run after `survey_endpoints`, which tells each client its server's kind."""
    for spec in specs:
        if spec.reasoning_sent is None or pool.is_openrouter(spec):
            continue
        endpoint = pool.endpoint_for(spec)
        server = getattr(endpoint.client, "server", None)
        line = refusal(spec.display_label, endpoint.name, server, spec.reasoning_sent)
        if line is not None:
            raise UserError(line)
