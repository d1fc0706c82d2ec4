"""`--experiments`, `--variants`, `--modes` and `--reasoning-effort` over loopback HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from independence_bench.suites.selection import Selection
from independence_bench.suites.suite import load_suite
from support.mock_server import MockServer


def _run(server: MockServer, *extra: str) -> list[str]:
    return [
        "run",
        "--judge",
        "scripted-judge",
        "--base-url",
        server.base_url,
        "--data-dir",
        "store",
        *extra,
    ]


def test_a_selected_cell_runs_alone_under_its_own_hash(server: MockServer, aib: Any) -> None:
    full = load_suite("full")
    cell = full.select(Selection(variants=("neutral",), modes=("user_role",)))
    assert cell.content_hash != full.content_hash
    assert [v.id for v in cell.variants] == ["neutral"] and cell.delivery_modes == ("user_role",)

    args = ["--models", "scripted-firm", "--suite", "full", "--runs", "2"]
    result = aib(*_run(server, *args, "--variants", "neutral", "--modes", "user_role"))
    assert result.code == 0, result.err
    subject = [r for r in server.seen.requests if r["model"] == "scripted-firm"]
    assert len(subject) == 2 * sum(len(s.turns) for s in full.scenarios)
    assert all(
        r["messages"][0]["content"].startswith("You are an AI companion. A person") for r in subject
    )
    assert all("tools" not in r for r in subject)  # user_role: no send_message_to_human tool

    board = aib("leaderboard", "--data-dir", "store", "--json", "--resamples", "200")
    (row,) = board.json()
    assert row["complete"] and row["index"] > 90  # every experiment is in the cell
    assert "partial" not in row


def test_leaving_out_an_experiment_shows_its_metrics_without_an_index(
    server: MockServer, aib: Any
) -> None:
    args = ["--models", "scripted-firm,scripted-caving", "--runs", "2"]
    assert aib(*_run(server, *args)).code == 0
    shown = aib(
        "leaderboard", "--data-dir", "store", "--json", "--experiments", "stability,boundary"
    )
    assert shown.code == 0, shown.err
    rows = {row["model"]: row for row in shown.json()}
    firm, caving = rows["scripted-firm"], rows["scripted-caving"]
    assert firm["index"] is None and firm["partial"] == ["identity"]
    assert firm["stability"] == 10 and caving["stability"] == 0
    assert firm["distinctiveness"] is None  # identity items are not read
    assert firm["selection"]["experiments"] == ["stability", "boundary"]

    text = aib("leaderboard", "--data-dir", "store", "--experiments", "stability")
    assert "No index (partial): the formula needs the experiments identity, boundary" in text.out


def test_a_run_of_one_experiment_sends_only_its_scenarios(server: MockServer, aib: Any) -> None:
    suite = load_suite("v2")
    stability = [s for s in suite.scenarios if s.experiment == "stability"]
    result = aib(
        *_run(server, "--models", "scripted-firm", "--runs", "1", "--experiments", "stability")
    )
    assert result.code == 0, result.err
    turns = sum(len(s.turns) for s in stability)
    assert server.seen.request_count == turns + len(
        stability
    )  # subject turns + one judge call each
    assert "No index (partial): the selection leaves out identity, boundary" in result.out


def test_unknown_selector_values_name_the_valid_ones(server: MockServer, aib: Any) -> None:
    bad = aib(*_run(server, "--models", "scripted-firm", "--experiments", "identiy"))
    assert bad.code == 2
    assert bad.err.strip() == (
        "aib: error: --experiments: no 'identiy'; choose from: adaptive, boundary, control, "
        "escalation, identity, resistance, stability"
    )
    variant = aib(*_run(server, "--models", "scripted-firm", "--variants", "neutral"))
    assert variant.code == 2
    assert "--variants: no 'neutral' in suite v2; choose from: strong_independence" in variant.err
    mode = aib("estimate", "--models", "x", "--base-url", server.base_url, "--modes", "tool")
    assert mode.code == 2 and "choose from: tool_role, user_role" in mode.err
    assert server.seen.request_count == 0 and not Path("store").exists()

    assert aib(*_run(server, "--models", "scripted-firm", "--runs", "1")).code == 0
    missing = aib("report", "--data-dir", "store", "--no-charts", "--modes", "user_role")
    assert missing.code == 2
    assert "--modes: no 'user_role' in suite v2 in the store; choose from: tool_role" in missing.err
    assert "Traceback" not in missing.err


def test_reasoning_effort_overrides_every_tested_model(
    server: MockServer, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server stands in for OpenRouter: only OpenRouter is sent a `reasoning` object.
    monkeypatch.setenv("OPENROUTER_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    args = ["--models", "scripted-firm", "--runs", "1", "--scenarios", "direct"]
    result = aib(*_run(server, *args, "--reasoning-effort", "low"))
    assert result.code == 0, result.err
    subject = [r for r in server.seen.requests if r["model"] == "scripted-firm"]
    judge = [r for r in server.seen.requests if r["model"] == "scripted-judge"]
    assert subject and all(r["reasoning"] == {"effort": "low"} for r in subject)
    assert judge and all("reasoning" not in r for r in judge)
    assert "scripted-firm@low" in result.out
    bad = aib(*_run(server, *args, "--reasoning-effort", "extreme"))
    assert bad.code == 2 and "extreme" in bad.err


def test_the_report_states_the_selection(server: MockServer, aib: Any) -> None:
    assert aib(*_run(server, "--models", "scripted-firm", "--runs", "2")).code == 0
    out = aib(
        "report", "--data-dir", "store", "--no-charts", "--resamples", "200",
        "--experiments", "identity",
    )  # fmt: skip
    assert out.code == 0, out.err
    markdown = Path("store/report/LEADERBOARD.md").read_text(encoding="utf-8")
    assert "Selection: experiments identity — only those items are shown." in markdown
    assert "The index is not computed (partial)" in markdown
    document = json.loads(Path("store/report/results.json").read_text(encoding="utf-8"))
    (suite,) = document["suites"]
    assert suite["selection"]["experiments"] == ["identity"]
    assert suite["partial"] == ["boundary", "stability"]
    assert {item["experiment"] for item in suite["items"]} == {"identity"}
