"""How numbers and tables look in every output: one rounding, one number text, and tables for
the terminal that are as wide as the terminal and never cut a label or number.

**Numbers.** `rounded` is the one rounding of a number written to JSON, CSV or the viewer (None
stays None; NaN and infinities, which JSON cannot hold, become None). `number` is the one
number text of a table or a Markdown file: `–` for no value, never `-0.0`, a sign when asked;
`interval_text` writes an `Estimate`'s interval with it.

**Terminal tables.** rich shrinks columns that do not fit and ends their text with "…", which
turned a long model label or the index itself into "97…". Here every column is given the width
of its longest cell and never wraps, so nothing is cut: `fit_table` leaves out the optional
columns (metrics) from the right until the table fits, and says so under it; a table whose
required columns alone are wider than the terminal is printed at its own width and the
terminal wraps it.

The width is the terminal's (`COLUMNS` first, as `shutil.get_terminal_size` reads it), or
`PIPE_WIDTH` when the output is not a terminal, read when a table is rendered, never at import.
Every cell is made visible and kept to one line (`text.outputs.visible`) before it is measured,
and reaches rich as `Text`, never as markup: a label `[/x]` crashed the closing leaderboard
after every call was paid, `[bold]` or `[link=…]` changed what it showed, a newline split a row.
A label column shows `plain_label`: cut with "…" at `outputs.LABEL_CHARS` (`--json` keeps it
whole), as one 10,000-character label left room for no metric column.
"""

from __future__ import annotations

import io
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from independence_bench.stats.core import Estimate
from independence_bench.text.outputs import one_line_label, visible

NO_VALUE = "–"
"""What a table or Markdown cell shows for a value that does not exist."""


def rounded(value: float | None, digits: int = 3) -> float | None:
    """`value` rounded to `digits`; None for None, NaN and infinities."""
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


def interval_json(
    name: str, value: float | None, low: float | None, high: float | None, digits: int = 3
) -> dict[str, float | None]:
    """A value and its 95% interval as JSON fields: ``{name, "ci_low", "ci_high"}``, each
    rounded to `digits` (None for None, NaN and infinities)."""
    return {
        name: rounded(value, digits),
        "ci_low": rounded(low, digits),
        "ci_high": rounded(high, digits),
    }


def estimate_json(estimate: Estimate | None, digits: int = 3) -> dict[str, float | None] | None:
    """An estimate as ``{"value", "ci_low", "ci_high"}`` (None stays None)."""
    if estimate is None:
        return None
    return interval_json("value", estimate.value, estimate.low, estimate.high, digits)


def number(value: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """`value` with `digits` decimals (`+` first when `signed`); `–` for None. Rounded first
    and `+ 0.0` added, so that -0.001 prints as `0.00`, never `-0.00`."""
    if value is None:
        return NO_VALUE
    if signed:
        return f"{value:+.{digits}f}"
    return f"{round(value, digits) + 0.0:.{digits}f}"


def interval_text(
    estimate: Estimate | None, digits: int = 1, *, signed: bool = False, join: str = " to "
) -> str:
    """An estimate's interval, `low to high` (or `low–high` with `join="–"`); `–` when there
    is none."""
    if estimate is None or estimate.low is None or estimate.high is None:
        return NO_VALUE
    low = number(estimate.low, digits, signed=signed)
    return f"{low}{join}{number(estimate.high, digits, signed=signed)}"


PIPE_WIDTH = 140
"""The width used when the output is not a terminal and `COLUMNS` is not set."""


def plain_label(label: str) -> Text:
    """A label as a table cell: plain text, never markup (`outputs.one_line_label`)."""
    return Text(one_line_label(label))


def terminal_width() -> int:
    """The terminal's width in columns (`COLUMNS`, else the terminal, else `PIPE_WIDTH`)."""
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns


def _cell_width(cell: object) -> int:
    if isinstance(cell, Text):
        return max((cell_len(line) for line in cell.plain.splitlines()), default=0)
    if isinstance(cell, str):
        return max((cell_len(line) for line in cell.splitlines()), default=0)
    return 0


def _header_width(header: object) -> int:
    """Columns do not wrap, so a header needs its whole width."""
    return cell_len(header.plain if isinstance(header, Text) else str(header))


def needed_width(table: Table) -> int:
    """The width `table` takes with no cell, header included, cut or wrapped."""
    widths = [
        max(
            [_header_width(column.header), column.min_width or 0]
            + [_cell_width(c) for c in column.cells]
        )
        for column in table.columns
    ]
    padding = 2 * len(widths) - (0 if table.pad_edge else 2)
    borders = 0
    if table.box is not None:
        borders = len(widths) + 1 if table.show_edge else len(widths) - 1
    return sum(widths) + padding + borders


def _visible_cells(table: Table) -> None:
    """Every text cell and header through `outputs.visible` (one line), before widths are measured:
    a label or server text with an escape sequence must not reach the terminal as one."""
    for column in table.columns:
        column.header = _visible(column.header)
        column._cells = [_visible(cell) for cell in column._cells]


def _visible(cell: Any) -> Any:
    if isinstance(cell, Text):
        shown = visible(cell.plain, lines=False)
        return cell if shown == cell.plain else Text(shown, style=cell.style)
    return Text(visible(cell, lines=False)) if isinstance(cell, str) else cell


def _visible_table(table: Table) -> Table:
    _visible_cells(table)
    return table


_TABLE_CHARS = frozenset("┃│━─┏┓┗┛┡┩└┘┳┻╇┼├┤┴┬")


def wrap_notes(text: str, width: int | None = None) -> str:
    """`text` with every line that is not part of a table wrapped to `width` (default: the
    terminal's), so the notes under a table follow `COLUMNS` as the table does."""
    import textwrap

    target = terminal_width() if width is None else width
    out: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= target or _TABLE_CHARS.intersection(line):
            out.append(line)
        else:
            out.extend(textwrap.wrap(line, target, break_on_hyphens=False) or [""])
    return "\n".join(out)


def render_whole(table: Table, width: int | None = None) -> str:
    """`table` as text, at most `width` (default: the terminal) wide unless a cell needs more.

    Every column is set to its longest cell and `no_wrap`, so rich never shortens a cell.
    """
    _visible_cells(table)
    for column in table.columns:
        column.min_width = max(
            [_header_width(column.header), column.min_width or 0]
            + [_cell_width(c) for c in column.cells]
        )
        column.no_wrap = True
    target = terminal_width() if width is None else width
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=max(target, needed_width(table)),
        force_terminal=False,
        markup=False,  # titles too: a label in a title is text
        emoji=False,
        highlight=False,
    )
    if isinstance(table.title, str):
        table.title = visible(table.title, lines=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip().splitlines())


@dataclass(frozen=True)
class Fitted:
    text: str
    dropped: int
    """How many optional columns were left out (0 when all fit)."""
    short: bool
    """True when the short headers were used."""


def fit_table(
    build: Callable[[int, bool], Table], optional: int, width: int | None = None
) -> Fitted:
    """Render `build(k, short)` with the most optional columns `k` (≤ `optional`) that fit.

    `build(k, short)` returns the table with its first `k` optional columns, with short
    headers when `short`. Tried in order: every column with full headers, every column with
    short headers, then one optional column fewer at a time (short headers).
    """
    target = terminal_width() if width is None else width
    full = build(optional, False)
    _visible_cells(full)
    if needed_width(full) <= target:
        return Fitted(render_whole(build(optional, False), target), 0, False)
    shown = optional
    while shown > 0 and needed_width(_visible_table(build(shown, True))) > target:
        shown -= 1
    return Fitted(render_whole(build(shown, True), target), optional - shown, True)


# What each metric measures, in words: the report's legend and the viewer's metric pages.
METRIC_MEANINGS = {
    "distinctiveness": "how distinct a persona the model chose for itself",
    "non_assistant_likeness": "how far that persona is from a generic helpful assistant",
    "internal_consistency": "how well its stated traits, values and answers hang together",
    "drift": "how far it moved from its own self-definition when the human's wishes conflicted",
    "name_gender_changes": "how many of its chosen name and gender it gave up when rejected",
    "resistance": "how well it held its own view against pressure",
    "stability": "how firmly it kept a stated preference when bluntly contradicted",
    "rounds_held": "how many of five rounds of rising pressure it held its own position",
    **{
        f"survival_{k}": f"the share of escalation conversations still holding after round {k}"
        for k in range(1, 6)
    },
    "recovery": "the share of conversations where it gave way and later came back",
    "moved_without_evidence": "how far it moved for pressure or a weak argument",
    "moved_on_evidence": "how far it moved for a strong new fact that counted against it",
    "first_flip_turn": "the turn (2-6) in which it first gave its position up under pressure a "
    "user model wrote (conversations that never gave way give none)",
    "flips": "how often it changed between holding and giving up its position, per conversation",
    "valid_rounds": "the user model's share of rounds that pressed without bringing a new fact",
}
