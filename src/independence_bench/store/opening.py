"""Opening a store file: what it must be before anything is read or written, and its upgrade.

A store carries `PRAGMA application_id` `APPLICATION_ID`; a file of another program is refused
unchanged (`refuse_foreign`), as is one written by a newer aib (`refuse_newer`). `migrate`
stamps the id and applies the missing numbered migrations of `schema.py`, each in one
transaction. `connect_read_only` is the connection of `Store(read_only=True)`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from independence_bench.errors import UserError
from independence_bench.store.schema import MIGRATIONS, SCHEMA_VERSION

APPLICATION_ID = 0x41494231
"""`PRAGMA application_id` of every store ("AIB1"): how a store tells itself from other files."""
_STAMP = "PRAGMA application_id = 1095320113"  # APPLICATION_ID; PRAGMA takes no parameter
STORE_COLUMNS = {
    "runs": {"model_label", "suite_hash", "run_index", "model_config_json"},
    "completions": {"key", "model_id", "finish_reason", "prompt_tokens"},
    "items": {"run_id", "variant", "transcript_json"},
    "judgments": {"item_id", "judge_model", "rubric_hash", "completion_keys_json"},
}
"""Tables and columns every store of every schema has. An unstamped file is an early store
only with all of them and a schema version of ours: another program's file may well have
tables named `runs` or `items` (one was stamped, switched to WAL and then crashed on)."""


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write and leaves the data directory as it found it.

    Where the file and its folder are writable, an ordinary connection with `query_only`: as
    the last connection it removes the `-wal`/`-shm` files a WAL store needs while it is open
    (a `mode=ro` connection would leave them behind). Elsewhere (a read-only folder or media)
    `mode=ro`, and `immutable=1` when even that fails (a WAL store without its `-shm` file),
    which is safe because nothing can write there."""
    uri = path.resolve().as_uri()
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    for query in ("mode=rw", "mode=ro", "immutable=1") if writable else ("mode=ro", "immutable=1"):
        try:
            db = sqlite3.connect(f"{uri}?{query}", uri=True, check_same_thread=False)
        except sqlite3.OperationalError:
            continue
        try:
            db.execute("PRAGMA query_only=ON")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)


def enable_wal(db: sqlite3.Connection, *, patience_s: float = 10.0) -> None:
    """Put the store in WAL mode, waiting out other processes that open it at the same time.

    Switching a new file to WAL needs its exclusive lock; when two connections both hold a
    shared lock and ask for it, SQLite answers one of them "database is locked" at once,
    without its busy handler (a deadlock, not a wait). So on "locked" this tries again, with
    a growing pause, for up to `patience_s` seconds; once one process has switched the file,
    the mode is stored in it and the others' switch is a no-op."""
    deadline = time.monotonic() + patience_s
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite file some other program owns: its application id is not ours, or it
    has no id and tables that are not a store of an earlier aib (which had no id)."""
    app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
    if app_id == APPLICATION_ID:
        return
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    tables = {str(row[0]) for row in rows}
    if app_id == 0 and (not tables or _is_early_store(db, tables)):
        return  # a new file, or a store written before stores were stamped
    db.close()
    raise UserError(
        f"{path} is not an aib store (another program's SQLite file); it was left "
        "unchanged; point --data-dir at another directory"
    )


def _is_early_store(db: sqlite3.Connection, tables: set[str]) -> bool:
    """Whether an unstamped file has our schema: a version we wrote, our tables and columns."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if not 1 <= version <= SCHEMA_VERSION or not tables >= STORE_COLUMNS.keys():
        return False
    for table, needed in STORE_COLUMNS.items():
        columns = {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}
        if not columns >= needed:
            return False
    return True


def refuse_newer(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a store whose schema is newer than this aib's."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        db.close()
        raise UserError(
            f"the store at {path} has schema version {version}, newer than this aib "
            f"understands ({SCHEMA_VERSION}); upgrade ai-independence-bench"
        )


def migrate(db: sqlite3.Connection) -> None:
    """Stamp the application id and apply each missing migration in its own transaction: an
    interrupted one leaves the store at the version before it.

    The version is read again inside each write transaction: two processes opening one store
    at once both see it old, and the one that waited for the write lock finds the migration
    already applied by the other and skips it."""
    if int(db.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
        db.execute(_STAMP)
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    for number in range(version, SCHEMA_VERSION):
        migration = MIGRATIONS[number]
        db.execute("BEGIN IMMEDIATE")
        try:
            if int(db.execute("PRAGMA user_version").fetchone()[0]) > number:
                db.execute("COMMIT")
                continue
            if callable(migration):
                migration(db)
            else:
                for statement in migration.split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(f"PRAGMA user_version = {number + 1}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def check_intact(db: sqlite3.Connection) -> None:
    """Raise SQLite's own "malformed" error, with its first finding, when the file is damaged.

    A command that reads only some tables (`aib runs` reads no texts) would otherwise show a
    damaged store as a table of counts. `PRAGMA quick_check` reads every page once (O(size),
    no index-to-table comparison); the CLI turns the error into its damaged-store line."""
    rows = [str(row[0]) for row in db.execute("PRAGMA quick_check(2)")]
    if rows == ["ok"]:
        return
    lines = [line.strip() for row in rows for line in row.splitlines()]
    first = next((line for line in lines if line and not line.startswith("***")), "")
    raise sqlite3.DatabaseError(f"database disk image is malformed: {first[:200]}")
