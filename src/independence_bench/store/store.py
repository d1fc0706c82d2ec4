"""The SQLite store: every completion, transcript and judgment a run produced, and what produced it.

One file, `<data-dir>/aib.sqlite3`, in WAL mode, one connection per process. Schema changes are
numbered migrations applied in order; a store written by a newer version is refused rather than
guessed at. Completions are keyed by a hash of everything that determined the request, so a
repeated command finds its answers here instead of paying for them again. Judgments are never
overwritten: another judge, or the same judge again, adds rows. All SQL is parameterised.
Requests, replies and turns' words are stored once by content (`texts.py`); the methods here
are the only readers and writers of that layout.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.errors import UserError
from independence_bench.store.by_key import completion_rows
from independence_bench.store.no_space import write_or_full
from independence_bench.store.opening import (
    APPLICATION_ID,
    connect_read_only,
    enable_wal,
    migrate,
    refuse_foreign,
    refuse_newer,
)
from independence_bench.store.records import (
    ItemRecord,
    JudgmentRecord,
    RunRecord,
    TurnRecord,
    Verdict,
    completion_from_row,
    completion_to_row,
    item_from_row,
    judgment_from_row,
    run_from_row,
)
from independence_bench.store.schema import SCHEMA_VERSION
from independence_bench.store.texts import (
    EncodedRequest,
    KnownIds,
    atomic,
    read_request,
    transcript_to_sql,
    transcripts_from_sql,
    write_completion,
)
from independence_bench.text.lossless import from_sql, json_to_sql, to_sql

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "STORE_FILENAME",
    "ItemRecord",
    "JudgmentRecord",
    "RunRecord",
    "Store",
    "TurnRecord",
    "Verdict",
    "completion_to_row",
]

STORE_FILENAME = "aib.sqlite3"


class Store:
    """The run store under one data directory. Use as a context manager or call `close()`.

    Each record type has one write method, shared by `aib run` (the engine) and `aib import`
    (`legacy/importer.py`), returning whether it changed the store. `imported_at=None` is a row
    this process produced now; a time is an imported row, which keeps that original time and
    is written only when new or changed, so importing the same folder twice leaves every row,
    timestamps included, unchanged. Completions and judgments are never overwritten. An
    import calls the writes inside `transaction()`.
    """

    def __init__(self, data_dir: Path, *, create: bool = True, read_only: bool = False) -> None:
        """Open (or, with `create`, make) the store under `data_dir`.

        `read_only` opens an existing store with SQLite's `mode=ro` (read-only media work too):
        nothing is written, not even the journal mode, except the upgrade of a store an older
        aib wrote (`_upgrade_older`). A file that is not an
        aib store is refused before anything is written to it (`opening.refuse_foreign`)."""
        self.path = data_dir / STORE_FILENAME
        self.read_only = read_only
        self._known = KnownIds()
        """The texts and messages this connection knows are stored (`texts.KnownIds`)."""
        if (read_only or not create) and not self.path.exists():
            raise UserError(
                f"no store at {self.path}; run 'aib run' first or point --data-dir at a store"
            )
        try:
            if read_only:
                self._db = connect_read_only(self.path)
            else:
                data_dir.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            # Refuse a foreign or newer file before anything (even the journal mode) is written.
            refuse_foreign(self._db, self.path)
            refuse_newer(self._db, self.path)
            self._db.execute("PRAGMA busy_timeout=10000")
            if not read_only:
                enable_wal(self._db)
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise UserError(
                f"cannot open the store at {self.path}: {exc}; choose a "
                + ("readable" if read_only else "writable")
                + " --data-dir"
            ) from None
        if read_only:
            self._upgrade_older(data_dir)
        else:
            migrate(self._db)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The one connection, for the modules that keep a table of their own (`claims.py`)."""
        return self._db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All statements inside commit together or not at all (a failed COMMIT too)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            self._known.clear()  # it may name rows the rollback removes
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        """`texts.atomic`, forgetting the known text ids when it rolls back."""
        try:
            with atomic(self._db):
                yield
        except BaseException:
            self._known.clear()
            raise

    def _upgrade_older(self, data_dir: Path) -> None:
        """Bring an older store up to this schema before a read-only command reads it.

        The upgrade is the one write a reading command makes, and only where the file and its
        folder are writable (the same migration `aib run` would make, in one transaction). On
        read-only media an older store is refused with the way out."""
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version >= SCHEMA_VERSION:
            return
        self._db.close()
        if not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)):
            raise UserError(
                f"the store at {self.path} has schema {version}, older than this aib's "
                f"({SCHEMA_VERSION}), and is read-only here; copy its folder somewhere "
                "writable and point --data-dir there once to upgrade it"
            )
        Store(data_dir, create=False).close()
        self._db = connect_read_only(self.path)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA busy_timeout=10000")

    # -- runs -------------------------------------------------------------------------------

    @write_or_full
    def ensure_run(
        self,
        *,
        model_label: str,
        model_id: str,
        suite_id: str,
        suite_version: int,
        suite_hash: str,
        run_index: int,
        model_config: Mapping[str, Any],
        package_version: str,
        imported_at: float | None = None,
    ) -> tuple[RunRecord, bool]:
        """The run row for this model, suite and run number, created if missing.

        A run keeps the row it finds. An imported row (source `import`) has its model id and
        configuration refreshed when they changed.
        """
        refresh = (
            "DO UPDATE SET model_id = excluded.model_id, "
            "model_config_json = excluded.model_config_json "
            "WHERE runs.model_id IS NOT excluded.model_id "
            "OR runs.model_config_json IS NOT excluded.model_config_json"
        )
        cursor = self._db.execute(
            "INSERT INTO runs (model_label, model_id, suite_id, suite_version, suite_hash, "
            "run_index, model_config_json, package_version, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (model_label, suite_id, suite_hash, run_index) "
            + ("DO NOTHING" if imported_at is None else refresh),
            (
                to_sql(model_label),
                to_sql(model_id),
                suite_id,
                suite_version,
                suite_hash,
                run_index,
                json_to_sql(model_config, sort_keys=True),
                package_version,
                "run" if imported_at is None else "import",
                _now_or(imported_at),
            ),
        )
        row = self._db.execute(
            "SELECT * FROM runs WHERE model_label = ? AND suite_id = ? AND suite_hash = ? "
            "AND run_index = ?",
            (to_sql(model_label), suite_id, suite_hash, run_index),
        ).fetchone()
        return run_from_row(row), cursor.rowcount > 0

    def runs(self, suite_id: str | None = None) -> list[RunRecord]:
        if suite_id is None:
            rows = self._db.execute("SELECT * FROM runs ORDER BY model_label, run_index")
        else:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE suite_id = ? ORDER BY model_label, run_index",
                (suite_id,),
            )
        return [run_from_row(r) for r in rows]

    def run_suites(self) -> list[str]:
        """The suite ids of the stored runs, sorted; a `UserError` when the store holds no run.

        Every reader of results starts here, before it loads the scoring and statistics code,
        so an empty store is reported at once.
        """
        rows = self._db.execute("SELECT DISTINCT suite_id FROM runs ORDER BY suite_id")
        suites = [str(suite_id) for (suite_id,) in rows]
        if not suites:
            raise UserError(f"the store at {self.path} holds no runs yet; run 'aib run' first")
        return suites

    # -- completions ------------------------------------------------------------------------

    def get_completion(self, key: str) -> Completion | None:
        row = self._db.execute(
            "SELECT completions.*, texts.body FROM completions "
            "LEFT JOIN texts ON texts.id = completions.content_id WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else completion_from_row(row, from_sql(row["body"]))

    @write_or_full
    def put_completion(
        self,
        key: str,
        model_id: str,
        request: Mapping[str, Any],
        completion: Completion,
        *,
        imported_at: float | None = None,
        encoded: EncodedRequest | None = None,
    ) -> bool:
        """Store a completion durably (committed before this returns, or with the caller's
        `transaction()`) unless its key exists.

        Keys cover everything that determined the request (an imported call's: its file), so an
        existing row is the same call and is kept. The request's messages and the reply text
        are stored once by content (`texts.py`): a call adds only what no earlier call held.
        `encoded` is `request` in canonical parts when the caller has them (`texts.EncodedRequest`).
        """
        with self._atomic():
            if self._db.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone():
                return False
            created_at = _now_or(imported_at)
            identity = {"key": key, "model_id": to_sql(model_id), "created_at": created_at}
            write_completion(self._db, identity, request, completion, self._known, encoded)
        return True

    def completion_request(self, key: str) -> dict[str, Any] | None:
        """The exact request of a stored completion (its messages in order), or None."""
        row = self._db.execute(
            "SELECT message_ids, params_id FROM completions WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else read_request(self._db, row[0], row[1])

    def cut_completions(self) -> set[str]:
        """Keys of the completions whose reply the reply cap cut."""
        rows = self._db.execute("SELECT key FROM completions WHERE cut_chars > 0")
        return {str(key) for (key,) in rows}

    def answered_models(self) -> dict[str, tuple[str, str]]:
        """Per completion key, (model asked, model that answered) where the reply named one."""
        rows = self._db.execute(
            "SELECT key, model_id, answered_model FROM completions WHERE answered_model IS NOT NULL"
        )
        return {
            str(key): (str(from_sql(asked)), str(from_sql(answered)))
            for key, asked, answered in rows
        }

    def cache_usage(self, keys: Sequence[str]) -> tuple[int, int, float]:
        """Of these completions: prompt tokens read from a cache, written to one, and the
        cache discount in USD (what caching saved; 0 where none was reported)."""
        read = written = 0
        saved = 0.0
        rows = completion_rows(self._db, "cached_tokens, cache_write_tokens, cache_discount", keys)
        for key in keys:
            row = rows.get(key)
            if row is not None:
                read += row[0] or 0
                written += row[1] or 0
                saved += row[2] or 0.0
        return read, written, saved

    def completion_keys(self) -> list[str]:
        """Every stored completion's key, in the order written (by time, then key)."""
        rows = self._db.execute("SELECT key FROM completions ORDER BY created_at, key")
        return [str(key) for (key,) in rows]

    def completion_costs(self, keys: Sequence[str]) -> list[float | None]:
        """Per key, in order, its stored cost in USD (None where unknown or not stored)."""
        rows = completion_rows(self._db, "cost_usd", keys)
        return [row[0] if (row := rows.get(key)) is not None else None for key in keys]

    # -- items ------------------------------------------------------------------------------

    @write_or_full
    def put_item(self, item: ItemRecord, *, imported_at: float | None = None) -> bool:
        """Write `item`, as the engine or the importer built it (only its run's id is read from
        `item.run`). A run replaces the stored one (a retried failure); an import replaces it
        only when its transcript, status or error differ. Each turn's human text and reply are
        stored once by content; the transcript holds their ids."""
        only_if_changed = (
            " WHERE items.status IS NOT excluded.status OR items.error IS NOT excluded.error "
            "OR items.transcript_json IS NOT excluded.transcript_json"
        )
        with self._atomic():
            transcript = transcript_to_sql(self._db, item.turns, self._known)
            cursor = self._db.execute(
                "INSERT INTO items (id, run_id, variant, mode, scenario_id, kind, experiment, "
                "status, error, transcript_json, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET status = excluded.status, error = excluded.error, "
                "transcript_json = excluded.transcript_json, updated_at = excluded.updated_at"
                + ("" if imported_at is None else only_if_changed),
                (
                    item.id,
                    item.run.id,
                    item.variant,
                    item.mode,
                    item.scenario_id,
                    item.kind,
                    item.experiment,
                    item.status,
                    to_sql(item.error),
                    transcript,
                    _now_or(imported_at),
                ),
            )
        return cursor.rowcount > 0

    def get_item(self, item_id: str) -> ItemRecord | None:
        rows = self._item_rows("WHERE items.id = ?", (item_id,))
        return rows[0] if rows else None

    def items(
        self,
        *,
        suite_id: str | None = None,
        status: str | None = None,
        model_label: str | None = None,
        words: bool = True,
    ) -> list[ItemRecord]:
        """Stored items, by model, run and order written; narrowed by suite, status or model.

        `words=False` leaves each turn's human text and reply empty: for readers that count
        and score (reports, the leaderboard), so a store's transcripts stay on disk.
        """
        clauses: list[str] = []
        params: list[Any] = []
        if suite_id is not None:
            clauses.append("runs.suite_id = ?")
            params.append(suite_id)
        if status is not None:
            clauses.append("items.status = ?")
            params.append(status)
        if model_label is not None:
            clauses.append("runs.model_label = ?")
            params.append(to_sql(model_label))
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._item_rows(where, tuple(params), words=words)

    def _item_rows(
        self, where: str, params: tuple[Any, ...], *, words: bool = True
    ) -> list[ItemRecord]:
        sql = (
            "SELECT items.*, runs.id AS r_id, runs.model_label, runs.model_id, runs.suite_id, "
            "runs.suite_version, runs.suite_hash, runs.run_index, runs.model_config_json, "
            "runs.package_version, runs.source FROM items JOIN runs ON runs.id = items.run_id "
            f"{where} ORDER BY runs.model_label, runs.run_index, items.rowid"
        )
        rows = self._db.execute(sql, params).fetchall()
        transcripts = transcripts_from_sql(self._db, [r["transcript_json"] for r in rows], words)
        # A run's row repeats on each of its items: read once per run, not once per item.
        runs: dict[int, RunRecord] = {}
        return [item_from_row(r, t, runs) for r, t in zip(rows, transcripts, strict=True)]

    def item_status(self, item_id: str) -> str | None:
        row = self._db.execute("SELECT status FROM items WHERE id = ?", (item_id,)).fetchone()
        return None if row is None else str(row[0])

    # -- judgments --------------------------------------------------------------------------

    def judged_hashes(self, judge_model: str) -> dict[tuple[str, int], set[str]]:
        """Per (item id, repeat), the rubric hashes `judge_model` has a judgment under."""
        rows = self._db.execute(
            "SELECT item_id, repeat, rubric_hash FROM judgments WHERE judge_model = ?",
            (to_sql(judge_model),),
        )
        hashes: dict[tuple[str, int], set[str]] = {}
        for item, repeat, rubric_hash in rows:
            hashes.setdefault((str(item), int(repeat)), set()).add(str(rubric_hash))
        return hashes

    def has_judgment(self, item_id: str, judge_model: str, rubric_hash: str, repeat: int) -> bool:
        return self.judgment_status(item_id, judge_model, rubric_hash, repeat) is not None

    def judgment_status(
        self, item_id: str, judge_model: str, rubric_hash: str, repeat: int
    ) -> str | None:
        """The status ('scored' or 'unscored') of this judgment, None when there is none: the
        re-run's check per item, without decoding the whole row as `find_judgment` does."""
        row = self._db.execute(
            "SELECT status FROM judgments WHERE item_id = ? AND judge_model = ? "
            "AND rubric_hash = ? AND repeat = ?",
            (item_id, to_sql(judge_model), rubric_hash, repeat),
        ).fetchone()
        return None if row is None else str(row[0])

    def find_judgment(
        self, item_id: str, judge_model: str, rubric_hash: str, repeat: int
    ) -> JudgmentRecord | None:
        """The judgment row of this item, judge, rubric and repeat, if there is one."""
        row = self._db.execute(
            "SELECT * FROM judgments WHERE item_id = ? AND judge_model = ? AND rubric_hash = ? "
            "AND repeat = ?",
            (item_id, to_sql(judge_model), rubric_hash, repeat),
        ).fetchone()
        return None if row is None else judgment_from_row(row)

    @write_or_full
    def add_judgment(
        self,
        *,
        item_id: str,
        judge_model: str,
        rubric_id: str,
        rubric_hash: str,
        repeat: int,
        verdict: Verdict,
        imported_at: float | None = None,
    ) -> bool:
        """Add `verdict` as the judgment of this item, judge, rubric and repeat; an existing row
        for the same key is kept, never overwritten — except an *unscored* row, which a new
        judging pass (not an import) replaces with its verdict: the earlier replies stay in
        `completions`, the row names the new requests."""
        replace_unscored = (
            " ON CONFLICT (item_id, judge_model, rubric_hash, repeat) DO UPDATE SET "
            "rubric_id = excluded.rubric_id, status = excluded.status, "
            "scores_json = excluded.scores_json, reasoning = excluded.reasoning, "
            "raw_reply = excluded.raw_reply, error = excluded.error, "
            "attempts = excluded.attempts, completion_keys_json = excluded.completion_keys_json, "
            "created_at = excluded.created_at WHERE judgments.status = 'unscored'"
        )
        imported = imported_at is not None
        sql = (
            ("INSERT OR IGNORE" if imported else "INSERT")
            + " INTO judgments (item_id, judge_model, rubric_id, rubric_hash, "
            "repeat, status, scores_json, reasoning, raw_reply, error, attempts, "
            "completion_keys_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            + ("" if imported else replace_unscored)
        )
        cursor = self._db.execute(
            sql,
            (
                item_id,
                to_sql(judge_model),
                rubric_id,
                rubric_hash,
                repeat,
                verdict.status,
                None if verdict.scores is None else json_to_sql(verdict.scores),
                to_sql(verdict.reasoning),
                to_sql(verdict.raw_reply),
                to_sql(verdict.error),
                verdict.attempts,
                json.dumps(list(verdict.completion_keys)),
                _now_or(imported_at),
            ),
        )
        return cursor.rowcount > 0

    def judgments(
        self, *, judge_model: str | None = None, item_id: str | None = None
    ) -> list[JudgmentRecord]:
        clauses: list[str] = []
        params: list[Any] = []
        if judge_model is not None:
            clauses.append("judge_model = ?")
            params.append(to_sql(judge_model))
        if item_id is not None:
            clauses.append("item_id = ?")
            params.append(item_id)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self._db.execute(f"SELECT * FROM judgments {where} ORDER BY id", tuple(params))
        return [judgment_from_row(r) for r in rows]

    def judge_models(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT judge_model FROM judgments ORDER BY judge_model")
        return [str(from_sql(r[0])) for r in rows]


def _now_or(imported_at: float | None) -> float:
    return time.time() if imported_at is None else imported_at
