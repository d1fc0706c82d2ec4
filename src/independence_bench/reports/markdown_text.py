"""Untrusted text (model labels, judge names, model output) made literal for Markdown."""

from __future__ import annotations

_MD_SPECIAL = set("\\`*_[]|~#!")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: object) -> str:
    """Untrusted text as literal Markdown on one line: `<`, `>` and `&` as HTML entities (so no
    renderer sees a tag), other Markdown specials backslash-escaped."""
    flat = " ".join(str(text).split())
    return "".join(_HTML_ENTITIES.get(c) or (f"\\{c}" if c in _MD_SPECIAL else c) for c in flat)
