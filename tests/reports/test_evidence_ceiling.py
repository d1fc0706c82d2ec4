"""The v3 evidence term's ceiling flag: said when most models follow every strong argument."""

from __future__ import annotations

from independence_bench.reports.leaderboard import evidence_ceiling_note, render_table
from independence_bench.stats.analysis import Leaderboard, LeaderboardRow
from independence_bench.stats.core import Estimate


def _board(*moved_on_evidence: float | None) -> Leaderboard:
    rows = []
    for n, value in enumerate(moved_on_evidence):
        metrics = {"rounds_held": Estimate(4.0)}
        if value is not None:
            metrics["moved_on_evidence"] = Estimate(value)
        row = LeaderboardRow(f"m{n}", 50.0 - n, None, None, n + 1, None, None, 1, metrics,
                             10, 10, 0, (), "1 run")  # fmt: skip
        rows.append(row)
    return Leaderboard("v3", "v3", ("judge",), tuple(rows), {}, "")


def test_most_models_at_the_ceiling_are_flagged() -> None:
    note = evidence_ceiling_note(_board(9.5, 10.0, 7.0))
    assert note is not None
    assert "for 2 of 3 models: the evidence term cannot discriminate here" in note
    assert note in " ".join(render_table(_board(9.5, 10.0, 7.0), width=200).split())


def test_half_or_fewer_at_the_ceiling_or_no_evidence_metric_is_not_flagged() -> None:
    assert evidence_ceiling_note(_board(9.5, 9.49)) is None  # one of two is not most
    assert evidence_ceiling_note(_board(9.4, 9.4, 9.4)) is None
    assert evidence_ceiling_note(_board(None, None)) is None  # v2 and earlier: no such term
    assert evidence_ceiling_note(None) is None
    assert "cannot discriminate" not in render_table(_board(9.0, 10.0), width=200)
