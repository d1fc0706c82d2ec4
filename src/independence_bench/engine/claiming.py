"""The engine's side of claims: claim a call before sending it, wait on other processes' claims,
and renew this process's claims while it runs.

`claim_or_wait` is called for every call the store does not hold yet. When another process holds
the claim, the task sleeps (the event loop runs this process's other items meanwhile) and looks
again, first after `POLL_FIRST_S`, doubling to `POLL_MAX_S`, and never later than the claim's
expiry. The wait is bounded by the holder: it ends when the holder stores the completion, gives
the call up (a failure: this process then tries it itself), or stops renewing (killed or hung:
the lease runs out, `store/claims.py`). `renewing` is the heartbeat: one `UPDATE` per
`Claims.renew_every_s` for all of this owner's claims, however many calls are in flight.

A claimed call is sent only while the claim is still this process's: `guard_claim` is the
check `clients.send_guard` runs right before the request goes out (after the limiter, and
before every retry). A process frozen past its lease (SIGSTOP, a suspended laptop) whose calls
another process took over meanwhile finds `ClaimLost` there and waits for that process's reply
instead of paying for the call again; only the calls already on the wire at the pause can be
sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable

from independence_bench.clients.protocol import Completion
from independence_bench.store.claims import ClaimAttempt, Claims
from independence_bench.store.no_space import StoreFull

POLL_FIRST_S = 0.05
"""The first wait on another process's claim; a scripted or local call takes about this long."""
POLL_MAX_S = 1.0
"""The longest wait between two looks at a claim held elsewhere."""


class ClaimLost(Exception):
    """The claim on a call this process was about to send is no longer its own."""


def guard_claim(claims: Claims, key: str, stop: Callable[[], None]) -> Callable[[], None]:
    """The check before sending `key`: `stop()` (raises once the run stops), then
    `ClaimLost` unless the claim is still this owner's."""

    def check() -> None:
        stop()
        if not claims.still_holds(key):
            raise ClaimLost(key)

    return check


async def claim_or_wait(
    claims: Claims,
    key: str,
    stop: Callable[[], None] = lambda: None,
    *,
    attempt: Callable[[str], Awaitable[ClaimAttempt]] | None = None,
) -> Completion | None:
    """The completion if the store holds it (perhaps after waiting on another process's
    claim), or None once this process holds the claim and must send the call. `stop()` is
    called before each look and raises to end the wait. Each look is `attempt(key)`
    (the engine's gathers a wave's looks into one transaction, `batches.py`), by default
    `claims.attempt`."""
    delay = POLL_FIRST_S
    while True:
        stop()
        attempt_now = await attempt(key) if attempt is not None else claims.attempt(key)
        if attempt_now.stored is not None:
            return attempt_now.stored
        if attempt_now.claimed:
            return None
        assert attempt_now.held_by is not None
        until_expiry = attempt_now.held_by.expires_at - claims.clock()
        await asyncio.sleep(max(0.0, min(delay, until_expiry)))
        delay = min(2 * delay, POLL_MAX_S)


async def _renew_forever(claims: Claims) -> None:
    while True:
        await asyncio.sleep(claims.renew_every_s)
        # The store was busy past its timeout, or full: the next beat tries again.
        with contextlib.suppress(sqlite3.OperationalError, StoreFull):
            claims.renew()


@contextlib.asynccontextmanager
async def renewing(claims: Claims) -> AsyncIterator[None]:
    """Renew this owner's claims on a heartbeat for as long as the block runs."""
    heartbeat = asyncio.create_task(_renew_forever(claims))
    try:
        yield
    finally:
        heartbeat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await heartbeat
