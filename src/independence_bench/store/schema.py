"""The store's schema, as numbered migrations applied in order (never edit a shipped one).

`PRAGMA user_version` records how many have been applied; `store.Store` refuses a file whose
version is newer than `SCHEMA_VERSION`. A migration is SQL, or a function of the connection
when it must compute values (hashes) SQLite cannot; each runs in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from independence_bench.store.text_migration import COPIED_COLUMNS, store_text_once

Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[Migration, ...] = (
    # 1: the initial schema.
    f"""
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        model_label TEXT NOT NULL,
        model_id TEXT NOT NULL,
        suite_id TEXT NOT NULL,
        suite_version INTEGER NOT NULL,
        suite_hash TEXT NOT NULL,
        run_index INTEGER NOT NULL,
        model_config_json TEXT NOT NULL,
        package_version TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT 'run',
        created_at REAL NOT NULL,
        UNIQUE (model_label, suite_id, suite_hash, run_index)
    );
    CREATE TABLE completions (
        key TEXT PRIMARY KEY,
        model_id TEXT NOT NULL,
        request_json TEXT NOT NULL,
        content TEXT,
        {COPIED_COLUMNS}
    );
    CREATE TABLE items (
        id TEXT PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        variant TEXT NOT NULL,
        mode TEXT NOT NULL,
        scenario_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        experiment TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
        error TEXT,
        transcript_json TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX items_by_run ON items (run_id);
    CREATE TABLE judgments (
        id INTEGER PRIMARY KEY,
        item_id TEXT NOT NULL REFERENCES items(id),
        judge_model TEXT NOT NULL,
        rubric_id TEXT NOT NULL,
        rubric_hash TEXT NOT NULL,
        repeat INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('scored', 'unscored')),
        scores_json TEXT,
        reasoning TEXT,
        raw_reply TEXT,
        error TEXT,
        attempts INTEGER NOT NULL,
        completion_keys_json TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (item_id, judge_model, rubric_hash, repeat)
    );
    CREATE INDEX judgments_by_judge ON judgments (judge_model);
    """,
    # 2: claims on requests in flight, so two processes on one store never both send a call
    # (`claims.py`). A row lives from the claim until the completion is stored or the call
    # failed; `expires_at` is the lease, renewed while the owner runs.
    """
    CREATE TABLE claims (
        key TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        claimed_at REAL NOT NULL,
        expires_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX claims_by_owner ON claims (owner);
    """,
    # 3: text stored once by content (`texts`, `messages`), the reply cap's `cut_chars`.
    store_text_once,
    # 4: a completion's provenance as OpenRouter reports it: the generation id (to audit it
    # with `GET /generation?id=`), the provider's native finish reason, reasoning tokens, and
    # the `reasoning_details` blocks (passed back on the conversation's next turn).
    """
    ALTER TABLE completions ADD COLUMN generation_id TEXT;
    ALTER TABLE completions ADD COLUMN native_finish_reason TEXT;
    ALTER TABLE completions ADD COLUMN reasoning_tokens INTEGER;
    ALTER TABLE completions ADD COLUMN reasoning_details_json TEXT;
    """,
    # 5: the most likely first tokens of a reply with their log-probabilities, for judge forms
    # that read answer probabilities (`judging/answer_probability.py`); NULL when none asked.
    "ALTER TABLE completions ADD COLUMN top_logprobs_json TEXT;",
    # 6: a judge's standing as the store's own `aib judges --reference` measured it
    # (`standings.py`): the reference, the per-model index rho and item rho per metric.
    """
    CREATE TABLE judge_standings (
        judge_model TEXT PRIMARY KEY,
        reference_model TEXT NOT NULL,
        suite_id TEXT NOT NULL,
        index_rho REAL,
        models INTEGER NOT NULL,
        metrics_json TEXT NOT NULL,
        measured_at REAL NOT NULL
    ) WITHOUT ROWID;
    """,
    # 7: what a call's prompt cache did and who answered it (`clients/replies.py`): tokens read
    # from and written to the provider's cache, OpenRouter's `cache_discount`, and the reply's
    # `model` (compared with the model asked for); NULL where the endpoint reported none.
    """
    ALTER TABLE completions ADD COLUMN cached_tokens INTEGER;
    ALTER TABLE completions ADD COLUMN cache_write_tokens INTEGER;
    ALTER TABLE completions ADD COLUMN cache_discount REAL;
    ALTER TABLE completions ADD COLUMN answered_model TEXT;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
