"""Several servers for one model: spreading its calls across them, each within its own limit.

A model listed with several base URLs (`base_urls` in models.yaml, e.g. vLLM or llama.cpp
replicas serving the same weights) is served by one `EndpointGroup`. The group is a
`ModelClient` whose members are the pool's ordinary endpoints, one per URL, so a server's limit
is shared with every other model and judge that uses it. Each attempt of a call goes to the
member with the most free room under its limiter (ties in turn) and runs inside that member's
limiter, so no server gets more than its limit while another has room, and a 429 lowers the
limit of the server that sent it.

A member that failed without an HTTP answer (refused, reset, timed out) is passed over for a
cool-down that doubles with each further such failure, for as long as another member is not
cooling down; an answer ends it. Retries of a call are new attempts, so they move to a healthy
server instead of spending every attempt on a dead one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest

if TYPE_CHECKING:
    from independence_bench.clients.endpoints import Endpoint

COOL_DOWN_S = 1.0
"""Cool-down after a member's first failure without an answer; doubles with each further one."""
MAX_COOL_DOWN_S = 60.0


@dataclass
class _Health:
    failures_in_row: int = 0
    avoid_until: float = 0.0


class EndpointGroup:
    """A `ModelClient` over several endpoints that serve the same models."""

    def __init__(
        self, members: Sequence[Endpoint], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if len(members) < 2:
            raise ValueError("an endpoint group needs at least two members")
        self.members = tuple(members)
        self._health = [_Health() for _ in self.members]
        self._clock = clock
        self._turn = 0

    @property
    def name(self) -> str:
        return " | ".join(member.name for member in self.members)

    @property
    def capacity(self) -> int:
        """The members' configured limits together: the most calls the group has in flight."""
        return sum(member.limiter.max_limit for member in self.members)

    def pick(self) -> int:
        """The index of the member for the next attempt: most free room, ties in turn."""
        now = self._clock()
        count = len(self.members)
        usable = [i for i in range(count) if self._health[i].avoid_until <= now]
        if not usable:  # all cooling down: the one that has waited longest gets the attempt
            return min(range(count), key=lambda i: self._health[i].avoid_until)
        start = self._turn
        self._turn = (self._turn + 1) % count
        return max(usable, key=lambda i: (_room(self.members[i]), -((i - start) % count)))

    async def complete(self, request: CompletionRequest) -> Completion:
        index = self.pick()
        member = self.members[index]
        try:
            completion = await member.send(request)
        except ClientError as exc:
            if exc.status is None:
                self._no_answer(index)
            else:
                self._answered(index)
            raise
        self._answered(index)
        return completion

    def _no_answer(self, index: int) -> None:
        health = self._health[index]
        health.failures_in_row += 1
        pause = min(MAX_COOL_DOWN_S, COOL_DOWN_S * 2.0 ** (health.failures_in_row - 1))
        health.avoid_until = self._clock() + pause

    def _answered(self, index: int) -> None:
        self._health[index] = _Health()

    async def list_models(self) -> list[dict[str, Any]]:
        """The models every member lists (members that keep no list are skipped).

        Raises the first member's `ClientError`, naming the member, when one cannot list.
        """
        common: dict[str, dict[str, Any]] | None = None
        for member in self.members:
            lister = getattr(member.client, "list_models", None)
            if lister is None:
                continue
            try:
                entries: list[dict[str, Any]] = await lister()
            except ClientError as exc:
                raise type(exc)(
                    f"{member.name}: {exc}",
                    retryable=exc.retryable,
                    status=exc.status,
                    retry_after=exc.retry_after,
                ) from exc
            listed = {str(e.get("id")): e for e in entries}
            common = listed if common is None else {k: common[k] for k in common if k in listed}
        return list(common.values()) if common is not None else []

    async def aclose(self) -> None:
        """Nothing to release: the members are the pool's endpoints, closed by the pool."""


def _room(member: Endpoint) -> int:
    return member.limiter.limit - member.limiter.in_flight
