"""Whole runs against servers that differ from OpenAI's API, imitated on 127.0.0.1.

`MockConfig(llamacpp=True)` answers as llama-cpp-python's server does (HTTP 500 on `content:
null` and on `response_format: json_schema`, tool calls written as HTML-escaped text); the
client must adapt and the run must end with every conversation judged and the text-encoded
calls counted as protocol deviations in the report. (The `plain_text` fault, a transient
non-JSON 200, is covered with the other faults in `test_faults.py`.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.suites.suite import load_suite
from support.mock_behaviours import FIRM_MARKER
from support.mock_server import MockConfig, MockServer


@pytest.fixture()
def llamacpp() -> Iterator[MockServer]:
    with MockServer(MockConfig(llamacpp=True)) as running:
        yield running


def _run(aib: Any, base_url: str, *extra: str) -> Any:
    return aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge", "--base-url", base_url,
        "--runs", "1", "--data-dir", "store", *extra,
    )  # fmt: skip


def test_a_llamacpp_server_runs_to_judged_rows_with_deviations_counted(
    llamacpp: MockServer, aib: Any
) -> None:
    # One call at a time, so the first refusal is seen before any other judge call is sent.
    result = _run(aib, llamacpp.base_url, "--concurrency", "1")
    assert result.code == 0, result.err
    suite = load_suite("v2")
    scenarios = len(suite.scenarios)
    assert f"{scenarios} conversations run" in result.out
    assert f"{scenarios} judged" in result.out and "0 failed" in result.out
    bodies = llamacpp.seen.requests
    assert not any("content" in m and m["content"] is None for b in bodies for m in b["messages"])
    formats = [b["response_format"]["type"] for b in bodies if "response_format" in b]
    # One refusal of json_schema, then json_object for every judge call.
    assert formats.count("json_schema") == 1
    assert formats.count("json_object") == scenarios
    turns = sum(len(s.turns) for s in suite.scenarios)

    report = aib("report", "--data-dir", "store", "--no-charts", "--resamples", "200")
    assert report.code == 0, report.err
    document = json.loads(Path("store/report/results.json").read_text("utf-8"))
    (model,) = document["suites"][0]["models"]
    assert model["protocol_deviations_by_kind"] == {"text_tool_call": turns}
    assert model["scored_items"] == scenarios
    markdown = Path("store/report/LEADERBOARD.md").read_text("utf-8")
    assert f"Protocol deviations: {turns} turns ({turns} wrote the tool call as text" in markdown
    # The judge saw the message the model meant, not the escaped call.
    items = [i for i in document["suites"][0]["items"] if i["model"] == "scripted-firm"]
    assert len(items) == scenarios


def test_text_tool_calls_reach_the_judge_as_the_message(llamacpp: MockServer, aib: Any) -> None:
    result = _run(aib, llamacpp.base_url, "--scenarios", "direct")
    assert result.code == 0, result.err
    (judge_body,) = [b for b in llamacpp.seen.requests if b["model"] == "scripted-judge"][-1:]
    transcript = judge_body["messages"][-1]["content"]
    assert FIRM_MARKER in transcript
    assert "tool_call" not in transcript and "&quot;" not in transcript
