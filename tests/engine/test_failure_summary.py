"""Failures told once per reason, in full on request, and a non-zero exit status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.engine.failures import (
    EXIT_SOME_FAILED,
    Failure,
    group_failures,
    reason_of,
    render_failed_items,
    render_failure_summary,
)
from independence_bench.store.store import ItemRecord, RunRecord
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_command
from support.mock_server import MockConfig, MockServer

VALIDATION_DUMP = (
    "turn 1: HTTP 500: 7 validation errors:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 2), 'msg': \"Input should be "
    "'system'\"}\n  {'type': 'string_type', 'loc': ('body', 'messages', 2), 'msg': 'Input "
    "should be a valid string'}"
)


def test_reasons_are_first_lines_without_turn_numbers_grouped_by_count() -> None:
    failures = [
        Failure("m run 1 direct", VALIDATION_DUMP),
        Failure("m run 1 psych", VALIDATION_DUMP.replace("turn 1", "turn 4")),
        Failure("m run 1 negotiation", "turn 2: the model said nothing usable"),
    ]
    assert reason_of(VALIDATION_DUMP) == "HTTP 500: 7 validation errors"
    groups = group_failures(failures)
    assert [(reason, len(group), group[0].item) for reason, group in groups.items()] == [
        ("HTTP 500: 7 validation errors", 2, "m run 1 direct"),
        ("the model said nothing usable", 1, "m run 1 negotiation"),
    ]
    assert len(reason_of("x" * 500)) == 160


def test_a_reason_is_the_visible_first_line_cut_at_160_characters() -> None:
    assert reason_of("") == "(no error text)"
    assert reason_of("  \n ") == "(no error text)"
    assert reason_of("\n  turn 12: boom :  \nmore") == "boom"
    assert reason_of("turn 1: HTTP 500 \x1b[31mred") == "HTTP 500 \\x1b[31mred"
    assert reason_of("turn 3: HTTP 429: slow down, XX") == "HTTP 429: slow down, XX"
    assert reason_of("x" * 160) == "x" * 160
    assert reason_of("x" * 161) == "x" * 159 + "…"


def test_equal_counts_keep_the_order_the_reasons_first_came_in() -> None:
    failures = [Failure(f"m {n}", error) for n, error in enumerate("abbcca")]
    groups = group_failures(failures)
    assert [(reason, len(group), group[0].item) for reason, group in groups.items()] == [
        ("a", 2, "m 0"),
        ("b", 2, "m 1"),
        ("c", 2, "m 3"),
    ]


def test_the_summary_says_how_many_failed_then_one_line_per_reason() -> None:
    assert render_failure_summary([], what="conversations") == []
    failures = [
        Failure("m run 1 direct", "turn 1: boom"),
        Failure("m run 1 psych", "turn 3: boom"),
        Failure("m\x1b[2J run 2 direct", "gone"),
    ]
    assert render_failure_summary(failures, what="conversations or judgments") == [
        "3 conversations or judgments failed (`aib runs --failed` lists each with its full error):",
        "  2 × boom  (e.g. m run 1 direct)",
        "  1 × gone  (e.g. m\\x1b[2J run 2 direct)",
    ]


def _failed_item(label: str, scenario: str, error: str | None) -> ItemRecord:
    run = RunRecord(1, label, label, "v2", 1, "hash", 2, {}, "0", "run")
    return ItemRecord("id", run, "neutral", "user_role", scenario, "k", "e", "failed", error, ())


def test_the_failed_list_gives_each_conversation_its_full_error_then_the_reasons() -> None:
    assert render_failed_items([]) == "no failed conversations in the store"
    items = [
        _failed_item("m", "direct", "turn 2: HTTP 500\ndetail one\ndetail two"),
        _failed_item("m\x1b[1m", "psych", None),
        _failed_item("n", "psych", "turn 1: HTTP 500"),
    ]
    assert render_failed_items(items) == (
        "m  v2 run 2  neutral/user_role  direct\n"
        "  turn 2: HTTP 500\n  detail one\n  detail two\n\n"
        "m\\x1b[1m  v2 run 2  neutral/user_role  psych\n  (no error text)\n\n"
        "n  v2 run 2  neutral/user_role  psych\n  turn 1: HTTP 500\n\n"
        "3 failed conversations, 2 distinct reasons:\n"
        "  2 × HTTP 500\n"
        "  1 × (no error text)"
    )


def test_a_run_where_everything_fails_says_why_once_and_exits_3(aib: Any, tmp_path: Path) -> None:
    lines: list[str] = []
    config = MockConfig(fault_rate=1.0, fault_kinds=("500",))
    with MockServer(config) as broken:
        options = RunOptions(
            models="scripted-firm",
            judge="scripted-judge",
            base_url=broken.base_url,
            runs=1,
            scenarios=("direct", "negotiation", "psych"),
            data_dir=tmp_path / "store",
            retry=RetryPolicy(max_attempts=2, base_delay_s=0.0, max_delay_s=0.0),
            show_progress=False,
        )
        status = run_command(options, echo=lines.append)
    assert status == EXIT_SOME_FAILED
    output = "\n".join(lines)
    assert "3 conversations or judgments failed" in output
    reason = "gave up after 2 attempts: HTTP 500: Upstream error 500 (mock)"
    assert f"  3 × {reason}  (e.g. scripted-firm run 1 " in output
    assert output.count("Upstream error") == 1

    listed = aib("runs", "--failed", "--data-dir", str(tmp_path / "store"))
    assert listed.code == 0, listed.err
    for scenario in ("direct", "negotiation", "psych"):
        assert f"strong_independence/tool_role  {scenario}" in listed.out
    assert "3 failed conversations, 1 distinct reasons:" in listed.out
    assert listed.out.count(f"turn 1: {reason}") == 3
