"""Launching the engine's tasks: longest chains first, replies let in between batches."""

from __future__ import annotations

import asyncio

import pytest

from independence_bench.engine.launch import run_longest_first


async def test_longest_chains_start_first_and_equal_ones_keep_their_order() -> None:
    started: list[str] = []

    async def job(name: str) -> None:
        started.append(name)

    chains = [(2, "a"), (6, "psych"), (2, "b"), (3, "c"), (6, "psych2")]
    await run_longest_first([(n, job(name)) for n, name in chains], batch=2)
    assert started == ["psych", "psych2", "c", "a", "b"]


async def test_the_event_loop_runs_between_batches() -> None:
    """A reply that arrives while tasks are being launched is handled before the last launch."""
    events: list[str] = []
    reply = asyncio.get_running_loop().create_future()

    async def first() -> None:
        events.append("first sent")
        asyncio.get_running_loop().call_soon(reply.set_result, None)  # the reply arrives
        await reply
        events.append("first got its reply")

    async def later(index: int) -> None:
        events.append(f"later {index} started")

    jobs = [(6, first()), *((2, later(i)) for i in range(8))]
    await run_longest_first(jobs, batch=2)
    assert events.index("first got its reply") < events.index("later 7 started")


async def test_a_failure_cancels_the_rest_and_closes_what_never_started() -> None:
    cancelled: list[int] = []

    async def boom() -> None:
        raise RuntimeError("the endpoint rejected the model")

    async def waits(index: int) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(index)
            raise

    jobs = [(3, boom()), *((2, waits(i)) for i in range(40))]
    with pytest.raises(RuntimeError, match="rejected"):
        await asyncio.wait_for(run_longest_first(jobs, batch=4), timeout=5)
    assert cancelled  # started ones were cancelled, not left running
    assert len(cancelled) < 40  # and launching stopped early
