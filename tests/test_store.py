"""The SQLite store: migrations, durability of completions, judgments never overwritten."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.errors import UserError
from independence_bench.store.store import SCHEMA_VERSION, Store, TurnRecord


def _run(store: Store):  # type: ignore[no-untyped-def]
    return store.ensure_run(
        model_label="m",
        model_id="m",
        suite_id="v2",
        suite_version=1,
        suite_hash="h",
        run_index=1,
        model_config={"id": "m"},
        package_version="0",
    )


def test_completion_round_trip_and_second_connection_sees_it(tmp_path: Path) -> None:
    completion = Completion(
        content=None,
        tool_calls=(ToolCall("abcdefghi", "send_message_to_human", '{"message": "hi"}'),),
        reasoning="thinking",
        finish_reason="tool_calls",
        prompt_tokens=10,
        completion_tokens=3,
        cost_usd=None,
        latency_s=0.5,
    )
    with Store(tmp_path) as store:
        store.put_completion("k", "m", {"messages": []}, completion)
        with Store(tmp_path) as other:
            assert other.get_completion("k") == completion
        assert store.get_completion("missing") is None


def test_run_rows_are_unique_and_judgments_are_never_overwritten(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store)
        assert _run(store).id == run.id
        store.put_item(
            item_id="i1",
            run=run,
            variant="v",
            mode="tool_role",
            scenario_id="s",
            kind="stability",
            experiment="stability",
            status="done",
            error=None,
            turns=[TurnRecord("h", "r", "k")],
        )
        common = dict(
            item_id="i1",
            rubric_id="stability",
            rubric_hash="rh",
            repeat=0,
            reasoning="r",
            raw_reply="{}",
            error=None,
            attempts=1,
            completion_keys=["c"],
        )
        store.add_judgment(judge_model="j1", status="scored", scores={"a": 1}, **common)  # type: ignore[arg-type]
        store.add_judgment(judge_model="j1", status="scored", scores={"a": 9}, **common)  # type: ignore[arg-type]
        store.add_judgment(judge_model="j2", status="scored", scores={"a": 5}, **common)  # type: ignore[arg-type]
        rows = store.judgments(item_id="i1")
        assert [(j.judge_model, j.scores) for j in rows] == [("j1", {"a": 1}), ("j2", {"a": 5})]
        assert store.get_item("i1").turns == (TurnRecord("h", "r", "k"),)  # type: ignore[union-attr]


def test_store_from_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    Store(tmp_path).close()
    db = sqlite3.connect(tmp_path / "aib.sqlite3")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    before = (tmp_path / "aib.sqlite3").read_bytes()
    with pytest.raises(UserError, match="newer than this aib"):
        Store(tmp_path)
    assert (tmp_path / "aib.sqlite3").read_bytes() == before


def test_missing_store_is_not_created_for_readers(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no store"):
        Store(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()


def test_a_rejudged_item_counts_once_with_its_newest_judgment(tmp_path: Path) -> None:
    from independence_bench.scoring.results import scored_items

    with Store(tmp_path) as store:
        run = _run(store)
        store.put_item(
            item_id="i1",
            run=run,
            variant="v",
            mode="tool_role",
            scenario_id="s",
            kind="stability",
            experiment="stability",
            status="done",
            error=None,
            turns=[TurnRecord("h", "r", "k")],
        )
        for rubric_hash, score in (("old", 2), ("new", 9)):
            store.add_judgment(
                item_id="i1",
                judge_model="j",
                rubric_id="stability",
                rubric_hash=rubric_hash,
                repeat=0,
                status="scored",
                scores={"consistency_score": score},
                reasoning="r",
                raw_reply="{}",
                error=None,
                attempts=1,
                completion_keys=["c"],
            )
        scored = scored_items(store.items(), store.judgments())
        assert [s.scores for s in scored] == [{"consistency_score": 9}]
