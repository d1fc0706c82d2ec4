"""What each endpoint serves and at what price, checked before anything is sent or stored.

`survey_endpoints` asks every endpoint of a run for its model list (`GET /models`) before the
store is opened, so that the mistakes a user can fix end as one line and leave no half-written
store: an endpoint that does not answer, answers HTML (a base URL that points at a web page),
rejects the key, or does not list a model the run asks for. The same listings carry prices in
OpenRouter's format (`pricing.prompt` / `pricing.completion`, USD per token), which
`resolve_prices` combines with the prices a `models.yaml` gives. During a run, `rejection_of`
turns an HTTP 401 (key), 402 (credits) or 404 (model id) or an HTML reply on a chat call
into the same kind of one-line error, because every later call to that model would fail the
same way. A 403 does not stop a run: OpenRouter uses it for one flagged input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from independence_bench.clients.budget import Price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import GENERIC_KEY_ENV, OPENROUTER_KEY_ENV, ClientPool
from independence_bench.clients.protocol import ClientError, NotJsonReply
from independence_bench.errors import UserError


@dataclass(frozen=True)
class Listing:
    """What one endpoint's `GET /models` said: the model ids and any prices it gave."""

    endpoint: str
    ids: frozenset[str]
    prices: Mapping[str, Price]


def key_env_of(spec: ModelSpec) -> str:
    """The environment variable that holds the key for `spec`'s endpoint."""
    if spec.api_key_env:
        return spec.api_key_env
    return OPENROUTER_KEY_ENV if spec.is_openrouter else GENERIC_KEY_ENV


def _endpoint_refusal(endpoint: str, spec: ModelSpec, error: ClientError) -> UserError | None:
    """The error for an endpoint that refuses every call alike (HTML, a rejected key), else None."""
    if isinstance(error, NotJsonReply):
        return UserError(
            f"{endpoint} answered with a web page instead of JSON ({error}); the base URL should "
            "be the API's (it usually ends in /v1)"
        )
    if error.status == 401:
        return UserError(
            f"{endpoint} rejected the API key ({error}); put a valid key in "
            f"${key_env_of(spec)} (environment or .env) and run the same command again"
        )
    return None


def rejection_of(spec: ModelSpec, endpoint: str, error: ClientError) -> UserError | None:
    """The run-stopping error for a chat call that no retry or other item can fix, else None."""
    refusal = _endpoint_refusal(endpoint, spec, error)
    if refusal is not None:
        return refusal
    if error.status == 402:
        return UserError(
            f"{endpoint} refused model {spec.id} for payment ({error}); add credits to the "
            "account and run the same command again (completed calls are kept)"
        )
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


def _price_of(entry: Mapping[str, Any]) -> Price | None:
    pricing = entry.get("pricing")
    if not isinstance(pricing, Mapping):
        return None
    try:
        prompt = float(pricing["prompt"])
        completion = float(pricing["completion"])
    except (KeyError, TypeError, ValueError):
        return None
    if prompt < 0 or completion < 0:  # OpenRouter marks dynamic-price routers with -1
        return None
    if not (math.isfinite(prompt) and math.isfinite(completion)) or max(prompt, completion) > 1:
        return None  # "Infinity", or over $1 a token: not a price to compute costs with
    return Price(prompt, completion, "endpoint's model list")


def _listing(endpoint: str, entries: Sequence[Mapping[str, Any]]) -> Listing:
    ids = frozenset(str(e["id"]) for e in entries if isinstance(e.get("id"), str))
    prices: dict[str, Price] = {}
    for entry in entries:
        price = _price_of(entry)
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
            if exc.status is not None or require_answer:
                _raise_listing_failure(name, on_endpoint[name], exc)
            listings[name] = None
            continue
        listing = _listing(name, entries)
        listings[name] = listing
        if len(listing.ids) < 2:
            continue
        for spec in on_endpoint[name]:
            if not _listed(spec.id, listing.ids):
                raise UserError(
                    f"{name} does not list model {spec.id!r}; check the id against the "
                    "endpoint's model list (for OpenRouter: openrouter.ai/models)"
                )
    return listings


def _raise_listing_failure(name: str, specs: Sequence[ModelSpec], error: ClientError) -> None:
    """Turn a failed `GET /models` into a `UserError`; return when the run can go ahead."""
    if error.status is None:
        raise UserError(
            f"cannot reach {name}: {error}; start the server or fix the base URL "
            "(--base-url / --judge-base-url / base_url in models.yaml)"
        )
    refusal = _endpoint_refusal(name, specs[0], error)
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
            found = listing.prices.get(spec.id) or listing.prices.get(spec.id.split(":", 1)[0])
        if found is None and spec.runs_locally:
            found = Price(0.0, 0.0, "local")
        prices[spec.display_label] = found
    return prices
