"""Stopping a run cleanly: the first Ctrl-C, SIGTERM or SIGHUP stops starting calls, the second
Ctrl-C aborts.

At 2,048 calls in flight, a Ctrl-C that cancelled everything at once lost every answered call
still on the wire (150 of 300 in one test), and the resume paid for them again; SIGTERM ended
the process without a word, and SIGHUP (a closed terminal or SSH session) still did: 152 sent,
2 stored. Now `stop_on_signals` turns the first SIGINT, SIGTERM or SIGHUP into a `StopRequest`:
from then on no call starts (a call about to be sent or retried raises `RunStopped` at
`clients.send_guard`, a conversation not yet begun ends unstarted), while the calls already on
the wire run to their end, bounded by `--timeout`, and are stored. The command then ends with
`Interrupted` saying to run it again, exit 128 + the signal's number (the shells' convention:
130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, so a script can tell them apart). A second
stop signal (a second Ctrl-C, or SIGTERM after the first) raises `KeyboardInterrupt` at once
(exit 130).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from independence_bench.clients.budget import BudgetExhausted
from independence_bench.errors import Interrupted

_T = TypeVar("_T")
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)  # Windows has no SIGHUP


class RunStopped(BudgetExhausted):
    """Raised instead of starting a call once a stop was asked for. Like a spent cost cap it
    leaves the conversation or judgment missing, and the next run starts it."""


class StopRequest:
    """Whether, and by which signal, the run was asked to stop."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.halted = False
        """Set when the run stops for a cause of its own, not a signal: the store refused a
        write for lack of space (`store/no_space.py`)."""

    def __bool__(self) -> bool:
        return self.signum is not None or self.halted

    def check(self) -> None:
        """Raise `RunStopped` once a stop was asked for."""
        if self:
            raise RunStopped("the run is stopping")


@contextlib.contextmanager
def stop_on_signals(stop: StopRequest, in_flight: int | None = None) -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP set `stop` (a second one raises
    `KeyboardInterrupt`); outside it they act as before. Where the loop cannot take signal
    handlers (not the main thread, Windows) the block runs without them."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if stop.signum is not None:
            # Any stop signal after the first aborts: a SIGTERM after Ctrl-C (a supervisor
            # giving up) too. Each client then stops at once, an embedded generation at its next
            # token (`embedded._run_shielded`), and `cli.main` exits 130 with its line.
            raise KeyboardInterrupt
        stop.signum = signum
        sys.stderr.write(
            "\naib: stopping: no new calls; the calls in flight finish (up to --timeout) and "
            "are stored. Press Ctrl-C again to abort now.\n"
        )

    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


async def until_stopped(work: Awaitable[_T], stop: StopRequest, answered: Callable[[], int]) -> _T:
    """Await `work` with `stop_on_signals`; raise `Interrupted` if a signal stopped it
    (`answered()`: the calls answered and stored, for the message)."""
    with stop_on_signals(stop):
        result = await work
    if stop.signum is not None:
        raise Interrupted(stop.signum, answered())
    return result
