"""Counts in words: "1 run", "3 runs", "1 reply", "2 replies" — never "1 runs" or "run(s)".

Every count printed to a person (terminal, report, viewer, estimate) goes through `count_of`,
so the noun agrees with the number; the viewer's `countOf` in `app.js` follows the same rule.
"""

from __future__ import annotations


def plural_of(noun: str) -> str:
    """`noun` in the plural by the regular English rules (reply → replies, pass → passes)."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def count_of(n: int, noun: str, plural: str | None = None) -> str:
    """`n` with `noun` in the number `n` asks for: "1 run", "0 runs", "3 replies".

    `plural` names an irregular plural; in a noun of several words the last one takes the
    number ("2 API calls", "2 stored calls")."""
    if n == 1:
        return f"{n} {noun}"
    head, space, last = noun.rpartition(" ")
    return f"{n} {plural if plural is not None else head + space + plural_of(last)}"
