"""Text and messages stored once, by content: what keeps a store's size to what is new.

A conversation's request repeats everything said before it, and every model of a run shares
the same system prompt. So nothing long is stored in place: a *text* (a reply, a human turn, a
request's parameters) is a row of `texts` keyed by a digest of its `lossless.utf8` bytes, and
a *message* of a request is a row of `messages` keyed by a digest of its canonical JSON, with
its `content` string as a text id and its other fields (role, tool calls, tool call id) as
compact JSON. A completion refers to its request's messages as an ordered list of message ids
and to its reply text by id; an item's transcript refers to each turn's human text and reply by
id. The same text gets the same id in every run, model and import, so a row written twice is
written once. Text goes through `lossless.to_sql`, so nothing a server sent is ever altered.

These functions take the store's connection and are called only by `store.py` (and the
migration that moved older stores to this layout), so no reader needs to know it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.store.records import TurnRecord, completion_to_row
from independence_bench.text.lossless import (
    from_sql,
    json_dumps,
    json_from_sql,
    json_to_sql,
    to_sql,
    utf8,
)

TEXT_TABLES = """
    CREATE TABLE texts (
        id INTEGER PRIMARY KEY,
        digest BLOB NOT NULL UNIQUE,
        body NOT NULL
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        digest BLOB NOT NULL UNIQUE,
        content_id INTEGER REFERENCES texts(id),
        fields_json NOT NULL
    );
"""
"""The two content-addressed tables; `body` and `fields_json` hold TEXT, or a `surrogatepass`
BLOB for text strict UTF-8 refuses (`lossless.to_sql`)."""
DIGEST_BYTES = 16
"""A digest is the first 128 bits of a sha256: no collision is expected before 2^64 rows, and
each row and its index entry stay small (issue 13 counts every byte a call adds)."""


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[:DIGEST_BYTES]


@contextmanager
def atomic(db: sqlite3.Connection) -> Iterator[None]:
    """One record's several statements as a unit: a transaction of its own, or a savepoint
    inside the caller's (an import's `Store.transaction()`)."""
    if not db.in_transaction:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return
    db.execute("SAVEPOINT record")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK TO record")
        db.execute("RELEASE record")
        raise
    db.execute("RELEASE record")


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: one spelling per value, for hashes and stored fields."""
    return json_dumps(value, sort_keys=True, separators=(",", ":"))


def put_text(db: sqlite3.Connection, text: str) -> int:
    """The id of `text` in `texts`, added when it is not there yet."""
    digest = _digest(utf8(text))
    row = db.execute("SELECT id FROM texts WHERE digest = ?", (digest,)).fetchone()
    if row is not None:
        return int(row[0])
    cursor = db.execute("INSERT INTO texts (digest, body) VALUES (?, ?)", (digest, to_sql(text)))
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def put_message(db: sqlite3.Connection, message: Any) -> int:
    """The id of one request message in `messages`, added when new.

    A message with a string `content` keeps that string as a text; any other JSON value
    (a message without text content, or something an import found) is kept whole as fields.
    """
    digest = _digest(b"message\0" + utf8(canonical_json(message)))
    row = db.execute("SELECT id FROM messages WHERE digest = ?", (digest,)).fetchone()
    if row is not None:
        return int(row[0])
    content_id = None
    fields = message
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        content_id = put_text(db, message["content"])
        fields = {k: v for k, v in message.items() if k != "content"}
    cursor = db.execute(
        "INSERT INTO messages (digest, content_id, fields_json) VALUES (?, ?, ?)",
        (digest, content_id, to_sql(canonical_json(fields))),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def put_request(db: sqlite3.Connection, request: Mapping[str, Any]) -> tuple[str | None, int]:
    """A request as (its message ids as a JSON list, or None without a `messages` list; the
    text id of everything else)."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return None, put_text(db, canonical_json(dict(request)))
    ids = [put_message(db, message) for message in messages]
    params = {k: v for k, v in request.items() if k != "messages"}
    return json.dumps(ids, separators=(",", ":")), put_text(db, canonical_json(params))


def write_completion(
    db: sqlite3.Connection,
    identity: Mapping[str, Any],
    request: Mapping[str, Any],
    completion: Completion,
) -> None:
    """Insert a `completions` row: `identity` (key, model, time), the request's message ids and
    parameters, the reply text's id and the reply's other fields (`records.completion_to_row`)."""
    message_ids, params_id = put_request(db, request)
    content = completion.content
    row = {
        **identity,
        **completion_to_row(completion),
        "message_ids": message_ids,
        "params_id": params_id,
        "content_id": None if content is None else put_text(db, content),
    }
    columns = ", ".join(row)
    placeholders = ", ".join("?" * len(row))
    db.execute(f"INSERT INTO completions ({columns}) VALUES ({placeholders})", tuple(row.values()))


def _rows_by_id(db: sqlite3.Connection, table: str, ids: Iterable[int]) -> list[sqlite3.Row]:
    """The rows of `texts` or `messages` with these ids, a bounded number per statement."""
    assert table in ("texts", "messages")
    wanted = sorted(set(ids))
    rows: list[sqlite3.Row] = []
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        placeholders = ",".join("?" * len(chunk))
        cursor = db.execute(f"SELECT * FROM {table} WHERE id IN ({placeholders})", chunk)
        rows.extend(cursor.fetchall())
    return rows


def read_texts(db: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """Text id → text, for every id given (a missing id is a damaged store: KeyError later)."""
    return {int(r[0]): str(from_sql(r[2])) for r in _rows_by_id(db, "texts", ids)}


def read_request(db: sqlite3.Connection, message_ids: str | None, params_id: int) -> dict[str, Any]:
    """The request `put_request` stored, messages in their order."""
    request: dict[str, Any] = json.loads(read_texts(db, [params_id])[params_id])
    if message_ids is None:
        return request
    ids: Sequence[int] = json.loads(message_ids)
    rows = {
        int(message_id): (content_id, json.loads(str(from_sql(fields))))
        for message_id, _, content_id, fields in _rows_by_id(db, "messages", ids)
    }
    contents = read_texts(db, (c for c, _ in rows.values() if c is not None))
    messages = []
    for message_id in ids:
        content_id, fields = rows[message_id]
        messages.append(
            fields if content_id is None else {**fields, "content": contents[content_id]}
        )
    return {**request, "messages": messages}


def transcript_to_sql(db: sqlite3.Connection, turns: Sequence[TurnRecord]) -> str | bytes:
    """An item's `transcript_json`: each turn's fields with its human text and reply as ids;
    a field at its default (a turn that kept the protocol, without note) is left out."""
    stored = []
    for turn in turns:
        entry = {
            k: v
            for k, v in turn.__dict__.items()
            if k not in ("human", "reply") and v != _TURN_DEFAULTS.get(k, _NO_DEFAULT)
        }
        entry["human_id"] = put_text(db, turn.human)
        entry["reply_id"] = put_text(db, turn.reply)
        stored.append(entry)
    return json_to_sql(stored)


def transcripts_from_sql(
    db: sqlite3.Connection, stored: Sequence[str | bytes], words: bool
) -> list[tuple[TurnRecord, ...]]:
    """The turns of each stored transcript; without `words`, human text and reply are empty
    and no text is read."""
    transcripts = [json_from_sql(value) for value in stored]
    ids = (t[k] for turns in transcripts for t in turns for k in ("human_id", "reply_id"))
    texts = read_texts(db, ids) if words else {}
    return [tuple(_turn(t, texts) for t in turns) for turns in transcripts]


_TURN_DEFAULTS = {
    f.name: f.default
    for f in dataclasses.fields(TurnRecord)
    if f.default is not dataclasses.MISSING
}
_NO_DEFAULT = object()


def _turn(stored: Mapping[str, Any], texts: Mapping[int, str]) -> TurnRecord:
    fields = {k: v for k, v in stored.items() if k not in ("human_id", "reply_id")}
    human = texts.get(stored["human_id"], "")
    reply = texts.get(stored["reply_id"], "")
    return TurnRecord(human=human, reply=reply, **fields)
