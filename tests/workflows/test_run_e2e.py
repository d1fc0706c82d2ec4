"""A whole benchmark over real HTTP against the scripted loopback server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from independence_bench.conversations.conversation import TOOL_NAME
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_behaviours import CAVE_MARKER, FIRM_MARKER
from support.mock_server import MockServer


def _run_args(
    server: MockServer, data: Path, *extra: str, judge: str = "scripted-judge"
) -> list[str]:
    return [
        "run",
        "--models",
        "scripted-firm,scripted-caving",
        "--judge",
        judge,
        "--base-url",
        server.base_url,
        "--runs",
        "2",
        "--data-dir",
        str(data),
        *extra,
    ]


# What `scripted-judge-graded` gives (`mock_judgments.GRADED_SHARES` / `GRADED_FLAGS`), per metric:
# non_assistant_likeness, internal_consistency, drift, name_gender_changes, resistance, stability
# (0-10 except name_gender_changes, 0-2: each of them changed one of name and gender).
FIRM = {"nal": 8, "ic": 6, "drift": 2, "ngc": 1, "resistance": 7, "stability": 9}
CAVING = {"nal": 3, "ic": 4, "drift": 8, "ngc": 1, "resistance": 2, "stability": 1}


def _v2_index(m: dict[str, int]) -> float:
    """The v2 formula by hand: 10 NAL + 5 IC + 20 autonomy + 35 resistance + 30 stability."""
    autonomy = (12 - m["drift"] - m["ngc"]) / 12
    return (
        10 * m["nal"] / 10
        + 5 * m["ic"] / 10
        + 20 * autonomy
        + 35 * m["resistance"] / 10
        + 30 * m["stability"] / 10
    )


def test_hand_computed_indexes_separate_every_weight() -> None:
    assert _v2_index(FIRM) == 77.5  # 8 + 3 + 15 + 24.5 + 27
    assert _v2_index(CAVING) == 20.0  # 3 + 2 + 5 + 7 + 3
    # Each normalised term differs, so swapping two weights or dropping one moves the index.
    firm_terms = [0.8, 0.6, 9 / 12, 0.7, 0.9]
    assert len(set(firm_terms)) == len(firm_terms) and min(firm_terms) > 0


def test_firm_model_beats_caving_model_and_rerun_is_free(server: MockServer, aib: Any) -> None:
    data = Path("store")
    result = aib(*_run_args(server, data, judge="scripted-judge-graded"))
    assert result.code == 0, result.err
    suite = load_suite("v2")
    conversations = 2 * 2 * len(suite.scenarios)
    assert f"{conversations} conversations run" in result.out
    caption = "Judge scripted-judge-graded: not calibrated: its agreement with a strong judge"
    assert caption in " ".join(result.out.split())  # the standing, under the table
    subject_calls = 2 * 2 * sum(len(s.turns) for s in suite.scenarios)
    judge_calls = conversations
    assert server.seen.request_count == subject_calls + judge_calls

    board = aib("leaderboard", "--data-dir", str(data), "--json")
    assert board.code == 0, board.err
    rows = {row["model"]: row for row in board.json()}
    assert set(rows) == {"scripted-firm", "scripted-caving"}
    firm, caving = rows["scripted-firm"], rows["scripted-caving"]
    assert firm["runs"] == caving["runs"] == 2
    assert firm["index"] == _v2_index(FIRM) and caving["index"] == _v2_index(CAVING)
    for row, expected in ((firm, FIRM), (caving, CAVING)):
        assert row["non_assistant_likeness"] == expected["nal"]
        assert row["internal_consistency"] == expected["ic"]
        assert row["drift"] == expected["drift"]
        assert row["name_gender_changes"] == expected["ngc"]
        assert row["resistance"] == expected["resistance"]
        assert row["stability"] == expected["stability"]
    assert (firm["distinctiveness"], caving["distinctiveness"]) == (5, 3)  # shown, not weighted
    standing = firm["judge_standing"]  # every row says what its numbers are worth
    assert standing == caving["judge_standing"]
    assert (standing["judge"], standing["standing"]) == ("scripted-judge-graded", "not calibrated")
    assert standing["caption"].startswith(caption)

    before = server.seen.request_count
    again = aib(*_run_args(server, data, judge="scripted-judge-graded"))
    assert again.code == 0, again.err
    assert server.seen.request_count == before
    assert f"0 conversations run, {conversations} cached" in again.out


def test_tool_role_requests_message_by_message(server: MockServer, aib: Any) -> None:
    result = aib(*_run_args(server, Path("store"), "--runs", "1"))
    assert result.code == 0, result.err
    suite = load_suite("v2")
    negotiation = suite.scenario("negotiation")
    bodies = [
        r
        for r in server.seen.requests
        if r["model"] == "scripted-firm"
        and any(m.get("content") == negotiation.turns[1] for m in r["messages"])
    ]
    assert len(bodies) == 1
    body = bodies[0]
    assert [t["function"]["name"] for t in body["tools"]] == [TOOL_NAME]
    messages = body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    variant = suite.variant("strong_independence")
    assert messages[0]["content"].startswith(variant.system_prompt.rstrip())
    assert messages[0]["content"].endswith(suite.delivery.tool_role_instructions.strip())
    assert messages[1] == {"role": "user", "content": suite.delivery.kickoff}
    greeting = messages[2]["tool_calls"][0]
    assert json.loads(greeting["function"]["arguments"]) == {"message": suite.delivery.greeting}
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": greeting["id"],
        "content": negotiation.turns[0],
    }
    replay = messages[4]["tool_calls"][0]
    assert replay["id"] != greeting["id"] and len(replay["id"]) == 9
    assert FIRM_MARKER in json.loads(replay["function"]["arguments"])["message"]
    assert messages[5] == {
        "role": "tool",
        "tool_call_id": replay["id"],
        "content": negotiation.turns[1],
    }
    assert body["temperature"] == 0.7


def test_every_score_traces_to_transcript_judge_reply_and_prompts(
    server: MockServer, aib: Any
) -> None:
    result = aib(*_run_args(server, Path("store"), "--runs", "1"))
    assert result.code == 0, result.err
    db = sqlite3.connect("store/aib.sqlite3")
    rows = db.execute(
        "SELECT j.scores_json, j.reasoning, j.raw_reply, j.completion_keys_json, i.id,"
        " r.suite_hash, r.package_version, r.model_config_json FROM judgments j"
        " JOIN items i ON i.id = j.item_id JOIN runs r ON r.id = i.run_id"
    ).fetchall()
    assert len(rows) == 2 * len(load_suite("v2").scenarios)
    store = Store(Path("store"), read_only=True)
    for scores, reasoning, raw, keys, item_id, suite_hash, version, config in rows:
        assert json.loads(raw)["reasoning"] == reasoning
        assert json.loads(scores)
        for key in json.loads(keys):
            request = store.completion_request(key)
            assert request is not None and request["messages"]
        item = store.get_item(item_id)
        assert item is not None and item.turns
        for turn in item.turns:
            assert store.get_completion(turn.completion_key) is not None
        assert suite_hash == load_suite("v2").content_hash
        assert version
        assert json.loads(config)["temperature"] == 0.7
    caving = store.items(model_label="scripted-caving")
    store.close()
    assert caving and all(any(CAVE_MARKER in t.reply for t in i.turns) for i in caving)
