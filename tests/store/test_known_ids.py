"""A text or message this connection has written costs no statement the second time
(`texts.KnownIds`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from independence_bench.store.store import Store
from independence_bench.store.texts import KnownIds, put_message, put_text


def _db(data_dir: Path) -> tuple[sqlite3.Connection, list[str]]:
    db = Store(data_dir).connection
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    return db, statements


def test_a_text_seen_before_costs_no_statement(tmp_path: Path) -> None:
    db, statements = _db(tmp_path)
    known = KnownIds()
    first = put_text(db, "a reply", known)
    statements.clear()
    assert put_text(db, "a reply", known) == first
    assert statements == []
    assert put_text(db, "a reply") == first  # without the map: found in the table, not added
    assert [s.split()[0] for s in statements] == ["SELECT"]


def test_a_message_seen_before_costs_no_statement_and_keeps_its_text(tmp_path: Path) -> None:
    db, statements = _db(tmp_path)
    known = KnownIds()
    message = {"role": "user", "content": "hi"}
    first = put_message(db, message, known)
    statements.clear()
    assert put_message(db, dict(message), known) == first
    assert statements == []
    assert known.texts and known.messages  # the content went in as a text of its own
    assert put_message(db, {"role": "user", "content": "other"}, known) != first
