"""A rich progress display for runs: one bar for conversations, one for judgments, with counts.

It implements the engine's `ProgressSink`; the engine itself never prints.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

_ITEM_EVENTS = {"item_done": "done", "item_cached": "cached", "item_failed": "failed"}
_JUDGE_EVENTS = {
    "judged": "done",
    "judge_cached": "cached",
    "judge_unscored": "unscored",
    "judge_failed": "failed",
}


class RichProgress:
    """Progress bars on stderr; a no-op on a non-terminal unless forced."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
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
            self._items = self._progress.add_task("conversations", total=items, counts="")
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
