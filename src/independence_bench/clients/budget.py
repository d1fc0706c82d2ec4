"""The money guard of `aib run --max-cost`: prices per token, and a cap on spending.

A `CostGuard` sees every API call before it is sent. It reserves the call's worst-case cost —
its prompt (characters / 4 tokens, the usual rough rule) at the prompt price plus `max_tokens`
at the completion price. A call whose reservation would take what this session has spent plus
every reservation in flight past the cap is not sent: it waits for calls in flight to settle
(their real cost is usually far below the worst case), and when nothing is left in flight and
it still does not fit, the guard stops for good — every later call is refused at once, rather
than squeezing small calls in. The engine leaves refused conversations and judgments
unwritten, so the same command resumes them. When a call returns, its reservation is replaced
by its real cost: the endpoint's own figure when it reports one, else its token counts at the
known prices, else the reservation itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass

from independence_bench.clients.protocol import Completion, CompletionRequest

CHARS_PER_TOKEN = 4
"""Rough characters per token for English prose and JSON; good to about ±25%."""


@dataclass(frozen=True)
class Price:
    """USD per token (and per request), and where the figures came from (`aib estimate`).

    OpenRouter's model list prices more than tokens in and out (`pricing` in its models API
    reference): `request`, a fee per call; `internal_reasoning`, reasoning tokens when they
    are priced apart from other output; `input_cache_read` / `input_cache_write`, prompt tokens
    read from or written to a provider's cache. None: not priced apart."""

    prompt: float
    completion: float
    source: str
    request: float = 0.0
    reasoning: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, reasoning_tokens: int = 0) -> float:
        """One call's cost; `reasoning_tokens` (part of `completion_tokens`) at the reasoning
        price when there is one."""
        reasoning = min(reasoning_tokens, completion_tokens) if self.reasoning is not None else 0
        output = (completion_tokens - reasoning) * self.completion
        return (
            prompt_tokens * self.prompt
            + output
            + reasoning * (self.reasoning or 0.0)
            + self.request
        )

    @property
    def output_max(self) -> float:
        """The dearest a completion token can be: output or reasoning, whichever costs more."""
        return max(self.completion, self.reasoning or 0.0)


class BudgetExhausted(Exception):
    """Raised instead of sending a call that would pass the cost cap."""


def prompt_tokens_of(request: CompletionRequest) -> int:
    """Estimated prompt tokens of a request: its messages and tools as JSON, / 4."""
    text = json.dumps([*request.messages, *request.tools], ensure_ascii=False)
    return len(text) // CHARS_PER_TOKEN + 1


@dataclass(frozen=True)
class Reservation:
    """The worst-case cost set aside for one call of the model configuration `label`."""

    label: str
    usd: float


class CostGuard:
    """Stops new calls once spent + in-flight reservations would pass `cap_usd`.

    `prices` maps a model configuration's label to its price; every configuration the run
    calls (models and judge) must have one.
    """

    def __init__(self, cap_usd: float, prices: Mapping[str, Price]) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.stopped = False
        self.refused = 0
        """Calls not sent because of the cap."""
        self._prices = dict(prices)
        self._settled = asyncio.Event()

    async def reserve(self, label: str, request: CompletionRequest) -> Reservation:
        """Set aside a call's worst-case cost (waiting for calls in flight to settle when it
        does not fit yet), or raise `BudgetExhausted`."""
        price = self._prices[label]
        tokens = request.max_tokens or 0
        worst = price.cost(prompt_tokens_of(request), tokens, tokens if price.reasoning else 0)
        while not self.stopped:
            if self.spent_usd + self.reserved_usd + worst <= self.cap_usd:
                self.reserved_usd += worst
                return Reservation(label, worst)
            if self.reserved_usd <= 0.0:
                self.stopped = True
                break
            settled = self._settled
            await settled.wait()
        self.refused += 1
        raise BudgetExhausted

    def settle(self, reservation: Reservation, completion: Completion) -> float:
        """Replace a reservation by the real cost of the call's reply; returns that cost."""
        self.release(reservation)
        if completion.cost_usd is not None:
            cost = completion.cost_usd
        elif completion.prompt_tokens is not None and completion.completion_tokens is not None:
            price = self._prices[reservation.label]
            cost = price.cost(
                completion.prompt_tokens,
                completion.completion_tokens,
                completion.reasoning_tokens or 0,
            )
        else:
            cost = reservation.usd  # the endpoint said nothing: assume the worst case
        self.spent_usd += cost
        return cost

    def release(self, reservation: Reservation) -> None:
        """Drop a reservation (the call failed without a reply, or is being settled)."""
        self.reserved_usd = max(0.0, self.reserved_usd - reservation.usd)
        if self.reserved_usd < 1e-12:
            self.reserved_usd = 0.0
        # Wake the calls waiting for room; each re-checks against the new totals.
        self._settled.set()
        self._settled = asyncio.Event()
