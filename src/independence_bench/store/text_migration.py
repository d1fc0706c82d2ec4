"""Schema step 3: move a store's text into the content-addressed tables (`texts.py`).

Up to schema 2 each completion row held its whole request as JSON and its reply in place, and
each item its turns' words, so a conversation's earlier turns and the shared system prompt were
written again with every call. This step creates `texts` and `messages`, rewrites every
completion as message ids, a parameters text and a reply text (adding `cut_chars`, the reply
cap's flag, 0 for every older reply), and every transcript as text ids. It runs inside the
migration's one transaction (`opening.migrate`), so an interrupted upgrade leaves the store
as it was. Nothing is lost: every request, reply and turn reads back equal. The new
`completions` is a `WITHOUT ROWID` table: its key is stored once, not again in an index.
"""

from __future__ import annotations

import sqlite3

from independence_bench.store.texts import TEXT_TABLES, put_request, put_text
from independence_bench.text.lossless import from_sql, json_from_sql, json_to_sql

COPIED_COLUMNS = """tool_calls_json TEXT NOT NULL,
        reasoning TEXT,
        finish_reason TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        cost_usd REAL,
        latency_s REAL,
        served_by TEXT,
        created_at REAL NOT NULL"""
"""A completion's reply and usage columns as schema step 1 declared them, which this step copies
unchanged into the new table: one text for both steps, so they cannot disagree. Shipped in both:
never edit (a later change to a column is a new step)."""

COMPLETIONS = f"""
    CREATE TABLE completions_v2 (
        key TEXT PRIMARY KEY,
        model_id TEXT NOT NULL,
        message_ids TEXT,
        params_id INTEGER NOT NULL REFERENCES texts(id),
        content_id INTEGER REFERENCES texts(id),
        {COPIED_COLUMNS},
        cut_chars INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID
"""


def store_text_once(db: sqlite3.Connection) -> None:
    """Migrate a schema-2 store to schema 3 on `db`, inside the caller's transaction."""
    for statement in (*TEXT_TABLES.split(";"), COMPLETIONS):
        if statement.strip():
            db.execute(statement)
    rows = db.execute(
        "SELECT key, model_id, tool_calls_json, reasoning, finish_reason, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, served_by, created_at, request_json, content "
        "FROM completions ORDER BY rowid"
    )
    for row in rows:
        *copied, request_json, content = tuple(row)
        message_ids, params_id = put_request(db, json_from_sql(request_json))
        text = from_sql(content)
        content_id = None if text is None else put_text(db, text)
        db.execute(
            "INSERT INTO completions_v2 (key, model_id, tool_calls_json, reasoning, "
            "finish_reason, prompt_tokens, completion_tokens, cost_usd, latency_s, served_by, "
            "created_at, message_ids, params_id, content_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*copied, message_ids, params_id, content_id),
        )
    db.execute("DROP TABLE completions")
    db.execute("ALTER TABLE completions_v2 RENAME TO completions")
    item_ids = [row[0] for row in db.execute("SELECT id FROM items ORDER BY rowid")]
    for item_id in item_ids:
        (stored,) = db.execute(
            "SELECT transcript_json FROM items WHERE id = ?", (item_id,)
        ).fetchone()
        turns = [
            {
                **{k: v for k, v in turn.items() if k not in ("human", "reply")},
                "human_id": put_text(db, turn["human"]),
                "reply_id": put_text(db, turn["reply"]),
            }
            for turn in json_from_sql(stored)
        ]
        db.execute(
            "UPDATE items SET transcript_json = ? WHERE id = ?", (json_to_sql(turns), item_id)
        )
