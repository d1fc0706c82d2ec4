"""OpenRouter as its documentation describes it: which endpoint is OpenRouter, and what only it
is sent.

`is_openrouter_endpoint(base_url, env)` is the one place that decides "this endpoint is
OpenRouter": no URL (the default), OpenRouter's own URL, or the URL `OPENROUTER_BASE_URL` names
(a proxy or gateway in front of it). Everything OpenRouter-only goes to such an endpoint and to
no other — the `reasoning` object, the `provider` routing object and `require_parameters`, the
app attribution headers — so a local server (vLLM, Ollama, LM Studio, llama.cpp) receives none
of them. The key is `OPENROUTER_API_KEY`, or `OPENROUTER_KEY` as its alias. Nothing here reads
the process environment: every function takes the mapping the command read (`cli.options`).

The deprecated `usage: {include: true}` flag is not sent: OpenRouter's usage-accounting page
says full usage now comes with every response and the flag has no effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from independence_bench.clients.config import check_base_url

DEFAULT_URL = "https://openrouter.ai/api/v1"
BASE_URL_ENV = "OPENROUTER_BASE_URL"
"""Names the URL OpenRouter is reached at (a proxy, a gateway, or a test's emulator)."""
KEY_ENV = "OPENROUTER_API_KEY"
KEY_ALIAS_ENV = "OPENROUTER_KEY"
"""Read when `KEY_ENV` is not set (the earlier implementation's name for the key)."""
REFERER_ENV = "AIB_OPENROUTER_REFERER"
TITLE_ENV = "AIB_OPENROUTER_TITLE"
DEFAULT_REFERER = "https://pypi.org/project/ai-independence-bench/"
DEFAULT_TITLE = "AI Independence Bench"
FREE_RPM_ENV = "AIB_OPENROUTER_FREE_RPM"
FREE_REQUESTS_PER_MINUTE = 20.0
"""OpenRouter's limits page: `:free` variants take 20 requests a minute, whatever the credits."""


def openrouter_url(env: Mapping[str, str]) -> str:
    """Where OpenRouter is reached: `OPENROUTER_BASE_URL` when set, else its own URL."""
    named = (env.get(BASE_URL_ENV) or "").strip()
    return check_base_url(named).rstrip("/") if named else DEFAULT_URL


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/").lower() == b.rstrip("/").lower()


def is_openrouter_endpoint(base_url: str | None, env: Mapping[str, str]) -> bool:
    """True when `base_url` is OpenRouter: None (the default endpoint), OpenRouter's own URL,
    or the URL `OPENROUTER_BASE_URL` names. The one predicate every OpenRouter-only field
    and header is sent by."""
    if base_url is None:
        return True
    return _same_url(base_url, DEFAULT_URL) or _same_url(base_url, openrouter_url(env))


def openrouter_key(env: Mapping[str, str]) -> str | None:
    """The OpenRouter key: `OPENROUTER_API_KEY`, else its alias `OPENROUTER_KEY`."""
    return env.get(KEY_ENV) or env.get(KEY_ALIAS_ENV) or None


def attribution_headers(env: Mapping[str, str]) -> dict[str, str]:
    """OpenRouter's app-attribution headers (app-attribution page: `HTTP-Referer` names the
    app, `X-Title` its display name). Each can be set by its variable; set empty, not sent."""
    headers = {}
    referer = env.get(REFERER_ENV, DEFAULT_REFERER).strip()
    title = env.get(TITLE_ENV, DEFAULT_TITLE).strip()
    if referer:
        headers["HTTP-Referer"] = referer
    if title:
        headers["X-Title"] = title
    return headers


def free_requests_per_minute(model_id: str, env: Mapping[str, str]) -> float | None:
    """The rate a `:free` model starts at (`AIB_OPENROUTER_FREE_RPM` or the documented 20 a
    minute); None for other models."""
    if not model_id.endswith(":free"):
        return None
    try:
        rate = float(env.get(FREE_RPM_ENV, FREE_REQUESTS_PER_MINUTE))
    except ValueError:
        return FREE_REQUESTS_PER_MINUTE
    return rate if rate > 0 else FREE_REQUESTS_PER_MINUTE


def reasoning_field(setting: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The body's `reasoning` object for a request's reasoning setting; None sends none."""
    if setting is None:
        return None
    if isinstance(setting, str):
        return {"effort": setting}
    return dict(setting)


def provider_field(
    order: tuple[str, ...], routing: Mapping[str, Any] | None, *, require_parameters: bool
) -> dict[str, Any] | None:
    """The body's `provider` object: the routing object as given, or a list pin tried in order
    without fallbacks; with `require_parameters` (a judge's schema) only providers that honour
    every parameter may serve it (provider-routing page, "Requiring Providers to Support All
    Parameters")."""
    provider: dict[str, Any] = {}
    if routing is not None:
        provider.update(routing)
    elif order:
        provider = {"order": list(order), "allow_fallbacks": False}
    if require_parameters:
        provider["require_parameters"] = True
    return provider or None
