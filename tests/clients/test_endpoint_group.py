"""Several base URLs for one model: calls spread across servers, each within its own limit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from independence_bench.clients.config import ModelSpec, load_models_file
from independence_bench.clients.endpoint_group import EndpointGroup
from independence_bench.clients.endpoints import ClientPool, Endpoint, RetryPolicy, call_with_retry
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest
from independence_bench.clients.ratelimit import AdaptiveLimiter
from independence_bench.errors import UserError
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer

REQUEST = CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},))
FAST = RetryPolicy(max_attempts=6, base_delay_s=0.001, max_delay_s=0.01)


class CountingClient:
    """Answers after `delay_s`, recording how many calls it had in flight at most."""

    def __init__(self, delay_s: float = 0.01, *, dead: bool = False) -> None:
        self.delay_s = delay_s
        self.dead = dead
        self.calls = 0
        self.in_flight = 0
        self.peak = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        if self.dead:
            raise ClientError("connection failed: refused", retryable=True)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(self.delay_s)
        self.in_flight -= 1
        return Completion(content="ok")

    async def aclose(self) -> None:
        pass


def _group(*clients: CountingClient, limit: int) -> EndpointGroup:
    members = [
        Endpoint(f"http://server{i}/v1", client, AdaptiveLimiter(limit))
        for i, client in enumerate(clients)
    ]
    return EndpointGroup(members)


async def test_calls_spread_evenly_and_no_server_exceeds_its_limit() -> None:
    a, b = CountingClient(), CountingClient()
    group = _group(a, b, limit=3)
    assert group.capacity == 6
    await asyncio.gather(*(group.complete(REQUEST) for _ in range(40)))
    assert a.calls + b.calls == 40
    assert a.calls == b.calls == 20
    assert a.peak == b.peak == 3


async def test_sequential_calls_alternate_between_servers() -> None:
    a, b = CountingClient(0.0), CountingClient(0.0)
    group = _group(a, b, limit=4)
    for _ in range(6):
        await group.complete(REQUEST)
    assert (a.calls, b.calls) == (3, 3)


async def test_the_server_with_more_room_gets_the_call() -> None:
    busy, idle = CountingClient(0.2), CountingClient(0.0)
    group = _group(busy, idle, limit=4)
    group.members[0].limiter.in_flight = 3  # another model is using the first server
    await asyncio.gather(*(group.complete(REQUEST) for _ in range(3)))
    assert (busy.calls, idle.calls) == (0, 3)


async def test_retries_move_off_a_dead_server() -> None:
    dead, alive = CountingClient(dead=True), CountingClient(0.0)
    group = _group(dead, alive, limit=8)
    endpoint = Endpoint(group.name, group, AdaptiveLimiter(group.capacity))
    for _ in range(20):
        _, completion = await call_with_retry(endpoint, REQUEST, FAST)
        assert completion.content == "ok"
    assert alive.calls == 20
    assert dead.calls == 1  # then it cools down for longer than this test runs


async def test_a_429_lowers_only_the_limit_of_the_server_that_sent_it() -> None:
    class Throttled(CountingClient):
        async def complete(self, request: CompletionRequest) -> Completion:
            raise ClientError("HTTP 429: slow down", retryable=True, status=429)

    group = _group(Throttled(), CountingClient(0.0), limit=8)
    group._turn = 0  # the first attempt goes to the throttled server
    with pytest.raises(ClientError):
        await group.complete(REQUEST)
    assert [m.limiter.limit for m in group.members] == [4, 8]


def test_base_url_list_means_base_urls_and_mistakes_name_the_entry(tmp_path: Path) -> None:
    spec = ModelSpec(id="m", base_url=["http://a/v1", "http://b/v1"])  # type: ignore[arg-type]
    assert spec.base_urls == ("http://a/v1", "http://b/v1")
    assert spec.base_url == "http://a/v1"
    config = tmp_path / "models.yaml"
    config.write_text(
        yaml.safe_dump({"models": [{"id": "m", "base_url": "http://c/v1", "base_urls": ["x"]}]})
    )
    with pytest.raises(UserError) as caught:
        load_models_file(config)
    assert "models[0] (m)" in str(caught.value)
    assert "not one of base_urls" in str(caught.value)


def test_a_server_shared_with_the_judge_shares_its_limit() -> None:
    pool = ClientPool(env={}, concurrency=5)
    model = ModelSpec(id="m", base_urls=("http://a/v1", "http://b/v1"))
    judge = ModelSpec(id="j", base_url="http://a/v1")
    group = pool.endpoint_for(model)
    assert isinstance(group.client, EndpointGroup)
    assert group.client.members[0] is pool.endpoint_for(judge)
    assert group.limiter.max_limit == 10
    assert pool.endpoint_for(model) is group


def test_a_run_over_two_servers_uses_both(tmp_path: Path, aib: Any) -> None:
    with MockServer(MockConfig()) as first, MockServer(MockConfig()) as second:
        config = tmp_path / "models.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "models": [
                        {"id": "scripted-firm", "base_urls": [first.base_url, second.base_url]},
                        {"id": "scripted-caving", "base_url": [first.base_url, second.base_url]},
                    ]
                }
            )
        )
        result = aib(
            "run",
            "--config",
            str(config),
            "--judge",
            "scripted-judge",
            "--judge-base-url",
            first.base_url,
            "--runs",
            "1",
            "--data-dir",
            str(tmp_path / "store"),
        )
        assert result.code == 0, result.err
        suite = load_suite("v2")
        subject_calls = 2 * sum(len(s.turns) for s in suite.scenarios)
        judge_calls = 2 * len(suite.scenarios)
        subjects_on = [
            sum(1 for r in server.seen.requests if r["model"] != "scripted-judge")
            for server in (first, second)
        ]
        assert sum(subjects_on) == subject_calls
        assert min(subjects_on) > subject_calls // 4
        assert first.seen.request_count + second.seen.request_count == subject_calls + judge_calls
