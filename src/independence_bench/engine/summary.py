"""What the engine reports while and after it runs: progress events and the pass's counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from independence_bench.engine.failures import Failure


class ProgressSink(Protocol):
    """Receives one event per finished unit of work (the CLI draws a progress bar from them)."""

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        """What is to come: conversations, judgments, and model calls (judge repairs aside)."""
        ...

    def advance(self, event: str) -> None:
        """`event` is one of: item_done, item_cached, item_failed, item_skipped, judged,
        judge_cached, judge_unscored, judge_failed, judge_skipped (skipped: the cost cap), and
        per model call call_started, then call_done, call_failed or call_abandoned (stopped,
        or taken over by another process), or call_cached."""
        ...


@dataclass
class RunSummary:
    """What one engine pass did; counts are of items and judgments, not of HTTP calls."""

    items_done: int = 0
    items_cached: int = 0
    items_failed: int = 0
    judged: int = 0
    judge_cached: int = 0
    judge_unscored: int = 0
    judge_failed: int = 0
    calls: int = 0
    cached_calls: int = 0
    failures: list[Failure] = field(default_factory=list)
    items_skipped: int = 0
    """Not started because of the cost cap; the same command resumes them."""
    judge_skipped: int = 0
