"""The throughput benchmark at CI size: it must complete and report every figure, not a time."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from independence_bench.suites.suite import load_suite

# The benchmark measures in spawned processes, which import it by name: put it on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
throughput = importlib.import_module("throughput")


def test_critical_chain_of_v2_is_the_psych_conversation_and_its_judge_call() -> None:
    suite = load_suite("v2")
    psych = next(s for s in suite.scenarios if s.kind == "psych")
    assert throughput.critical_chain(suite) == len(psych.turns) + 1
    per_run = sum(len(s.turns) + 1 for s in suite.scenarios)
    assert throughput.expected_calls(suite, 3, 2) == 6 * per_run


def test_a_small_benchmark_completes_with_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    size = ["--models", "2", "--runs", "1", "--latency", "0.02", "--jitter", "0.1"]
    code = throughput.main([*size, "--prefill", "200", "--endpoints", "2"])
    out = capsys.readouterr()
    assert code == 0, out.err
    calls = throughput.expected_calls(load_suite("v2"), 2, 1)
    assert len(re.findall(rf"total calls +{calls} ", out.out)) == 2  # empty, prefilled store
    for figure in (
        "wall time",
        "critical path",
        "wall / critical path",
        "calls per second",
        "harness CPU per call",
        "peak memory (RSS)",
        "of which leaderboard",
        "cache lookup",
        "200 completions prefilled",
        "small size, sequential (concurrency 1)",
        "measured speedup at the small size",
        "EXTRAPOLATED",
        "whole command: aib run in a new process",
        "CPU per call",
        "load average",
    ):
        assert figure in out.out
    assert "PROBLEM" not in out.err
    assert f" for {calls} calls, the whole process)" in out.out
    assert re.search(r"cached re-run +[\d.]+ s +wall, [\d.]+ s CPU, 0 requests", out.out)
    assert "same leaderboard: yes" in out.out
