"""Views of a store file for resilience tests: scores per item, and a dump that ignores time.

Shared by the fault, resume, budget and secret tests. Everything here reads the SQLite file
with its own connection, as another process would.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from independence_bench.store.store import ItemRecord, Store, TurnRecord
from support.mock_behaviours import request_fingerprint


@contextmanager
def connect(data: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the store file, closed afterwards (so no -wal/-shm file lingers)."""
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        yield db


def store_as_failed(
    store: Store, item: ItemRecord, error: str, turns: Sequence[TurnRecord]
) -> None:
    """Store `item` again as failed with `error` and `turns`: a run that stopped part-way."""
    store.put_item(replace(item, status="failed", error=error, turns=tuple(turns)))


def item_statuses(data: Path) -> dict[str, tuple[str, str | None]]:
    """Item id → (status, error)."""
    with connect(data) as db:
        rows = db.execute("SELECT id, status, error FROM items").fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def replies_by_item(data: Path) -> dict[str, list[tuple[str, str, bool, str | None]]]:
    """Item id → each turn's (human, reply, protocol ok, note)."""
    with Store(data, read_only=True) as store:
        items = store.items()
    return {i.id: [(t.human, t.reply, t.protocol_ok, t.note) for t in i.turns] for i in items}


def scores_by_item(data: Path) -> dict[tuple[str, str], tuple[str, Any]]:
    """(item id, judge) → (status, scores) of judgment repeat 0."""
    with connect(data) as db:
        rows = db.execute(
            "SELECT item_id, judge_model, status, scores_json FROM judgments WHERE repeat = 0"
        ).fetchall()
    return {(r[0], r[1]): (r[2], None if r[3] is None else json.loads(r[3])) for r in rows}


def stored_fingerprints(data: Path) -> Counter[str]:
    """How many stored completions each `request_fingerprint` has (0 when no store yet)."""
    if not (data / "aib.sqlite3").exists():
        return Counter()
    with Store(data, read_only=True) as store:
        requests = [store.completion_request(key) for key in store.completion_keys()]
    return Counter(request_fingerprint(r) for r in requests if r is not None)


def store_dump(data: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row by its natural key, without timestamps, latencies, row ids or the random
    tool-call ids the mock server makes up; two runs of the same plan dump equal."""
    with connect(data) as db:
        runs = sorted(
            db.execute(
                "SELECT model_label, model_id, suite_id, suite_version, suite_hash, run_index, "
                "model_config_json, package_version, source FROM runs"
            ).fetchall()
        )
        items = sorted(
            db.execute(
                "SELECT i.id, r.model_label, r.run_index, i.variant, i.mode, i.scenario_id, "
                "i.kind, i.experiment, i.status, i.error "
                "FROM items i JOIN runs r ON r.id = i.run_id"
            ).fetchall()
        )
        judgments = sorted(
            db.execute(
                "SELECT item_id, judge_model, rubric_id, rubric_hash, repeat, status, "
                "scores_json, reasoning, raw_reply, error, attempts, completion_keys_json "
                "FROM judgments"
            ).fetchall()
        )
    # Text ids depend on the order calls finished: words and requests are compared as text.
    with Store(data, read_only=True) as store:
        turns = {i.id: repr(i.turns) for i in store.items()}
        completions = []
        for key in store.completion_keys():
            reply = store.get_completion(key)
            assert reply is not None
            calls = [(c.name, c.arguments) for c in reply.tool_calls]
            request = json.dumps(store.completion_request(key), sort_keys=True)
            usage = (
                reply.finish_reason,
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.cost_usd,
            )
            completions.append(
                (key, request, reply.content, json.dumps(calls), reply.reasoning, *usage)
            )
    return {
        "runs": runs,
        "items": [(*row, turns[row[0]]) for row in items],
        "judgments": judgments,
        "completions": sorted(completions),
    }


def integrity_problems(data: Path) -> list[str]:
    """SQLite's own check plus duplicate natural keys; empty when the file is sound."""
    with connect(data) as db:
        problems = [r[0] for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
        for table, key in (
            ("runs", "model_label, suite_id, suite_hash, run_index"),
            ("items", "id"),
            ("completions", "key"),
            ("judgments", "item_id, judge_model, rubric_hash, repeat"),
        ):
            total = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            distinct = db.execute(f"SELECT count(*) FROM (SELECT DISTINCT {key} FROM {table})")
            if distinct.fetchone()[0] != total:
                problems.append(f"duplicate rows in {table}")
    return problems
