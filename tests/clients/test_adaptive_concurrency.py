"""Adaptive concurrency by default: start high, back off on 429s, regrow; `--concurrency` caps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.ratelimit import ADAPTIVE_START, limiter_for
from independence_bench.engine.engine import Engine, RunPlan
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer


def test_without_a_cap_the_limit_starts_high_and_may_grow_to_the_open_file_budget() -> None:
    adaptive = limiter_for(None, 20_000)
    assert (adaptive.limit, adaptive.max_limit) == (ADAPTIVE_START, 20_000)
    assert ADAPTIVE_START >= 1500, "20 models × 5 runs start 1,500 conversations at once"
    no_budget = limiter_for(None, None)
    assert (no_budget.limit, no_budget.max_limit) == (ADAPTIVE_START, ADAPTIVE_START)


def test_a_cap_is_start_and_maximum_and_the_open_file_budget_bounds_both() -> None:
    capped = limiter_for(300, 20_000)
    assert (capped.limit, capped.max_limit) == (300, 300)
    over_budget = limiter_for(2000, 200)
    assert (over_budget.limit, over_budget.max_limit) == (200, 200)
    small_budget = limiter_for(None, 100)
    assert (small_budget.limit, small_budget.max_limit) == (100, 100)


async def test_a_503_backs_off_like_a_429(tmp_path: Path) -> None:
    config = MockConfig(fail_first=1, fail_first_kind="503")
    with MockServer(config) as server:
        pool = ClientPool(env={}, concurrency=8)
        spec = ModelSpec(id="scripted-firm", base_url=server.base_url)
        quick = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
        plan = RunPlan(suite=load_suite("v2").subset(["direct"]), models=(spec,), judge=None)
        try:
            with Store(tmp_path) as store:
                summary = await Engine(store, pool, retry=quick).run(plan)
            limiter = pool.endpoints()[0].limiter
        finally:
            await pool.aclose()
    assert summary.items_done == 1 and server.seen.request_count == 2
    assert limiter.throttles == 1 and limiter.limit == 4


async def test_throttled_bursts_bring_the_calls_in_flight_down_and_successes_bring_them_back(
    tmp_path: Path,
) -> None:
    """The server answers its first 420 requests with 429: what it sees in flight falls from
    the first burst to a few, then rises again once it answers."""
    throttled = 420
    config = MockConfig(latency_s=0.03, fail_first=throttled, fail_first_kind="429")
    with MockServer(config) as server:
        pool = ClientPool(env={})  # no --concurrency: adaptive
        subjects = tuple(
            ModelSpec(id="scripted-firm", label=f"firm-{i}", base_url=server.base_url, seed=i)
            for i in range(4)
        )
        judge = ModelSpec(id="scripted-judge", base_url=server.base_url, temperature=0.0)
        retry = RetryPolicy(max_attempts=40, base_delay_s=0.002, max_delay_s=0.01)
        try:
            with Store(tmp_path) as store:
                engine = Engine(store, pool, retry=retry)
                plan = RunPlan(suite=load_suite("v2"), models=subjects, judge=judge)
                summary = await engine.run(plan)
            limiter = pool.endpoints()[0].limiter
        finally:
            await pool.aclose()
        seen = server.seen.in_flight_seen
    assert summary.items_failed == 0 and summary.judge_failed == 0
    assert summary.items_done == 4 * 15 and summary.judged == 4 * 15
    assert limiter.throttles == throttled
    first_burst = max(seen[:60])
    assert first_burst > 16, f"the default started at {first_burst} in flight, not high"
    during = min(seen[throttled - 20 : throttled])
    assert during <= 4 and limiter.lowest <= 4, "the limit did not come down under 429s"
    after = max(seen[throttled:])
    assert after >= 8 and after >= 2 * during, "the limit did not grow back after the 429s"


def test_concurrency_caps_the_calls_in_flight(aib: Any) -> None:
    def run(*extra: str) -> int:
        with MockServer(MockConfig(latency_s=0.1)) as server:
            models = "scripted-firm,scripted-caving"
            args = ["--models", models, "--judge", "scripted-judge", "--base-url", server.base_url]
            args += ["--runs", "3", "--scenarios", "direct,tool_context", *extra]
            result = aib("run", *args)
            assert result.code == 0, result.err
            assert "12 conversations run" in result.out
            return server.seen.peak_in_flight

    assert run("--data-dir", "capped", "--concurrency", "3") == 3
    assert run("--data-dir", "adaptive") == 12, "without a cap all 12 conversations start at once"
