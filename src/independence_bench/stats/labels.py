"""Leaderboard labels: one model configuration per row, named ``base[+provider][@effort][-tT]``.

The same base model served by a pinned provider, at a reasoning effort or at a temperature is a
different row (``x-ai/grok+fireworks@low-t0.7``). `parse_label` reads such a label back into its
parts so that rows sharing a base can be compared and models grouped by family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LabelParts:
    """A leaderboard label split by the grammar ``base[+provider][@effort][-tT]``."""

    base: str
    provider: str | None = None
    effort: str | None = None
    temperature: float | None = None

    @property
    def family(self) -> str | None:
        """The provider prefix of the base model id ("openai" in "openai/gpt-4o")."""
        return self.base.split("/", 1)[0] if "/" in self.base else None

    def settings(self) -> tuple[str, ...]:
        """The settings this label adds to its base, in words."""
        found = [("provider", self.provider), ("effort", self.effort)]
        found.append(("temperature", None if self.temperature is None else f"{self.temperature:g}"))
        return tuple(f"{name} {value}" for name, value in found if value is not None)


_LABEL = re.compile(
    r"^(?P<base>[^+@]+?)(?:\+(?P<provider>[^+@]+?))?(?:@(?P<effort>[A-Za-z]+))?"
    r"(?:-t(?P<temperature>[0-2](?:\.\d+)?))?$"
)


def parse_label(label: str) -> LabelParts:
    """Split ``base[+provider][@effort][-tT]``, e.g. ``x-ai/grok+fireworks@low-t0.7``.

    A trailing ``-t`` counts as a temperature only when followed by a number from 0 to 2, so
    ``google/flan-t5`` stays a base model id.
    """
    match = _LABEL.match(label)
    if match is None:
        raise ValueError(
            f"cannot read model label {label!r}; expected base[+provider][@effort][-tT]"
        )
    temperature = match["temperature"]
    if temperature is not None and float(temperature) > 2.0:
        return LabelParts(f"{match['base']}-t{temperature}", match["provider"], match["effort"])
    return LabelParts(
        match["base"],
        match["provider"],
        match["effort"],
        None if temperature is None else float(temperature),
    )
