"""The one sanitiser per output kind: no control sequence reaches a terminal, a Markdown file,
a CSV cell or an SVG chart, and a JSON export can always be written.

Labels, error texts and replies are untrusted: a server's error can carry `ESC [2J` (clear the
screen) or `ESC ]0;…BEL` (set the window title), a label can carry a NUL that makes an SVG
invalid XML, a bidi override reorders what a reader sees. Every such code point is written as
visible ASCII instead — `\\x1b`, `\\u202e`, `\\udc80` — so the text stays legible and the
original is recoverable by eye. Unsafe are: C0 controls (newline and tab are kept where the
output kind allows lines), DEL, C1 controls, lone surrogates, bidi embeddings, overrides,
isolates and marks, the line and paragraph separators, and the non-characters U+FFFE/U+FFFF.
Each function below is the only way its output kind is written from untrusted text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 without tab and newline, DEL, C1
    "\ud800-\udfff"  # lone surrogates (a pair is one code point in Python text)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, isolates
    "\u2028\u2029\ufffe\uffff"
)
_UNSAFE_KEEP_LINES = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, lines: bool = True) -> str:
    """`text` with every unsafe code point written as a visible escape; with `lines=False`
    newline and tab are escaped too (one line)."""
    pattern = _UNSAFE_KEEP_LINES if lines else _UNSAFE_ONE_LINE
    return pattern.sub(_escape, text)


LABEL_CHARS = 100
"""Characters of a label a table or list shows; longer ones end in "…" (real labels, even
`provider/model+host@effort-t0.2`, stay well under it; one of 10,000 left no metric column)."""


def one_line_label(label: str, limit: int = LABEL_CHARS) -> str:
    """A label for a table row: one line with every control visible, cut to `limit`
    characters with "…". JSON outputs keep the label whole."""
    shown = visible(label, lines=False)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def terminal_text(text: object) -> str:
    """Text for a terminal: lines and tabs kept, every other control escaped."""
    return visible(str(text))


def terminal_json(text: str) -> str:
    """JSON text for a terminal: every unsafe code point written as a `\\uXXXX` escape, which
    is the same value to a JSON reader (unsafe code points can only sit inside JSON strings)."""
    return _UNSAFE_KEEP_LINES.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def csv_cell(value: object) -> object:
    """A CSV cell: text with controls escaped (newlines kept; the writer quotes them); numbers
    and None as they are."""
    return visible(value) if isinstance(value, str) else value


_MD_SPECIAL = set("\\`*_[]|~#!")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: object) -> str:
    """Untrusted text as literal Markdown on one line: `<`, `>` and `&` as HTML entities (so no
    renderer sees a tag), other Markdown specials backslash-escaped, control characters made
    visible (`visible`)."""
    flat = visible(" ".join(str(text).split()), lines=False)
    return "".join(_HTML_ENTITIES.get(c) or (f"\\{c}" if c in _MD_SPECIAL else c) for c in flat)


def xml_text(text: str) -> str:
    """Text for an SVG/XML document: only characters XML 1.0 allows (the writer escapes
    `<`, `>` and `&`)."""
    return visible(text)


def export_value(value: Any) -> Any:
    """A JSON export's data, exact except that each lone surrogate (which no UTF-8 file can
    hold) is written as the visible text `\\udXXX`; JSON itself escapes the C0 controls."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(_escape, value)
    if isinstance(value, Mapping):
        return {export_value(k): export_value(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [export_value(v) for v in value]
    return value
