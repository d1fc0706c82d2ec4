"""Worked values for what OpenRouter's replies and catalog mean (`clients/replies.py`,
`catalog`, `budget.Price`, `ratelimit.RatePacer`, `config` reasoning and routing objects)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from independence_bench.clients.budget import Price
from independence_bench.clients.catalog import _price_of, _provider_price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.openrouter import is_openrouter_endpoint, openrouter_key
from independence_bench.clients.ratelimit import RatePacer
from independence_bench.clients.replies import (
    completion_of,
    inband_error,
    rate_limit_error,
    reasoning_text,
)
from independence_bench.errors import UserError

OK_CHOICE = {"message": {"content": "hi"}, "finish_reason": "stop"}


@pytest.mark.parametrize(
    ("body", "retryable", "status"),
    [
        ({"error": {"code": 429, "message": "slow down"}}, True, 429),
        ({"error": {"code": "502", "message": "down"}}, True, 502),
        ({"error": {"code": 401, "message": "bad key"}}, False, 401),
        ({"error": {"code": 402, "message": "no credits"}}, False, 402),
        ({"error": {"code": 400, "message": "bad"}}, False, 400),
        ({"choices": [{"message": {"content": "cut"}, "finish_reason": "error"}]}, True, None),
        ({"choices": [{"message": {}, "error": {"code": 503, "message": "x"}}]}, True, 503),
    ],
)
def test_inband_errors_are_classified_by_their_code(
    body: dict[str, Any], retryable: bool, status: int | None
) -> None:
    error = inband_error(body)
    assert error is not None
    assert (error.retryable, error.status) == (retryable, status)


def test_an_inband_402_with_retry_after_waits_and_a_clean_reply_has_no_error() -> None:
    error = inband_error({"error": {"code": 402, "message": "budget"}}, retry_after=2.0)
    assert error is not None and error.retryable and error.retry_after == 2.0
    assert inband_error({"choices": [OK_CHOICE]}) is None


def test_the_message_names_the_provider_and_keeps_the_raw_text() -> None:
    body = {"error": {"code": 502, "message": "Provider returned error",
                      "metadata": {"provider_name": "Gamma", "raw": "\u001b[31mboom"}}}  # fmt: skip
    error = inband_error(body)
    assert error is not None
    assert str(error).startswith(
        "in-band error: Provider returned error (provider Gamma; code 502)"
    )
    assert "boom" in str(error)


def test_reasoning_only_as_details_is_read_as_text() -> None:
    details = [{"type": "reasoning.summary", "summary": "first"},
               {"type": "reasoning.encrypted", "data": "xx"},
               {"type": "reasoning.text", "text": "second"}, "junk"]  # fmt: skip
    reply = {"choices": [{"message": {"content": "a", "reasoning_details": details}}]}
    completion = completion_of(reply, 0.0)
    assert completion.reasoning == "first\n\nsecond"
    assert len(completion.reasoning_details) == 3
    assert reasoning_text(()) is None


@pytest.mark.parametrize(
    ("usage", "cost"),
    [
        ({"cost": 0.01, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.2}}, 0.21),
        ({"cost": 0.01, "is_byok": False, "cost_details": {"upstream_inference_cost": 0.01}}, 0.01),
        ({"cost": 0.01, "cost_details": {"upstream_inference_cost": 0.2}}, 0.01),
        ({"is_byok": True, "cost_details": {"upstream_inference_cost": 0.2}}, 0.2),
        ({"cost": float("nan"), "is_byok": True}, None),
    ],
)
def test_cost_is_the_fee_plus_the_upstream_charge_on_byok_only(
    usage: dict[str, Any], cost: float | None
) -> None:
    completion = completion_of({"choices": [OK_CHOICE], "usage": usage}, 0.0)
    assert completion.cost_usd == (None if cost is None else pytest.approx(cost))


def test_a_far_reset_stops_the_model_and_a_near_one_waits() -> None:
    limits = {"x-ratelimit-limit": "50", "x-ratelimit-remaining": "0"}
    far = rate_limit_error("HTTP 429", {**limits, "x-ratelimit-reset": "3600000"}, "m", now=0)
    assert far is not None and far.stops_model and not far.retryable
    near = rate_limit_error("HTTP 429", {**limits, "x-ratelimit-reset": "30000"}, "m", now=0)
    assert near is not None and near.retryable and near.retry_after == 30.0
    assert rate_limit_error("HTTP 429", {**limits, "x-ratelimit-reset": "nan"}, "m", now=0) is None
    assert rate_limit_error("HTTP 429", {"x-ratelimit-remaining": "3"}, "m", now=0) is None


def test_a_daily_cap_named_only_in_the_body_stops_the_model_too() -> None:
    body = {"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-day"}}
    inband = inband_error(body)
    assert inband is not None and inband.stops_model and not inband.retryable
    http = rate_limit_error("HTTP 429: Rate limit exceeded: free-models-per-day", {}, "m")
    assert http is not None and http.stops_model
    assert rate_limit_error("HTTP 429: Rate limit exceeded", {}, "m") is None


def test_pricing_reads_request_reasoning_and_cache_prices() -> None:
    entry = {"pricing": {"prompt": "0.000001", "completion": "0.000002", "request": "0.01",
                         "internal_reasoning": "0.000005", "input_cache_read": "1e-7",
                         "input_cache_write": "-1"}}  # fmt: skip
    price = _price_of(entry)
    assert price == Price(1e-6, 2e-6, "endpoint's model list", 0.01, 5e-6, 1e-7, None)
    # 100 prompt, 50 output of which 20 reasoning, one request
    assert price.cost(100, 50, 20) == pytest.approx(100e-6 + 30 * 2e-6 + 20 * 5e-6 + 0.01)
    assert price.output_max == 5e-6
    assert _price_of({"pricing": {"prompt": "-1", "completion": "0"}}) is None


def test_a_pinned_provider_is_priced_by_tag_or_name() -> None:
    endpoints = [{"provider_name": "Deep Infra", "tag": "deepinfra/fp8",
                  "pricing": {"prompt": "0.5", "completion": "1"}}]  # fmt: skip
    assert _provider_price("deepinfra", endpoints) is not None
    assert _provider_price("deep-infra", endpoints) is not None
    assert _provider_price("other", endpoints) is None


def test_the_pacer_spaces_calls_by_the_documented_rate() -> None:
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    pacer = RatePacer(20, clock=lambda: now[0], sleep=sleep)

    async def three() -> None:
        for _ in range(3):
            await pacer.wait()

    asyncio.run(three())
    assert slept == [3.0, 6.0]


def test_reasoning_and_provider_objects_are_validated() -> None:
    routing = {"order": ["x", "y"], "sort": "price"}
    spec = ModelSpec.model_validate(
        {"id": "a/b", "reasoning_effort": {"effort": "xhigh"}, "provider": routing}
    )
    assert spec.display_label == "a/b+x,y@xhigh"
    assert spec.reasoning_sent == {"effort": "xhigh"}
    assert spec.provider_routing == {"order": ["x", "y"], "sort": "price"}
    for bad in ({"effort": "low", "max_tokens": 10}, {}, {"effort": "huge"}, {"budget": 1}):
        with pytest.raises((ValueError, UserError)):
            ModelSpec.model_validate({"id": "a", "reasoning_effort": bad})
    with pytest.raises(ValueError):
        ModelSpec.model_validate({"id": "a", "provider": {"order": ["x"], "prefer": "y"}})


def test_the_openrouter_predicate_and_key_alias() -> None:
    env = {"OPENROUTER_BASE_URL": "http://127.0.0.1:9/api/v1/"}
    assert is_openrouter_endpoint(None, {})
    assert is_openrouter_endpoint("https://openrouter.ai/api/v1/", {})
    assert is_openrouter_endpoint("http://127.0.0.1:9/api/v1", env)
    assert not is_openrouter_endpoint("http://127.0.0.1:9/api/v1", {})
    assert not is_openrouter_endpoint("http://localhost:11434/v1", env)
    assert openrouter_key({"OPENROUTER_KEY": "a"}) == "a"
    assert openrouter_key({"OPENROUTER_KEY": "a", "OPENROUTER_API_KEY": "b"}) == "b"


def test_a_routing_object_is_part_of_the_request_key_and_nothing_else_moves() -> None:
    from independence_bench.clients.protocol import CompletionRequest
    from independence_bench.engine.request_keys import request_key

    plain = CompletionRequest("m", ({"role": "user", "content": "hi"},))
    cheap = CompletionRequest("m", plain.messages, provider_routing={"sort": "price"})
    fast = CompletionRequest("m", plain.messages, provider_routing={"sort": "throughput"})
    keys = {request_key(r, sample="run1") for r in (plain, cheap, fast)}
    assert len(keys) == 3
    # the key of a request without the new fields is the one stores already hold
    assert request_key(plain, sample="run1") == (
        "88368ea791649569cb5ee496287e1a78cd1f5e045b98a36a78921763d45de3c1"
    )


def test_reasoning_blocks_over_the_reply_cap_are_dropped_whole_never_cut() -> None:
    from independence_bench.clients.protocol import Completion
    from independence_bench.engine.reply_cap import cap_reply

    small = ({"type": "reasoning.text", "text": "ok"},)
    huge = ({"type": "reasoning.encrypted", "data": "x" * 200},)
    assert cap_reply(Completion("a", reasoning_details=small), cap=100).reasoning_details == small
    capped = cap_reply(Completion("a", reasoning_details=huge, generation_id="g" * 150), cap=100)
    assert capped.reasoning_details == () and capped.generation_id == "g" * 100
    assert capped.cut_chars > 200


def test_only_a_next_page_under_the_base_path_is_followed() -> None:
    from independence_bench.clients.openai_compat import OpenAICompatibleClient

    client = OpenAICompatibleClient(base_url="http://h/api/v1", api_key="k", is_openrouter=True)
    assert client._next_page("/api/v1/models?offset=500&limit=500") == (
        "/models?offset=500&limit=500"
    )
    for elsewhere in ("https://evil/api/v1/models", "/other/models", "/api/v1/../x", None, 5, ""):
        assert client._next_page(elsewhere) is None


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("reasoning_effort: {effort: low, max_tokens: 5}", "effort or max_tokens, not both"),
        ("provider: {only: [x], prefer: y}", "field 'provider.prefer': Extra inputs"),
        ("reasoning_effort: huge", "field 'reasoning_effort': Input should be 'off', 'none'"),
    ],
)
def test_a_bad_reasoning_or_routing_object_is_named_in_one_line(
    tmp_path: Any, entry: str, expected: str
) -> None:
    from independence_bench.clients.config import load_models_file

    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  - id: a/b\n    {entry}\n", encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_models_file(path)
    assert expected in str(info.value) and "\n" not in str(info.value)
