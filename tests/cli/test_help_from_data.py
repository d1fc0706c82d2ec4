"""`aib run --help` is built from the shipped data: every suite and preset, the defaults of
`--runs` and `--judge`, and the forms a model name takes."""

from __future__ import annotations

from typing import Any

from independence_bench.clients.local.local_models import LOCAL_RUNS
from independence_bench.clients.presets import available_presets
from independence_bench.judging.default_judges import DEFAULT_JUDGE, LOCAL_JUDGE
from independence_bench.suites.suite import available_suites
from independence_bench.workflows.plan import DEFAULT_API_RUNS


def test_run_help_lists_the_data_and_the_defaults(aib: Any) -> None:
    result = aib("run", "--help")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    suites = available_suites()
    assert "v3" in suites
    assert f"Suite: {', '.join(suites[:-1])} or {suites[-1]}. [default: v2]" in text
    for preset in available_presets():
        assert preset in text.split("--preset", 1)[1].split("--", 1)[0]
    runs = f"Default: {LOCAL_RUNS} when every model is local (embedded:, gguf:, hf:), else "
    assert f"{runs}{DEFAULT_API_RUNS}." in text
    assert (
        f"Default: {DEFAULT_JUDGE} when a tested model is on OpenRouter, else {LOCAL_JUDGE} on "
        "this machine (a smoke-test judge)." in text
    )
    for form in ("embedded:NAME", "gguf:/path/file.gguf", "hf:owner/repo/file.gguf"):
        assert form in text


def test_run_help_lists_every_exit_status(aib: Any) -> None:
    result = aib("run", "--help")
    statuses = result.out.split("Exit status:", 1)[1].split("Options:", 1)[0]
    codes = [line.split()[0] for line in statuses.strip().splitlines() if line[:6].strip()]
    assert [c for c in codes if c.isdigit()] == ["0", "2", "3", "130", "143", "129"]


def test_aib_help_shows_every_command_description_whole(aib: Any) -> None:
    result = aib("--help")
    assert result.code == 0, result.err
    commands = result.out.split("Commands:", 1)[1]
    assert "..." not in commands and "…" not in commands
    assert "Run the benchmark: converse, judge, and print the leaderboard." in " ".join(
        commands.split()
    )
