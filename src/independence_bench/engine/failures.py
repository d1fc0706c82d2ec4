"""What failed in a run, told once per reason: grouping, the summary lines, and the full list.

An item or judgment that still fails after every retry is recorded with its error (conversations
in the store, judgments in the run's summary). Errors from servers can be long — a pydantic
validation dump is dozens of lines — and the same reason repeats for every item, so the screen
gets one line per distinct reason with its count and one example item, and `aib runs --failed`
prints every failed conversation with its full error. `EXIT_SOME_FAILED` is the exit status of a
command that finished but left something failed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from independence_bench.store.store import ItemRecord
from independence_bench.text.outputs import terminal_text

EXIT_SOME_FAILED = 3
"""`aib run` / `aib judge` finished, but conversations or judgments failed (0: none did;
2: bad input, nothing run)."""
REASON_CHARS = 160
_TURN_PREFIX = re.compile(r"^turn \d+: ")


@dataclass(frozen=True)
class Failure:
    """One conversation or judgment that failed, and why."""

    item: str
    """Human-readable: `model run 1 scenario`, or `judge J on scenario`."""
    error: str
    """The full error, as stored or raised."""


def reason_of(error: str) -> str:
    """The short reason of an error: its first line, without the turn number, at most 160
    chars, every control character (a server's escape sequence) made visible."""
    first = error.strip().splitlines()[0] if error.strip() else "(no error text)"
    first = terminal_text(first)
    reason = _TURN_PREFIX.sub("", first).rstrip(" :")
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def group_failures(failures: Sequence[Failure]) -> dict[str, list[Failure]]:
    """Reason -> its failures in the order given; the most frequent reason first."""
    groups: dict[str, list[Failure]] = {}
    for failure in failures:
        groups.setdefault(reason_of(failure.error), []).append(failure)
    return dict(sorted(groups.items(), key=lambda pair: -len(pair[1])))


def render_failure_summary(failures: Sequence[Failure], *, what: str) -> list[str]:
    """The end of a command's output: a header, then one line per reason (none: no failure)."""
    if not failures:
        return []
    lines = [f"{len(failures)} {what} failed (`aib runs --failed` lists each with its full error):"]
    for reason, group in group_failures(failures).items():
        lines.append(f"  {len(group)} × {reason}  (e.g. {terminal_text(group[0].item)})")
    return lines


def render_failed_items(items: Sequence[ItemRecord]) -> str:
    """`aib runs --failed`: every failed conversation, with its full stored error."""
    if not items:
        return "no failed conversations in the store"
    blocks = []
    for item in items:
        where = (
            f"{item.run.model_label}  {item.run.suite_id} run {item.run.run_index}  "
            f"{item.variant}/{item.mode}  {item.scenario_id}"
        )
        error = item.error or "(no error text)"
        blocks.append(terminal_text(f"{where}\n  {error.replace(chr(10), chr(10) + '  ')}"))
    groups = group_failures([Failure(_label(i), i.error or "") for i in items])
    summary = [f"{len(items)} failed conversations, {len(groups)} distinct reasons:"]
    # reason_of has already made every reason visible
    summary += [f"  {len(group)} × {reason}" for reason, group in groups.items()]
    return "\n\n".join(blocks) + "\n\n" + "\n".join(summary)


def _label(item: ItemRecord) -> str:
    return f"{item.run.model_label} run {item.run.run_index} {item.scenario_id}"
