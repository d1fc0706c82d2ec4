"""`aib` commands whose retries wait a thousandth of the backoff, for tests of what is retried.

The CLI has no retry option: `aib run` backs off 0.5-1 s before a second attempt
(`clients/endpoints.py: RetryPolicy`), which a test that plays one cut reply per run pays for
nothing. `shorten_backoff` keeps every attempt, the jitter and a server's `Retry-After` as they
are and divides only the exponential backoff; tests of the backoff itself do not use it.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from independence_bench.clients.endpoints import RetryPolicy

BACKOFF_SCALE = 0.001


def shorten_backoff(patch: pytest.MonkeyPatch) -> None:
    """Every `RetryPolicy` backs off `BACKOFF_SCALE` times as long until `patch` is undone."""
    original = RetryPolicy.delay

    def delay(
        policy: RetryPolicy, attempt: int, retry_after: float | None, rng: random.Random
    ) -> float:
        scaled = replace(policy, base_delay_s=policy.base_delay_s * BACKOFF_SCALE)
        return original(scaled, attempt, retry_after, rng)

    patch.setattr(RetryPolicy, "delay", delay)
