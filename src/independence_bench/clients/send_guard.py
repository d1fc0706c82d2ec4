"""The last look before a call goes on the wire: a check the caller sets for its task.

A call can wait a long time between the decision to send it and the moment it is sent: behind
its endpoint's limiter, or frozen with the whole process (Ctrl-Z, a laptop suspend, SIGSTOP).
Meanwhile the run may have been asked to stop, or another process may have taken the call's
claim over (`store/claims.py`). So `Endpoint.send` calls `check_before_send()` once it holds a
limiter slot, right before the request is sent, and every retry does the same. The engine sets
the check for the task making the call (`SEND_GUARD.set`); the check raises to stop the call.
A `ContextVar` keeps the clients layer free of the engine's types: each asyncio task sees the
check its own call set.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

SEND_GUARD: ContextVar[Callable[[], None] | None] = ContextVar("send_guard", default=None)
"""The check of the call the current task is making; None: send without a check."""


def check_before_send() -> None:
    """Run the current task's check, which raises when the call must not be sent."""
    check = SEND_GUARD.get()
    if check is not None:
        check()
