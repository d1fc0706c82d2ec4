"""The adaptive concurrency limit of one endpoint: back off on 429s, recover slowly (AIMD).

An `AdaptiveLimiter` replaces a fixed `asyncio.Semaphore` behind the same `async with limiter:`
usage. It starts at `start` (by default its maximum). With no `--concurrency` the pool starts
every endpoint at `ADAPTIVE_START`, high enough that the 1,500 conversations of 20 models × 5
runs are all in flight at once, with the open-file budget (`open_files.py`) as the maximum; a
`--concurrency N` makes N both the start and the maximum. A rate-limit reply (HTTP 429, or 503,
which overloaded servers send instead) halves the limit, once per "generation": the other calls
already in flight were sent under the old limit, so their refusals say nothing new and do not
halve it again. Each full window of successes (as many as the current limit) raises it by one,
up to the maximum, so a free tier that throttles all afternoon settles near what it allows
instead of oscillating. Lowering the limit never blocks or cancels a call in flight; new calls
simply wait until enough of them finish. A `Retry-After` is honoured by the retry's delay
(`endpoints.RetryPolicy`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

ADAPTIVE_START = 2048
"""Where an endpoint's limit starts when no `--concurrency` caps it."""
THROTTLE_STATUSES = frozenset({429, 503})
"""Replies that mean "fewer calls at once, please"."""


@dataclass
class Permit:
    """One call's place under the limit; tells the limiter how the call went."""

    limiter: AdaptiveLimiter
    generation: int

    def throttled(self) -> None:
        """The call got HTTP 429 (or 503)."""
        self.limiter.on_throttled(self.generation)

    def succeeded(self) -> None:
        """The endpoint answered (any reply that was not a rate-limit or server error)."""
        self.limiter.on_success()


class AdaptiveLimiter:
    """An AIMD concurrency limit between `min_limit` and `max_limit` calls in flight, starting
    at `start` (default `max_limit`)."""

    def __init__(
        self,
        max_limit: int,
        *,
        start: int | None = None,
        min_limit: int = 1,
        decrease: float = 0.5,
    ) -> None:
        if max_limit < 1 or not 1 <= min_limit <= max_limit:
            raise ValueError(f"need 1 <= min_limit <= max_limit, got {min_limit}, {max_limit}")
        if not 0.0 < decrease < 1.0:
            raise ValueError(f"decrease must be within (0, 1), got {decrease}")
        first = max_limit if start is None else start
        if not min_limit <= first <= max_limit:
            raise ValueError(f"need min_limit <= start <= max_limit, got {first}")
        self.max_limit = max_limit
        self.min_limit = min_limit
        self.limit = first
        """Calls allowed in flight right now."""
        self.lowest = first
        """The lowest the limit has been (reported by benchmarks and tests)."""
        self.in_flight = 0
        self.throttles = 0
        """429 and 503 replies seen."""
        self._decrease = decrease
        self._generation = 0
        self._successes = 0
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> Permit:
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        return Permit(self, self._generation)

    async def __aexit__(self, *_: object) -> None:
        async with self._changed:
            self.in_flight -= 1
            # A success inside the block may have raised the limit: wake every waiter that fits.
            self._changed.notify(max(1, self.limit - self.in_flight))

    def on_throttled(self, generation: int) -> None:
        """Multiplicative decrease, at most once per generation of calls."""
        self.throttles += 1
        if generation != self._generation:
            return
        self._generation += 1
        self._successes = 0
        self.limit = max(self.min_limit, int(self.limit * self._decrease))
        self.lowest = min(self.lowest, self.limit)

    def on_success(self) -> None:
        """Additive increase: one more slot after a full window of successes.

        Called while the call still holds its permit, so the release that follows wakes the
        waiters a raised limit lets in.
        """
        if self.limit >= self.max_limit:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1

    def describe(self) -> str:
        """`12/16`: the current limit over the most it may reach."""
        return f"{self.limit}/{self.max_limit}"


def limiter_for(cap: int | None, connections: int | None) -> AdaptiveLimiter:
    """An endpoint's limiter: `cap` (`--concurrency`) as start and maximum, or with no cap a
    start of `ADAPTIVE_START`; both within the open-file budget `connections` (None: none)."""
    ceiling = cap if cap is not None else max(ADAPTIVE_START, connections or ADAPTIVE_START)
    if connections is not None:
        ceiling = min(ceiling, connections)
    return AdaptiveLimiter(ceiling, start=min(ceiling, cap or ADAPTIVE_START))


def describe_limits(limiters: Iterable[tuple[str, AdaptiveLimiter]]) -> str:
    """The progress display's text: `limit 12/16`, or one `name 12/16` per endpoint.

    An endpoint whose limit cannot move (`1/1`: every local model) is left out: it would only
    take room on the row, never be news."""
    pairs = [(name, lim) for name, lim in limiters if lim.max_limit > lim.min_limit]
    if not pairs:
        return ""
    if len(pairs) == 1:
        return f"limit {pairs[0][1].describe()}"
    return "limits " + " · ".join(f"{_short(name)} {lim.describe()}" for name, lim in pairs)


def _short(name: str) -> str:
    """`http://127.0.0.1:8000/v1` → `127.0.0.1:8000`."""
    host = name.split("://", 1)[-1]
    return host.split("/", 1)[0]


class RatePacer:
    """Spaces calls `60 / per_minute` seconds apart, for a model whose documented rate is
    requests per minute (OpenRouter's `:free` variants). `clock` and `sleep` are injectable
    so the pacing can be checked without waiting."""

    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.interval_s = 60.0 / per_minute
        self._clock = clock
        self._sleep = sleep
        self._next_at: float | None = None

    async def wait(self) -> None:
        """Return when the next call may go: claim its slot, then sleep until it comes."""
        now = self._clock()
        slot = now if self._next_at is None else max(now, self._next_at)
        self._next_at = slot + self.interval_s
        if slot > now:
            await self._sleep(slot - now)
