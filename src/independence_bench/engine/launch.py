"""Launching the engine's tasks: longest chain first, a batch at a time, all or none.

A run's wall time is bounded below by its longest chain of dependent calls (for the `v2` suite,
the psychological questions asked one after another, then their judge call). Two things keep a
run close to that bound when there are thousands of tasks:

- Tasks start in order of their chain length, longest first, so the critical chains are at the
  head of every queue: the first requests on the wire, the first replies back.
- Tasks start `LAUNCH_BATCH` at a time with one pass of the event loop between batches. Started
  all at once, every task's first step (building its request, opening a connection) would run
  before the loop looked at any socket, and the first replies would wait seconds behind them.

If any task raises (e.g. the endpoint rejected the model), the others are cancelled before the
error propagates, so they do not run on against clients the caller is about to close and record
failures that are not theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

LAUNCH_BATCH = 16
"""Tasks started per pass of the event loop."""

Job = tuple[int, Coroutine[Any, Any, None]]
"""A task's chain length (its dependent calls, one after another) and its coroutine."""


async def run_longest_first(jobs: Sequence[Job], *, batch: int = LAUNCH_BATCH) -> None:
    """Run every job, starting the longest chains first; if one raises, cancel the rest."""
    ordered = sorted(jobs, key=lambda job: -job[0])  # stable: equal chains keep their order
    tasks: list[asyncio.Future[None]] = []
    failures: list[BaseException] = []

    def note_failure(task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            failures.append(task.exception())  # type: ignore[arg-type]

    try:
        for index, (_, coroutine) in enumerate(ordered):
            task = asyncio.ensure_future(coroutine)
            task.add_done_callback(note_failure)
            tasks.append(task)
            if index % batch == batch - 1:
                await asyncio.sleep(0)
                if failures:
                    raise failures[0]
        await asyncio.gather(*tasks)
    except BaseException:
        for started in tasks:
            started.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for _, coroutine in ordered[len(tasks) :]:
            coroutine.close()  # never started: close it so it is not reported as never awaited
        raise
