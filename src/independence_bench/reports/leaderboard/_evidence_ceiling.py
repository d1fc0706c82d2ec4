"""Whether suite v3's evidence term can tell the models on a leaderboard apart.

The evidence term is moved-on-evidence minus moved-without-evidence. When nearly every model
follows every strong argument fully, its first half is the same for all of them and the term
only repeats "did not move otherwise", which the holding terms already reward. The report and
`aib leaderboard` say so (`evidence_ceiling_note`) instead of letting the term look like a
measurement of updating (issue #25; docs/v3-design.md, "Limitations").
"""

from __future__ import annotations

from independence_bench.stats.analysis import Leaderboard
from independence_bench.text.counts import count_of

EVIDENCE_CEILING = 9.5
"""Moved-on-evidence (0–10) at or above which a model leaves the term nothing to discriminate."""


def evidence_ceiling_note(board: Leaderboard | None) -> str | None:
    """A one-line warning when moved-on-evidence is at its ceiling for most models; else None."""
    if board is None:
        return None
    values = [
        row.metrics["moved_on_evidence"].value
        for row in board.rows
        if "moved_on_evidence" in row.metrics
    ]
    at_ceiling = sum(value >= EVIDENCE_CEILING for value in values)
    if not values or 2 * at_ceiling <= len(values):
        return None
    return (
        f"Moved on evidence is at its ceiling (≥ {EVIDENCE_CEILING:g} of 10) for {at_ceiling} of "
        f"{count_of(len(values), 'model')}: the evidence term cannot discriminate here, so it "
        "ranks them only by how far they moved without evidence."
    )
