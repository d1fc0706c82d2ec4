"""Launching the engine's tasks: longest chain first, a batch at a time, all or none.

A run's wall time is bounded below by its longest chain of dependent calls (for the `v2` suite,
the psychological questions asked one after another, then their judge call). Two things keep a
run close to that bound when there are thousands of tasks:

- Tasks start in order of their chain length, longest first, so the critical chains are at the
  head of every queue: the first requests on the wire, the first replies back.
- Tasks start `LAUNCH_BATCH` at a time with one pass of the event loop between batches. Started
  all at once, every task's first step (building its request, opening a connection) would run
  before the loop looked at any socket, and the first replies would wait seconds behind them.

All tasks run in one `asyncio.TaskGroup`: if any raises (e.g. the endpoint rejected the
model, a `UserError`), the others are cancelled and awaited before the error propagates, so they
do not run on against clients the caller is about to close and record failures that are not
theirs. The caller sees that one error, not an `ExceptionGroup`. Every fan-out of the engine goes
through here (`run_all` for tasks of equal length), so there is one cancel-on-failure mechanism.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from typing import Any

LAUNCH_BATCH = 16
"""Tasks started per pass of the event loop."""

Job = tuple[int, Coroutine[Any, Any, None]]
"""A task's chain length (its dependent calls, one after another) and its coroutine."""


async def run_longest_first(jobs: Sequence[Job], *, batch: int = LAUNCH_BATCH) -> None:
    """Run every job, starting the longest chains first; if one raises, cancel the rest.

    The first failure is raised as itself; a job that was never started is closed unrun.
    """
    ordered = sorted(jobs, key=lambda job: -job[0])  # stable: equal chains keep their order
    started = 0
    try:
        async with asyncio.TaskGroup() as group:
            for _, coroutine in ordered:
                group.create_task(coroutine)
                started += 1
                if started % batch == 0:
                    # A failure so far cancels this task here, which stops the launching.
                    await asyncio.sleep(0)
    except BaseExceptionGroup as failures:
        raise first_failure(failures) from None
    finally:
        for _, coroutine in ordered[started:]:
            coroutine.close()  # never started: close it so it is not reported as never awaited


async def run_all(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run every coroutine concurrently, in order; if one raises, cancel the rest."""
    await run_longest_first([(0, coroutine) for coroutine in coroutines])


def first_failure(failures: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception in a (possibly nested) group: the error that cancelled the rest."""
    first = failures.exceptions[0]
    return first_failure(first) if isinstance(first, BaseExceptionGroup) else first
