"""A rich progress display for runs: bars for conversations and judgments, and a calls row.

It implements the engine's `ProgressSink`; the engine itself never prints. The conversations
row also shows each endpoint's current adaptive concurrency limit (`limit 12/16`), read at
every refresh, so a limit backing off under 429s is visible while it happens. The calls row
shows the model calls in flight (sent, with how long the oldest has waited), answered and read
from the store, and an ETA in the elapsed column's h:mm:ss: the calls still to make times the
wall time per call answered after the first one (`call_eta`, `RichProgress.eta`), so on a slow
local model something moves with every call, not only when a whole conversation ends.

The first answered call is left out of the rate: on a local model it alone reads the shared
system prompt cold (on the README's offline run it took 376 s where the next took 9 s, under
load), and counting it made the first ETA four times too long. The rate is shown once it spans
at least as long as that first call took (so a burst of concurrent answers arriving together
does not pass for the rate) and, when the run judges, once a judgment has finished (a judge call
on the 1.5B takes ten subject calls' time): `benchmarks/eta_accuracy.py` measures the result.

Events only count; the bars are brought up to date at most every `RENDER_INTERVAL_S` (rich
redraws ten times a second anyway) and once more at the end, and not at all off a terminal.
Formatting the rows for each of a run's thousands of events cost more CPU than storing the
calls' replies.
"""

from __future__ import annotations

import time
from collections.abc import Callable

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
from rich.table import Column
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


def call_eta(elapsed_s: float, answered: int, remaining: int) -> float | None:
    """Seconds left: `remaining` calls at the mean wall time per answered call so far; None
    before the first answer. Calls run concurrently, so this is wall time per call, not
    latency."""
    if answered <= 0:
        return None
    return elapsed_s / answered * max(0, remaining)


def clock_time(seconds: float) -> str:
    """`h:mm:ss`, the format of rich's elapsed column beside it: one format for both."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def format_eta(seconds: float | None, *, rough: bool = False) -> str:
    """The calls row's ETA; `rough` marks the first figure, from the first answer alone."""
    if seconds is None:
        return "ETA –"
    return f"ETA {'~' if rough else ''}{clock_time(seconds)}"


class CountsColumn(ProgressColumn):
    """A row's counts and, on the conversations row, the endpoints' current concurrency limits
    (read at every redraw: a limit backs off inside a retried call, with no event).

    The only cell that gives way on a narrow terminal, and it never wraps: past the width it
    ends in "…" instead of pushing a row onto several lines (the ETA comes first, so it stays)."""

    def __init__(self, limits: Callable[[], str]) -> None:
        # The one column rich may narrow (the others are no_wrap); the text itself never wraps.
        super().__init__(table_column=Column(overflow="ellipsis"))
        self._limits = limits

    def render(self, task: Task) -> Text:
        counts = Text(str(task.fields.get("counts", "")))
        limits = self._limits() if task.fields.get("limits") else ""
        if limits:
            counts.append(("  " if counts else "") + limits, style="cyan")
        counts.no_wrap = True
        counts.overflow = "ellipsis"
        return counts


BAR_WIDTH = 20
"""Columns of each bar: with the name, count and elapsed time it leaves a 100-column terminal
about 45 for the counts."""
PLAIN_INTERVAL_S = 30.0
"""On a non-terminal (a log, a pipe), seconds between plain progress lines."""
RENDER_INTERVAL_S = 0.1
"""On a terminal, seconds between updates of the bars from the counts."""


class RichProgress:
    """Progress bars on stderr; on a non-terminal, a plain line every `PLAIN_INTERVAL_S`.

    A log or a pipe cannot redraw bars: rich would print one frame at the end, cut to 80
    columns. There the same counts go out as ordinary lines instead, so a long run shows that
    it is moving, and the last line is the final count.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        limits: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        stored_s_per_call: float | None = None,
    ) -> None:
        """`stored_s_per_call`: the mean time the store's calls of this run's models took
        (`store/latency.py`), so a resumed run shows a rough ETA before its first answer."""
        self._stored_s_per_call = stored_s_per_call
        self._clock = clock
        """Seconds, for the ETA and the intervals between updates (tests pass a fake one)."""
        self._console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description:<13}", table_column=Column(no_wrap=True)),
            BarColumn(bar_width=BAR_WIDTH, table_column=Column(no_wrap=True)),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            CountsColumn(limits or str),
            TimeElapsedColumn(),
            console=self._console,
            transient=False,
            disable=not self._console.is_terminal,
        )
        self._plain = not self._console.is_terminal
        self._last_line: float | None = None
        """When the last plain line was printed; None: none yet, the next event prints one."""
        self._last_render = 0.0
        self._items: TaskID | None = None
        self._judgments: TaskID | None = None
        self._calls: TaskID | None = None
        self._counts: dict[str, dict[str, int]] = {"items": {}, "judgments": {}}
        self._planned_calls = 0
        self._in_flight = 0
        self._sent_at: list[float] = []
        """When each call now in flight was sent, oldest first (the oldest shows its wait)."""
        self._most_in_flight = 0
        self._answered = 0
        self._cached = 0
        self._failed = 0
        self._started: float | None = None
        self._first_answer: float | None = None
        self._judging = False
        """Whether judgments are planned and none has finished yet (the ETA waits for one)."""

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        if not self._plain:
            self._render()
        self._progress.stop()
        if self._plain:
            self._plain_line()

    def _plain_line(self) -> None:
        self._last_line = self._clock()
        parts = [f"calls: {self._call_text()}"] if self._planned_calls else []
        for group, task in (("conversations", self._items), ("judgments", self._judgments)):
            if task is not None:
                counts = self._counts["items" if group == "conversations" else group]
                total = self._progress.tasks[task].total
                part = f"{group} {sum(counts.values())}/{total:g}"
                if counts:
                    part += f" ({_outcomes(counts, ', ')})"
                parts.append(part)
        if parts:
            self._console.print("progress: " + "; ".join(parts), soft_wrap=True, markup=False)

    def _maybe_show(self) -> None:
        now = self._clock()
        if self._plain:
            if self._last_line is None or now - self._last_line >= PLAIN_INTERVAL_S:
                self._plain_line()
        elif now - self._last_render >= RENDER_INTERVAL_S:
            self._render()

    def _render(self) -> None:
        """Bring the bars up to date with the counts."""
        self._last_render = self._clock()
        if self._calls is not None:
            finished = self._answered + self._cached
            self._progress.update(self._calls, completed=finished, counts=self._call_text())
        for task, group in ((self._items, "items"), (self._judgments, "judgments")):
            if task is not None:
                counts = self._counts[group]
                total = sum(counts.values())
                self._progress.update(task, completed=total, counts=_outcomes(counts, "  "))

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        self._planned_calls = calls
        self._judging = judgments > 0
        if calls:
            self._calls = self._progress.add_task("calls", total=calls, counts=self._call_text())
        if items:
            self._items = self._progress.add_task(
                "conversations", total=items, counts="", limits=True
            )
        if judgments:
            self._judgments = self._progress.add_task("judgments", total=judgments, counts="")

    def advance(self, event: str) -> None:
        if event.startswith("call_"):
            self._call_event(event)
        elif event in _ITEM_EVENTS:
            self._bump("items", _ITEM_EVENTS[event])
        elif event in _JUDGE_EVENTS:
            self._bump("judgments", _JUDGE_EVENTS[event])
            self._judging = False
        self._maybe_show()

    def _call_event(self, event: str) -> None:
        if event == "call_started":
            self._in_flight += 1
            self._most_in_flight = max(self._most_in_flight, self._in_flight)
            self._sent_at.append(self._clock())
            if self._started is None:
                self._started = self._clock()
        elif event == "call_cached":
            self._cached += 1
        else:
            self._in_flight -= 1
            if self._sent_at:
                self._sent_at.pop(0)
            if event == "call_abandoned":
                return  # stopped or taken over by another process: neither answered nor failed
            if event == "call_done":
                self._answered += 1
                if self._first_answer is None:
                    self._first_answer = self._clock()
            else:
                self._failed += 1

    def eta(self) -> float | None:
        """Seconds the calls still to make will take, as the calls row shows it now: at the
        rate of the calls answered after the first, once that rate spans as long as the first
        call took and (when the run judges) includes a finished judgment; None until then."""
        if self._first_answer is None or self._started is None or self._judging:
            return None
        since = self._clock() - self._first_answer
        if since < self._first_answer - self._started:
            return None
        remaining = self._planned_calls - self._answered - self._cached
        return call_eta(since, self._answered - 1, remaining)

    def rough_eta(self) -> float | None:
        """Before `eta` can be given, a first figure from the first answer alone (before that,
        from the stored calls' mean time): the calls left at that wall time each, shared by as
        many calls as ran at once. Rough (the first call reads the prompt cold, a judge call
        takes longer), so it is shown as `~`."""
        remaining = self._planned_calls - self._answered - self._cached
        if self._first_answer is None or self._started is None:
            if self._stored_s_per_call is None or not self._planned_calls:
                return None
            return self._stored_s_per_call * max(0, remaining) / max(1, self._most_in_flight)
        first = self._first_answer - self._started
        if first <= 0:
            return None
        return first * max(0, remaining) / max(1, self._most_in_flight)

    def _call_text(self) -> str:
        eta = self.eta()
        shown = format_eta(eta) if eta is not None else format_eta(self.rough_eta(), rough=True)
        text = f"{shown}  {self._in_flight} in flight"
        if self._sent_at:  # what is under way, and for how long: a slow call is not a hang
            waited = clock_time(self._clock() - self._sent_at[0])
            text += f" for {waited}" if self._in_flight == 1 else f", oldest {waited}"
        text += f"  {self._answered} answered  {self._cached} cached"
        return text + (f"  {self._failed} failed" if self._failed else "")

    def _bump(self, group: str, outcome: str) -> None:
        counts = self._counts[group]
        counts[outcome] = counts.get(outcome, 0) + 1


def _outcomes(counts: dict[str, int], separator: str) -> str:
    """`cached 1  done 2`: each outcome seen so far with its count, by name."""
    return separator.join(f"{name} {n}" for name, n in sorted(counts.items()))
