"""The earlier implementation's command-line spellings: they work, or name today's in one line.

`generate-report` and `estimate-cost` run `report` and `estimate`; `-m`, `-j` and `-e` are
`--models`, `--judge` and `--experiments`; `clear-cache` and `extract-names` answer with what
to run instead (exit 2). `--temperature` sets the tested models' temperature, and
`leaderboard` and `report` take `--models` as the earlier CLI's did. `--help` lists none of the
old spellings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.legacy_names import modern_argv
from independence_bench.cli.main import COMMANDS
from support.mock_server import MockServer


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer() as running:
        yield running


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["generate-report", "-m", "a,b"], ["report", "--models", "a,b"]),
        (["estimate-cost", "-m", "a"], ["estimate", "--models", "a"]),
        (
            ["run", "-m", "a", "-j", "b", "-e", "identity"],
            ["run", "--models", "a", "--judge", "b", "--experiments", "identity"],
        ),
        (
            ["judge", "--judge-model", "b", "--exp=identity"],
            ["judge", "--judge", "b", "--experiments=identity"],
        ),
        # An option's value is never read as an option, nor is anything after `--`.
        (["run", "-j", "-m"], ["run", "--judge", "-m"]),
        (["run", "--", "-m"], ["run", "--", "-m"]),
        (["leaderboard", "-d"], ["leaderboard", "--detailed"]),
        (
            ["run", "-t", "0.3", "-r", "low"],
            ["run", "--temperature", "0.3", "--reasoning-effort", "low"],
        ),
        (["--version"], ["--version"]),
    ],
)
def test_modern_argv(argv: list[str], expected: list[str]) -> None:
    assert modern_argv(argv, COMMANDS) == expected


@pytest.mark.parametrize(
    ("command", "hint"),
    [("clear-cache", "'aib run --fresh'"), ("extract-names", "'aib leaderboard --detailed'")],
)
def test_a_retired_command_names_what_to_run_instead(aib: Any, command: str, hint: str) -> None:
    result = aib(command, "--scores-only")
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert line.startswith(f"aib: error: '{command}' is gone: ") and hint in line


@pytest.mark.parametrize(
    ("option", "hint"),
    [
        ("-p", "--concurrency N"),
        ("--parallel-tasks=8", "--concurrency N"),
        ("--local-url", "--base-url URL --models MODEL"),
    ],
)
def test_a_retired_option_names_what_to_use_instead(aib: Any, option: str, hint: str) -> None:
    result = aib("run", option, "4")
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert line.startswith(f"aib: error: {option.partition('=')[0]} is gone: ") and hint in line


def test_help_lists_no_old_spelling(aib: Any) -> None:
    top = aib("--help")
    run = aib("run", "--help")
    assert top.code == 0 and run.code == 0
    for old in ("generate-report", "estimate-cost", "clear-cache", "extract-names"):
        assert old not in top.out
    assert "-m," not in run.out and "-j," not in run.out and "--temperature" in run.out


def _run(aib: Any, server: MockServer, *extra: str) -> Any:
    return aib(
        "run", "--suite", "full", "--scenarios", "direct", "--variants", "neutral",
        "--modes", "user_role", "--base-url", server.base_url, "--runs", "1", *extra,
    )  # fmt: skip


def test_short_flags_and_temperature_reach_the_run(aib: Any, server: MockServer) -> None:
    server.reset()
    result = _run(aib, server, "-m", "scripted-firm", "-j", "scripted-judge",
                  "-e", "identity", "--temperature", "0.3")  # fmt: skip
    assert result.code == 0, result.err
    assert "scripted-firm-t0.3" in result.out
    subject = [b for b in server.seen.requests if b["model"] == "scripted-firm"]
    judge = [b for b in server.seen.requests if b["model"] == "scripted-judge"]
    assert subject and {b["temperature"] for b in subject} == {0.3}
    assert judge and {b["temperature"] for b in judge} == {0.0}


def test_old_command_names_do_what_the_new_ones_do(aib: Any, server: MockServer) -> None:
    common = ("--base-url", server.base_url, "-j", "scripted-judge", "--suite", "lite")
    new = aib("estimate", "--models", "scripted-firm", *common)
    old = aib("estimate-cost", "-m", "scripted-firm", *common)
    assert new.code == old.code == 0 and new.out == old.out
    # An empty store: both spellings refuse it with the same line.
    assert aib("generate-report").err == aib("report").err != ""


def test_leaderboard_and_report_show_only_the_models_asked_for(
    aib: Any, server: MockServer
) -> None:
    result = _run(aib, server, "--models", "scripted-firm,scripted-caving",
                  "--judge", "scripted-judge")  # fmt: skip
    assert result.code == 0, result.err
    both = aib("leaderboard", "--json")
    one = aib("leaderboard", "--json", "-m", "scripted-caving")
    assert both.code == one.code == 0, one.err
    assert {r["model"] for r in json.loads(both.out)} == {"scripted-firm", "scripted-caving"}
    assert [r["model"] for r in json.loads(one.out)] == ["scripted-caving"]
    report = aib("generate-report", "--models", "scripted-firm", "--no-charts")
    assert report.code == 0, report.err
    markdown = Path("aib-data/report/LEADERBOARD.md").read_text("utf-8")
    assert "scripted-firm" in markdown and "scripted-caving" not in markdown
    unknown = aib("leaderboard", "--models", "nobody")
    assert unknown.code == 2 and "no runs of nobody" in unknown.err
    assert "scripted-caving" in unknown.err and len(unknown.err.splitlines()) == 1
