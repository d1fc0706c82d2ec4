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
import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from json.encoder import encode_basestring
from typing import Any, Literal

from independence_bench.clients.protocol import Completion
from independence_bench.store.records import TurnRecord, completion_to_row
from independence_bench.text.lossless import (
    escape_surrogates,
    from_sql,
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


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""One encoder for every canonical spelling (`json.dumps` with options builds one per call)."""


@dataclasses.dataclass
class KnownIds:
    """Digest → row id of the texts and of the messages one connection has written or found,
    so a text seen before costs no statement. `Store` keeps one per connection and clears it
    on any rollback, so it names only committed rows (no row of either table is ever deleted).
    Two maps, not one: a text may hash like a message (a reply reading `message\\0{…}`)."""

    texts: dict[bytes, int] = dataclasses.field(default_factory=dict)
    messages: dict[bytes, int] = dataclasses.field(default_factory=dict)

    def clear(self) -> None:
        self.texts.clear()
        self.messages.clear()


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
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT (a full disk) leaves it open
                db.execute("ROLLBACK")
            raise
        return
    db.execute("SAVEPOINT record")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK TO record")
        db.execute("RELEASE record")
        raise
    db.execute("RELEASE record")


@dataclasses.dataclass(frozen=True)
class EncodedRequest:
    """A request's canonical JSON, encoded once in parts: each message's, and each other
    field's value. `request_keys` hashes it into the completion's key and the store keeps the
    same parts (`put_request`), so no text of a call is encoded twice. Lone surrogates are
    left as they are here (the key hashes them so); the store escapes them as it always did."""

    fields: Mapping[str, str]
    """Field name → its value's canonical JSON, for every field but `messages`."""
    messages: tuple[str, ...]
    """Each message's canonical JSON, in order."""


def encode_request(request: Mapping[str, Any]) -> EncodedRequest | None:
    """`request` (a stored request: a `messages` list and other fields) in canonical parts;
    None for anything else (an import's odd request), which `put_request` encodes whole."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not all(isinstance(k, str) for k in request):
        return None
    return EncodedRequest(
        fields={k: _encoded(v) for k, v in request.items() if k != "messages"},
        messages=tuple(_CANONICAL.encode(message) for message in messages),
    )


def _encoded(value: Any) -> str:
    """`_CANONICAL.encode(value)`; strings, None, integers and finite floats (most of a
    request's fields) spelled as the encoder spells them, without its setup."""
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return _CANONICAL.encode(value)


def joined_object(parts: Mapping[str, str]) -> str:
    """The canonical JSON object whose members are `parts` (name → the value's canonical
    JSON): the same text `canonical_json` gives for the object itself, keys sorted."""
    members = (f"{encode_basestring(name)}:{parts[name]}" for name in sorted(parts))
    return "{" + ",".join(members) + "}"


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: one spelling per value, for hashes and stored fields;
    each lone surrogate as its `\\uXXXX` escape, as `lossless.json_dumps` writes it."""
    return _canonical(value)[0]


def _canonical(value: Any) -> tuple[str, bytes]:
    """`canonical_json(value)` and its UTF-8 bytes, encoded once."""
    return _escaped(_CANONICAL.encode(value))


def _escaped(text: str) -> tuple[str, bytes]:
    """Canonical JSON text with lone surrogates escaped, and its UTF-8 bytes: the strict
    encode the digest needs anyway is also the check for surrogates (almost never there)."""
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError:
        text = escape_surrogates(text)
        return text, text.encode("utf-8")


def put_text(db: sqlite3.Connection, text: str, known: KnownIds | None = None) -> int:
    """The id of `text` in `texts`, added when it is not there yet (`known`: see `KnownIds`)."""
    digest = _digest(utf8(text))
    return _text_id(db, digest, text, known)


def _text_id(db: sqlite3.Connection, digest: bytes, text: str, known: KnownIds | None) -> int:
    def insert() -> int:
        sql = "INSERT INTO texts (digest, body) VALUES (?, ?)"
        return _row_id(db.execute(sql, (digest, to_sql(text))))

    return _interned(db, "texts", digest, None if known is None else known.texts, insert)


def _interned(
    db: sqlite3.Connection,
    table: Literal["texts", "messages"],
    digest: bytes,
    seen: dict[bytes, int] | None,
    insert: Callable[[], int],
) -> int:
    """The id of the row of `table` with `digest`: one `seen` by this connection, one already
    in the table, or the one `insert` adds; remembered in `seen` (`KnownIds`)."""
    if seen is not None and (row_id := seen.get(digest)) is not None:
        return row_id
    row = db.execute(f"SELECT id FROM {table} WHERE digest = ?", (digest,)).fetchone()
    row_id = int(row[0]) if row is not None else insert()
    if seen is not None:
        seen[digest] = row_id
    return row_id


def _row_id(cursor: sqlite3.Cursor) -> int:
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def put_message(
    db: sqlite3.Connection,
    message: Any,
    known: KnownIds | None = None,
    encoded: str | None = None,
) -> int:
    """The id of one request message in `messages`, added when new (`known`: see `KnownIds`;
    `encoded`: the message's canonical JSON if it was encoded already, `EncodedRequest`).

    A message with a string `content` keeps that string as a text; any other JSON value
    (a message without text content, or something an import found) is kept whole as fields.
    """
    data = (_canonical(message) if encoded is None else _escaped(encoded))[1]
    digest = _digest(b"message\0" + data)

    def insert() -> int:
        content_id = None
        fields = message
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            content_id = put_text(db, message["content"], known)
            fields = {k: v for k, v in message.items() if k != "content"}
        sql = "INSERT INTO messages (digest, content_id, fields_json) VALUES (?, ?, ?)"
        return _row_id(db.execute(sql, (digest, content_id, to_sql(canonical_json(fields)))))

    return _interned(db, "messages", digest, None if known is None else known.messages, insert)


def put_request(
    db: sqlite3.Connection,
    request: Mapping[str, Any],
    known: KnownIds | None = None,
    encoded: EncodedRequest | None = None,
) -> tuple[str | None, int]:
    """A request as (its message ids as a JSON list, or None without a `messages` list; the
    text id of everything else). `encoded`: `request` already in canonical parts."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return None, _put_canonical(db, dict(request), known)
    if encoded is None:
        ids = [put_message(db, message, known) for message in messages]
        params = {k: v for k, v in request.items() if k != "messages"}
        params_id = _put_canonical(db, params, known)
    else:
        pairs = zip(messages, encoded.messages, strict=True)
        ids = [put_message(db, message, known, text) for message, text in pairs]
        text, data = _escaped(joined_object(encoded.fields))
        params_id = _text_id(db, _digest(data), text, known)
    return json.dumps(ids, separators=(",", ":")), params_id


def _put_canonical(db: sqlite3.Connection, value: Any, known: KnownIds | None) -> int:
    """`put_text(db, canonical_json(value))`, encoded once."""
    text, data = _canonical(value)
    return _text_id(db, _digest(data), text, known)


def write_completion(
    db: sqlite3.Connection,
    identity: Mapping[str, Any],
    request: Mapping[str, Any],
    completion: Completion,
    known: KnownIds | None = None,
    encoded: EncodedRequest | None = None,
) -> None:
    """Insert a `completions` row: `identity` (key, model, time), the request's message ids and
    parameters, the reply text's id and the reply's other fields (`records.completion_to_row`)."""
    message_ids, params_id = put_request(db, request, known, encoded)
    content = completion.content
    row = {
        **identity,
        **completion_to_row(completion),
        "message_ids": message_ids,
        "params_id": params_id,
        "content_id": None if content is None else put_text(db, content, known),
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


def transcript_to_sql(
    db: sqlite3.Connection, turns: Sequence[TurnRecord], known: KnownIds | None = None
) -> str | bytes:
    """An item's `transcript_json`: each turn's fields with its human text and reply as ids;
    a field at its default (a turn that kept the protocol, without note) is left out."""
    stored = []
    for turn in turns:
        entry = {
            k: v
            for k, v in turn.__dict__.items()
            if k not in ("human", "reply") and v != _TURN_DEFAULTS.get(k, _NO_DEFAULT)
        }
        entry["human_id"] = put_text(db, turn.human, known)
        entry["reply_id"] = put_text(db, turn.reply, known)
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
