"""The adaptive per-endpoint limit: halve on 429s, recover one slot per window, never deadlock."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.ratelimit import AdaptiveLimiter, describe_limits
from independence_bench.engine.engine import Engine, RunPlan
from independence_bench.engine.progress import RichProgress, call_eta, format_eta
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer


async def test_a_429_halves_the_limit_once_per_generation_of_calls() -> None:
    limiter = AdaptiveLimiter(16)
    permits = [await limiter.__aenter__() for _ in range(6)]
    for permit in permits:  # six calls sent under the old limit all come back 429
        permit.throttled()
    assert limiter.limit == 8 and limiter.throttles == 6
    later = await asyncio.wait_for(limiter.__aenter__(), 1)  # sent after the decrease
    later.throttled()  # so its 429 is news
    assert limiter.limit == 4
    for _ in range(7):
        await limiter.__aexit__(None, None, None)
    assert limiter.in_flight == 0 and limiter.lowest == 4


async def test_the_limit_recovers_one_slot_per_window_of_successes() -> None:
    limiter = AdaptiveLimiter(4)
    permit = await limiter.__aenter__()
    permit.throttled()
    await limiter.__aexit__(None, None, None)
    assert limiter.limit == 2
    successes = []
    while limiter.limit < 4:
        async with limiter as permit:
            permit.succeeded()
        successes.append(limiter.limit)
    assert successes == [2, 3, 3, 3, 4]  # 2 successes to reach 3, then 3 to reach 4
    async with limiter as permit:
        permit.succeeded()
    assert limiter.limit == 4  # never above the configured concurrency


async def test_lowering_the_limit_below_the_calls_in_flight_does_not_deadlock() -> None:
    limiter = AdaptiveLimiter(8, min_limit=1)
    peak = 0

    async def call(index: int) -> None:
        nonlocal peak
        async with limiter as permit:
            peak = max(peak, limiter.in_flight)
            assert limiter.in_flight <= max(limiter.limit, 8)
            await asyncio.sleep(0.001)
            if index % 3 == 0:
                permit.throttled()
            else:
                permit.succeeded()

    await asyncio.wait_for(asyncio.gather(*(call(i) for i in range(300))), timeout=10)
    assert limiter.in_flight == 0
    assert limiter.lowest == 1 and peak == 8


async def test_a_throttling_endpoint_brings_the_limit_down_and_the_run_completes(
    tmp_path: Path,
) -> None:
    config = MockConfig(latency_s=0.01, max_in_flight=3)
    with MockServer(config) as server:
        pool = ClientPool(env={}, concurrency=24)
        subject = ModelSpec(id="scripted-firm", base_url=server.base_url)
        judge = ModelSpec(id="scripted-judge", base_url=server.base_url, temperature=0.0)
        retry = RetryPolicy(max_attempts=30, base_delay_s=0.002, max_delay_s=0.02)
        try:
            with Store(tmp_path) as store:
                engine = Engine(store, pool, retry=retry)
                plan = RunPlan(suite=load_suite("v2"), models=(subject,), judge=judge, runs=2)
                summary = await engine.run(plan)
            limiter = pool.endpoints()[0].limiter
        finally:
            await pool.aclose()
    assert summary.items_failed == 0 and summary.judge_failed == 0
    assert limiter.throttles > 0
    assert limiter.lowest <= 6, "the limit never came down towards what the server allows"
    assert server.seen.request_count - limiter.throttles == summary.calls


def test_the_progress_display_shows_the_current_limit() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    limiter = AdaptiveLimiter(16)
    limiter.limit = 5
    with RichProgress(console, limits=lambda: describe_limits([("http://x/v1", limiter)])) as p:
        p.planned(10, 10)
        p.advance("item_done")
    assert "limit 5/16" in buffer.getvalue()
    both = describe_limits([("http://a:1/v1", limiter), ("https://b.example/api", limiter)])
    assert both == "limits a:1 5/16 · b.example 5/16"


def test_the_calls_row_counts_calls_and_estimates_from_those_answered() -> None:
    assert call_eta(elapsed_s=30.0, answered=0, remaining=10) is None
    assert call_eta(elapsed_s=30.0, answered=3, remaining=12) == 120.0
    assert call_eta(elapsed_s=30.0, answered=3, remaining=-2) == 0.0
    assert format_eta(125.0) == "ETA 0:02:05" and format_eta(3725.0) == "ETA 1:02:05"
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160)
    with RichProgress(console) as progress:
        progress.planned(2, 2, 6)
        for event in ("call_cached", "call_started", "call_started", "call_done"):
            progress.advance(event)
    shown = buffer.getvalue()
    assert "1 in flight for 0:00:00  1 answered  1 cached" in shown and "ETA " in shown


def test_a_log_gets_plain_progress_lines_not_a_cut_frame() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=80)
    with RichProgress(console) as progress:
        progress.planned(3, 3, 9)
        for event in ("call_started", "call_done", "item_done", "judged", "item_failed"):
            progress.advance(event)
    lines = buffer.getvalue().splitlines()
    assert all(line.startswith("progress: ") for line in lines), lines
    assert "━" not in buffer.getvalue() and "…" not in buffer.getvalue()
    assert lines[0].startswith("progress: calls: ETA –  1 in flight for 0:00:00  0 answered")
    final = lines[-1]
    assert "1 answered" in final and "conversations 2/3" in final and "judgments 1/3" in final
    assert len(lines) == 2, "a line at the first event and one at the end, none in between"


def test_the_bars_end_with_every_event_counted_however_fast_they_came() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160)
    with RichProgress(console) as progress:
        progress.planned(400, 401, 800)
        for _ in range(400):  # far faster than the bars are redrawn
            for event in ("call_started", "call_done", "item_done", "call_cached", "judged"):
                progress.advance(event)
        progress.advance("judge_failed")
    last_frame = buffer.getvalue().rsplit("calls", 1)[-1]
    assert "0 in flight  400 answered  400 cached" in last_frame
    assert "400/400" in last_frame and "done 400" in last_frame
    assert "401/401" in last_frame and "failed 1" in last_frame
