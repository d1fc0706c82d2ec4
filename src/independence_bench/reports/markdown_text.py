"""Untrusted text (model labels, judge names, model output) made literal for Markdown."""

from __future__ import annotations

from independence_bench.text.outputs import visible

_MD_SPECIAL = set("\\`*_[]|~#!")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: object) -> str:
    """Untrusted text as literal Markdown on one line: `<`, `>` and `&` as HTML entities (so no
    renderer sees a tag), other Markdown specials backslash-escaped, control characters made
    visible (`text.outputs.visible`)."""
    flat = visible(" ".join(str(text).split()), lines=False)
    return "".join(_HTML_ENTITIES.get(c) or (f"\\{c}" if c in _MD_SPECIAL else c) for c in flat)
