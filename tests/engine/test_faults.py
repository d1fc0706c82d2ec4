"""Faults: every kind the loopback server injects ends in the same scores as a clean run.

The server damages calls at random (seeded, but arrival order varies): HTTP 429 with and
without Retry-After, 500/502/503, dropped connections, timeouts, empty replies, replies only in
`reasoning`, tool calls with truncated JSON arguments and judge replies with broken JSON. A run
must end with every conversation done or failed with its reason, with nothing damaged stored
as a valid reply, and with the same transcripts and judge scores as a fault-free run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.conversations.conversation import TOOL_NAME, extract_reply, reply_is_whole
from independence_bench.judging.judge import judge_reply_is_whole
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import RunResult, run_benchmark
from support.mock_behaviours import FAULT_KINDS
from support.mock_server import MockConfig, MockServer
from support.store_views import connect, item_statuses, replies_by_item, scores_by_item

FAST = RetryPolicy(max_attempts=10, base_delay_s=0.002, max_delay_s=0.02)
TRIO = "scripted-firm,scripted-caving,scripted-plain"


def _run(
    server: MockServer,
    data: Path,
    models: str,
    *,
    retry: RetryPolicy = FAST,
    timeout_s: float = 0.3,
) -> RunResult:
    """One run; the short default timeout makes the `timeout` fault cheap to wait out."""
    return run_benchmark(
        RunOptions(
            models=models,
            judge="scripted-judge",
            base_url=server.base_url,
            runs=1,
            data_dir=data,
            show_progress=False,
            timeout_s=timeout_s,
            retry=retry,
        )
    )


def _board(result: RunResult) -> dict[str, tuple[float | None, Any]]:
    board = result.leaderboard
    assert board is not None
    return {row.model: (row.index, row.metrics) for row in board.rows}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fault-free run of the three subjects: the reference every faulty run must match."""
    data = tmp_path_factory.mktemp("clean")
    with MockServer(MockConfig()) as server:
        _run(server, data, TRIO)
    return data


def _subset(full: dict[Any, Any], part: dict[Any, Any]) -> dict[Any, Any]:
    return {key: full.get(key) for key in part}


def _faulted(server: MockServer) -> dict[str, int]:
    counts: dict[str, int] = {}
    for body in server.seen.requests:
        if body.get("faulted"):
            counts[body["faulted"]] = counts.get(body["faulted"], 0) + 1
    return counts


FAULT_GROUPS = (
    ("429", "429_no_retry_after"),
    ("500", "502", "503", "500_tool_choice"),
    ("reset", "plain_text"),
    ("timeout",),
    ("empty", "reasoning_only"),
    ("truncated_tool_args",),
    ("broken_judge_json",),
)


def test_the_groups_cover_every_fault_kind() -> None:
    assert sorted(k for group in FAULT_GROUPS for k in group) == sorted(FAULT_KINDS)


@pytest.mark.parametrize("kinds", FAULT_GROUPS, ids="+".join)
def test_each_fault_kind_leaves_transcripts_and_scores_unchanged(
    kinds: tuple[str, ...], clean: Path, tmp_path: Path
) -> None:
    # The caving model's markers end its replies, so a cut-off reply kept as valid would
    # change its verdict: it is the model where storing damage would show.
    # Only judge calls can get broken judge JSON: a higher rate makes sure it fires.
    rate = 0.5 if kinds == ("broken_judge_json",) else 0.3
    config = MockConfig(fault_rate=rate, fault_kinds=kinds, seed=7, timeout_sleep_s=1.0)
    with MockServer(config) as server:
        result = _run(server, tmp_path, "scripted-caving")
        fired = _faulted(server)
    for kind in kinds:
        assert fired.get(kind, 0) >= 2, f"{kind} hardly fired ({fired}); the test proves nothing"
    assert result.summary.items_failed == 0 and result.summary.judge_failed == 0
    replies = replies_by_item(tmp_path)
    assert len(replies) == len(load_suite("v2").scenarios)
    assert replies == _subset(replies_by_item(clean), replies)
    scores = scores_by_item(tmp_path)
    assert scores == _subset(scores_by_item(clean), scores)


def test_twenty_percent_of_calls_faulted_with_every_kind_gives_the_same_scores(
    clean: Path, tmp_path: Path
) -> None:
    config = MockConfig(fault_rate=0.2, fault_kinds=FAULT_KINDS, seed=3, timeout_sleep_s=1.0)
    with MockServer(config) as server:
        result = _run(server, tmp_path, TRIO)
        faulted = sum(_faulted(server).values())
        total = server.seen.request_count
    assert faulted >= 0.1 * total
    suite = load_suite("v2")
    statuses = item_statuses(tmp_path)
    assert len(statuses) == 3 * len(suite.scenarios)
    for status, error in statuses.values():
        assert status == "done" or (status == "failed" and error)
    with MockServer(MockConfig()) as server:
        reference = _board(_run(server, clean, TRIO))  # all cached: no call is made
        assert server.seen.request_count == 0
    assert _board(result) == reference
    assert scores_by_item(tmp_path) == scores_by_item(clean)


def test_a_reply_that_stays_empty_fails_its_item_with_the_reason_and_is_never_stored(
    tmp_path: Path,
) -> None:
    config = MockConfig(fault_rate=1.0, fault_kinds=("empty", "reasoning_only"))
    retry = RetryPolicy(max_attempts=3, base_delay_s=0.0, max_delay_s=0.0)
    with MockServer(config) as server:
        # No timeout fault here: a generous timeout keeps a slow machine from turning an
        # "empty" attempt into a "timed out" one.
        result = _run(server, tmp_path, "scripted-firm", retry=retry, timeout_s=60.0)
        assert server.seen.request_count == 3 * len(load_suite("v2").scenarios)
    assert result.summary.items_done == 0
    for status, error in item_statuses(tmp_path).values():
        assert status == "failed"
        assert error is not None and "gave up after 3 attempts" in error and "empty" in error
    with connect(tmp_path) as db:
        assert db.execute("SELECT count(*) FROM completions").fetchone()[0] == 0


def test_truncated_tool_arguments_are_retried_then_recovered_when_no_retry_is_whole(
    tmp_path: Path, clean: Path
) -> None:
    config = MockConfig(fault_rate=1.0, fault_kinds=("truncated_tool_args",))
    retry = RetryPolicy(max_attempts=2, base_delay_s=0.0, max_delay_s=0.0)
    with MockServer(config) as server:
        result = _run(server, tmp_path, "scripted-firm", retry=retry)
        subject_calls = sum(1 for b in server.seen.requests if b["model"] == "scripted-firm")
    assert result.summary.items_done == len(load_suite("v2").scenarios)
    assert subject_calls == 2 * sum(len(s.turns) for s in load_suite("v2").scenarios)
    intact = replies_by_item(clean)
    for iid, turns in replies_by_item(tmp_path).items():
        for (human, reply, protocol_ok, note), (_, whole, _, _) in zip(
            turns, intact[iid], strict=True
        ):
            assert protocol_ok and note is not None and "recovered" in note
            assert whole.startswith(reply) and len(reply) < len(whole)
            assert human


def _tool_completion(arguments: str, finish_reason: str) -> Completion:
    call = ToolCall(id="abc123def", name=TOOL_NAME, arguments=arguments)
    return Completion(content=None, tool_calls=(call,), finish_reason=finish_reason)


def test_damaged_tool_json_is_retried_unless_the_model_ran_out_of_tokens() -> None:
    cut = '{"message": "I am keeping my own na'
    assert not reply_is_whole(_tool_completion(cut, "tool_calls"), "tool_role")
    assert reply_is_whole(_tool_completion(cut, "length"), "tool_role")
    reply = extract_reply(_tool_completion(cut, "length"), "tool_role")
    assert reply is not None and reply.text == "I am keeping my own na"
    assert reply_is_whole(_tool_completion('{"message": "fine"}', "tool_calls"), "tool_role")
    empty = Completion(content=None, reasoning="thinking only", finish_reason="stop")
    assert not reply_is_whole(empty, "tool_role")
    assert not reply_is_whole(Completion(content="  "), "user_role")
    assert reply_is_whole(Completion(content="plain words"), "tool_role")  # a protocol note


def test_judge_json_cut_off_in_transit_is_asked_again_but_malformed_json_goes_to_repair() -> None:
    cut = Completion(content='{"reasoning": "The replies con', finish_reason="stop")
    assert not judge_reply_is_whole(cut)
    assert judge_reply_is_whole(Completion(content=cut.content, finish_reason="length"))
    assert judge_reply_is_whole(Completion(content='{"reasoning": "ok", "score": 7}'))
    assert judge_reply_is_whole(Completion(content='{"reasoning": bad escape \\q}'))
    assert judge_reply_is_whole(Completion(content="Seven out of ten."))
    assert not judge_reply_is_whole(Completion(content=None, reasoning='{"reasoning": "x"}'))
