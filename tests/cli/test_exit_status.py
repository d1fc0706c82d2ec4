"""Exit status tells the truth: work left failed or unscored is status 3 with one line per
reason and its count, and running the same command again retries exactly that work."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import RetryPolicy
from support.mock_server import MockConfig, MockServer

QUICK = ("--scenarios", "direct", "--runs", "1", "--data-dir", "d")
MODELS = ("--models", "scripted-firm,scripted-caving")


@pytest.fixture()
def stored(server: MockServer, aib: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two finished, judged transcripts; retries made instant for the failing servers below."""
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    run = aib("run", *MODELS, "--judge", "scripted-judge", "--base-url", server.base_url, *QUICK)
    assert run.code == 0, run.err
    yield Path("d")


def _judge(aib: Any, judge: str, url: str) -> Any:
    return aib("judge", "--judge", judge, "--base-url", url, "--data-dir", "d")


def test_a_judge_pass_where_every_call_fails_prints_the_reason_and_exits_3(
    stored: Path, aib: Any
) -> None:
    with MockServer(MockConfig(fault_rate=1.0, fault_kinds=("500",))) as failing:
        result = _judge(aib, "scripted-judge-graded", failing.base_url)
    assert result.code == 3, result.err
    lines = result.out.strip().splitlines()
    assert lines[0] == (
        "judge scripted-judge-graded: 0 judged, 0 already judged, 0 unscored, 2 failed"
    )
    assert lines[1].startswith("2 judgments failed")
    assert len(lines) == 3 and lines[2].startswith("  2 × gave up after 2 attempts: HTTP 500")


def test_unscored_judgments_exit_3_and_are_judged_again_not_counted_as_done(
    stored: Path, server: MockServer, aib: Any
) -> None:
    # A subject model as the judge: its replies are prose, never the JSON the rubric asks for.
    first = _judge(aib, "scripted-firm", server.base_url)
    assert first.code == 3, first.err
    assert first.out.startswith("judge scripted-firm: 0 judged, 0 already judged, 2 unscored")
    assert "  2 × unscored: " in first.out
    asked = server.seen.request_count
    again = _judge(aib, "scripted-firm", server.base_url)
    assert again.code == 3, again.err
    assert again.out.startswith("judge scripted-firm: 0 judged, 0 already judged, 2 unscored")
    assert server.seen.request_count > asked, "the unscored judgments were not asked again"
    scored = _judge(aib, "scripted-judge", server.base_url)
    assert scored.code == 0, scored.err
    assert (
        scored.out.strip()
        == "judge scripted-judge: 0 judged, 2 already judged, 0 unscored, 0 failed"
    )


def test_a_scored_retry_replaces_the_unscored_row_and_the_next_pass_keeps_it(
    stored: Path, server: MockServer, aib: Any
) -> None:
    from independence_bench.store.store import Store

    with Store(stored) as store:
        judgments = store.judgments(judge_model="scripted-judge")
    assert len(judgments) == 2
    row = judgments[0]
    with closing(sqlite3.connect(stored / "aib.sqlite3")) as db, db:
        db.execute("UPDATE judgments SET status = 'unscored' WHERE id = ?", (row.id,))
    retry = _judge(aib, "scripted-judge", server.base_url)
    assert retry.code == 0, retry.err
    assert retry.out.startswith("judge scripted-judge: 1 judged, 1 already judged, 0 unscored")
    with Store(stored) as store:
        rows = store.judgments(judge_model="scripted-judge")
    assert [r.status for r in rows] == ["scored", "scored"]
    assert rows[0].completion_keys != row.completion_keys  # asked anew, not the cached reply
    calls = server.seen.request_count
    settled = _judge(aib, "scripted-judge", server.base_url)
    assert settled.code == 0 and "0 judged, 2 already judged" in settled.out
    assert server.seen.request_count == calls
