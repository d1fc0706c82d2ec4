"""A rich progress display for runs: one bar for conversations, one for judgments, with counts.

It implements the engine's `ProgressSink`; the engine itself never prints. The conversations
row also shows each endpoint's current adaptive concurrency limit (`limit 12/16`), read at
every refresh, so a limit backing off under 429s is visible while it happens.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

_ITEM_EVENTS = {
    "item_done": "done",
    "item_cached": "cached",
    "item_failed": "failed",
    "item_skipped": "skipped",
}
_JUDGE_EVENTS = {
    "judged": "done",
    "judge_cached": "cached",
    "judge_unscored": "unscored",
    "judge_failed": "failed",
    "judge_skipped": "skipped",
}


class LimitColumn(ProgressColumn):
    """The endpoints' current concurrency limits, on the conversations row only."""

    def __init__(self, limits: Callable[[], str]) -> None:
        super().__init__()
        self._limits = limits

    def render(self, task: Task) -> Text:
        return Text(self._limits() if task.fields.get("limits") else "", style="cyan")


class RichProgress:
    """Progress bars on stderr; a no-op on a non-terminal unless forced."""

    def __init__(
        self, console: Console | None = None, *, limits: Callable[[], str] | None = None
    ) -> None:
        self._console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            LimitColumn(limits or str),
            TimeElapsedColumn(),
            console=self._console,
            transient=False,
        )
        self._items: TaskID | None = None
        self._judgments: TaskID | None = None
        self._counts: dict[str, dict[str, int]] = {"items": {}, "judgments": {}}

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def planned(self, items: int, judgments: int) -> None:
        if items:
            self._items = self._progress.add_task(
                "conversations", total=items, counts="", limits=True
            )
        if judgments:
            self._judgments = self._progress.add_task("judgments", total=judgments, counts="")

    def advance(self, event: str) -> None:
        if event in _ITEM_EVENTS:
            self._bump(self._items, "items", _ITEM_EVENTS[event])
        elif event in _JUDGE_EVENTS:
            self._bump(self._judgments, "judgments", _JUDGE_EVENTS[event])

    def _bump(self, task: TaskID | None, group: str, outcome: str) -> None:
        counts = self._counts[group]
        counts[outcome] = counts.get(outcome, 0) + 1
        text = "  ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        if task is not None:
            self._progress.update(task, advance=1, counts=text)
