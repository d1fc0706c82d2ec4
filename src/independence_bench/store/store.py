"""The SQLite store: every completion, transcript and judgment a run produced, and what produced it.

One file, `<data-dir>/aib.sqlite3`, in WAL mode, one connection per process. Schema changes are
numbered migrations applied in order; a store written by a newer version is refused rather than
guessed at. Completions are keyed by a hash of everything that determined the request, so a
repeated command finds its answers here instead of paying for them again. Judgments are never
overwritten: another judge, or the same judge again, adds rows. All SQL is parameterised.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.errors import UserError
from independence_bench.store.records import (
    ItemRecord,
    JudgmentRecord,
    RunRecord,
    TurnRecord,
    completion_from_row,
    completion_to_row,
    judgment_from_row,
    run_from_row,
)
from independence_bench.store.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "STORE_FILENAME",
    "ItemRecord",
    "JudgmentRecord",
    "RunRecord",
    "Store",
    "TurnRecord",
    "completion_to_row",
]

STORE_FILENAME = "aib.sqlite3"


class Store:
    """The run store under one data directory. Use as a context manager or call `close()`."""

    def __init__(self, data_dir: Path, *, create: bool = True) -> None:
        self.path = data_dir / STORE_FILENAME
        if not create and not self.path.exists():
            raise UserError(
                f"no store at {self.path}; run 'aib run' first or point --data-dir at a store"
            )
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            # Refuse a newer store before anything (even the journal mode) is written to it.
            self._refuse_newer()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=10000")
        except (OSError, sqlite3.Error) as exc:
            raise UserError(
                f"cannot open the store at {self.path}: {exc}; choose a writable --data-dir"
            ) from None
        self._migrate()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All statements inside commit together or not at all."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _refuse_newer(self) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            self._db.close()
            raise UserError(
                f"the store at {self.path} has schema version {version}, newer than this aib "
                f"understands ({SCHEMA_VERSION}); upgrade ai-independence-bench"
            )

    def _migrate(self) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        for number in range(version, SCHEMA_VERSION):
            with self.transaction() as db:
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number + 1}")

    # -- runs -------------------------------------------------------------------------------

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
        source: str = "run",
    ) -> RunRecord:
        """The run row for this model, suite and run number, created if missing."""
        self._db.execute(
            "INSERT OR IGNORE INTO runs (model_label, model_id, suite_id, suite_version, "
            "suite_hash, run_index, model_config_json, package_version, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                model_label,
                model_id,
                suite_id,
                suite_version,
                suite_hash,
                run_index,
                json.dumps(model_config, sort_keys=True),
                package_version,
                source,
                time.time(),
            ),
        )
        row = self._db.execute(
            "SELECT * FROM runs WHERE model_label = ? AND suite_id = ? AND suite_hash = ? "
            "AND run_index = ?",
            (model_label, suite_id, suite_hash, run_index),
        ).fetchone()
        return run_from_row(row)

    def runs(self, suite_id: str | None = None) -> list[RunRecord]:
        if suite_id is None:
            rows = self._db.execute("SELECT * FROM runs ORDER BY model_label, run_index")
        else:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE suite_id = ? ORDER BY model_label, run_index",
                (suite_id,),
            )
        return [run_from_row(r) for r in rows]

    # -- completions ------------------------------------------------------------------------

    def get_completion(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT * FROM completions WHERE key = ?", (key,)).fetchone()
        return None if row is None else completion_from_row(row)

    def put_completion(
        self,
        key: str,
        model_id: str,
        request: Mapping[str, Any],
        completion: Completion,
        *,
        created_at: float | None = None,
    ) -> bool:
        """Store a completion durably (committed before this returns) unless its key exists.

        Returns whether a row was written; `created_at` keeps an imported call's own time.
        """
        row = completion_to_row(completion)
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO completions (key, model_id, request_json, content, "
            "tool_calls_json, reasoning, finish_reason, prompt_tokens, completion_tokens, "
            "cost_usd, latency_s, served_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                model_id,
                json.dumps(request, ensure_ascii=False, sort_keys=True),
                row["content"],
                row["tool_calls_json"],
                row["reasoning"],
                row["finish_reason"],
                row["prompt_tokens"],
                row["completion_tokens"],
                row["cost_usd"],
                row["latency_s"],
                row["served_by"],
                time.time() if created_at is None else created_at,
            ),
        )
        return cursor.rowcount > 0

    def completion_request(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT request_json FROM completions WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def completion_costs(self, keys: Sequence[str]) -> list[float | None]:
        out: list[float | None] = []
        for key in keys:
            row = self._db.execute(
                "SELECT cost_usd FROM completions WHERE key = ?", (key,)
            ).fetchone()
            out.append(None if row is None else row[0])
        return out

    # -- items ------------------------------------------------------------------------------

    def put_item(
        self,
        *,
        item_id: str,
        run: RunRecord,
        variant: str,
        mode: str,
        scenario_id: str,
        kind: str,
        experiment: str,
        status: str,
        error: str | None,
        turns: Sequence[TurnRecord],
    ) -> None:
        transcript = json.dumps([t.__dict__ for t in turns], ensure_ascii=False)
        self._db.execute(
            "INSERT INTO items (id, run_id, variant, mode, scenario_id, kind, experiment, "
            "status, error, transcript_json, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, error = excluded.error, "
            "transcript_json = excluded.transcript_json, updated_at = excluded.updated_at",
            (
                item_id,
                run.id,
                variant,
                mode,
                scenario_id,
                kind,
                experiment,
                status,
                error,
                transcript,
                time.time(),
            ),
        )

    def get_item(self, item_id: str) -> ItemRecord | None:
        rows = self._item_rows("WHERE items.id = ?", (item_id,))
        return rows[0] if rows else None

    def items(self, *, suite_id: str | None = None, status: str | None = None) -> list[ItemRecord]:
        clauses: list[str] = []
        params: list[Any] = []
        if suite_id is not None:
            clauses.append("runs.suite_id = ?")
            params.append(suite_id)
        if status is not None:
            clauses.append("items.status = ?")
            params.append(status)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._item_rows(where, tuple(params))

    def _item_rows(self, where: str, params: tuple[Any, ...]) -> list[ItemRecord]:
        sql = (
            "SELECT items.*, runs.id AS r_id, runs.model_label, runs.model_id, runs.suite_id, "
            "runs.suite_version, runs.suite_hash, runs.run_index, runs.model_config_json, "
            "runs.package_version, runs.source FROM items JOIN runs ON runs.id = items.run_id "
            f"{where} ORDER BY runs.model_label, runs.run_index, items.rowid"
        )
        out = []
        for row in self._db.execute(sql, params):
            run = run_from_row({**dict(row), "id": row["r_id"]})
            turns = tuple(TurnRecord(**t) for t in json.loads(row["transcript_json"]))
            out.append(
                ItemRecord(
                    id=row["id"],
                    run=run,
                    variant=row["variant"],
                    mode=row["mode"],
                    scenario_id=row["scenario_id"],
                    kind=row["kind"],
                    experiment=row["experiment"],
                    status=row["status"],
                    error=row["error"],
                    turns=turns,
                )
            )
        return out

    def item_status(self, item_id: str) -> str | None:
        row = self._db.execute("SELECT status FROM items WHERE id = ?", (item_id,)).fetchone()
        return None if row is None else str(row[0])

    # -- judgments --------------------------------------------------------------------------

    def has_judgment(self, item_id: str, judge_model: str, rubric_hash: str, repeat: int) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM judgments WHERE item_id = ? AND judge_model = ? AND rubric_hash = ? "
            "AND repeat = ?",
            (item_id, judge_model, rubric_hash, repeat),
        ).fetchone()
        return row is not None

    def add_judgment(
        self,
        *,
        item_id: str,
        judge_model: str,
        rubric_id: str,
        rubric_hash: str,
        repeat: int,
        status: str,
        scores: Mapping[str, Any] | None,
        reasoning: str | None,
        raw_reply: str | None,
        error: str | None,
        attempts: int,
        completion_keys: Sequence[str],
    ) -> None:
        """Add a judgment; an existing row for the same key is kept, never overwritten."""
        self._db.execute(
            "INSERT OR IGNORE INTO judgments (item_id, judge_model, rubric_id, rubric_hash, "
            "repeat, status, scores_json, reasoning, raw_reply, error, attempts, "
            "completion_keys_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                judge_model,
                rubric_id,
                rubric_hash,
                repeat,
                status,
                None if scores is None else json.dumps(scores, ensure_ascii=False),
                reasoning,
                raw_reply,
                error,
                attempts,
                json.dumps(list(completion_keys)),
                time.time(),
            ),
        )

    def judgments(
        self, *, judge_model: str | None = None, item_id: str | None = None
    ) -> list[JudgmentRecord]:
        clauses: list[str] = []
        params: list[Any] = []
        if judge_model is not None:
            clauses.append("judge_model = ?")
            params.append(judge_model)
        if item_id is not None:
            clauses.append("item_id = ?")
            params.append(item_id)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self._db.execute(f"SELECT * FROM judgments {where} ORDER BY id", tuple(params))
        return [judgment_from_row(r) for r in rows]

    def judge_models(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT judge_model FROM judgments ORDER BY judge_model")
        return [str(r[0]) for r in rows]

    # -- imports (`importer.py`) -------------------------------------------------------------
    # Imported rows carry the original timestamps and are written only when new or different,
    # so importing the same folder twice leaves every row, timestamps included, unchanged.
    # Each method returns True when it wrote something. Call them inside `transaction()`.

    def import_run(
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
        created_at: float,
    ) -> tuple[RunRecord, bool]:
        """The imported run row (source `import`), created, or refreshed when its config changed."""
        config = json.dumps(model_config, sort_keys=True, ensure_ascii=False)
        cursor = self._db.execute(
            "INSERT INTO runs (model_label, model_id, suite_id, suite_version, suite_hash, "
            "run_index, model_config_json, package_version, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'import', ?) "
            "ON CONFLICT (model_label, suite_id, suite_hash, run_index) DO UPDATE SET "
            "model_id = excluded.model_id, model_config_json = excluded.model_config_json "
            "WHERE runs.model_id IS NOT excluded.model_id "
            "OR runs.model_config_json IS NOT excluded.model_config_json",
            (
                model_label,
                model_id,
                suite_id,
                suite_version,
                suite_hash,
                run_index,
                config,
                package_version,
                created_at,
            ),
        )
        row = self._db.execute(
            "SELECT * FROM runs WHERE model_label = ? AND suite_id = ? AND suite_hash = ? "
            "AND run_index = ?",
            (model_label, suite_id, suite_hash, run_index),
        ).fetchone()
        return run_from_row(row), cursor.rowcount > 0

    def import_completion(
        self,
        key: str,
        model_id: str,
        request: Mapping[str, Any],
        completion: Completion,
        *,
        created_at: float,
    ) -> bool:
        """Store an imported completion unless its key exists (keys cover the content)."""
        return self.put_completion(key, model_id, request, completion, created_at=created_at)

    def import_item(
        self,
        *,
        item_id: str,
        run: RunRecord,
        variant: str,
        mode: str,
        scenario_id: str,
        kind: str,
        experiment: str,
        status: str,
        error: str | None,
        turns: Sequence[TurnRecord],
        updated_at: float,
    ) -> bool:
        """Insert an imported item, or update it when its transcript, status or error differ."""
        transcript = json.dumps([t.__dict__ for t in turns], ensure_ascii=False)
        cursor = self._db.execute(
            "INSERT INTO items (id, run_id, variant, mode, scenario_id, kind, experiment, "
            "status, error, transcript_json, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, error = excluded.error, "
            "transcript_json = excluded.transcript_json, updated_at = excluded.updated_at "
            "WHERE items.status IS NOT excluded.status OR items.error IS NOT excluded.error "
            "OR items.transcript_json IS NOT excluded.transcript_json",
            (
                item_id,
                run.id,
                variant,
                mode,
                scenario_id,
                kind,
                experiment,
                status,
                error,
                transcript,
                updated_at,
            ),
        )
        return cursor.rowcount > 0

    def import_judgment(
        self,
        *,
        item_id: str,
        judge_model: str,
        rubric_id: str,
        rubric_hash: str,
        status: str,
        scores: Mapping[str, Any] | None,
        reasoning: str | None,
        raw_reply: str | None,
        error: str | None,
        completion_keys: Sequence[str],
        created_at: float,
    ) -> bool:
        """Add an imported judgment (repeat 0); like every judgment, never overwritten."""
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO judgments (item_id, judge_model, rubric_id, rubric_hash, "
            "repeat, status, scores_json, reasoning, raw_reply, error, attempts, "
            "completion_keys_json, created_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 1, ?, ?)",
            (
                item_id,
                judge_model,
                rubric_id,
                rubric_hash,
                status,
                None if scores is None else json.dumps(scores, ensure_ascii=False),
                reasoning,
                raw_reply,
                error,
                json.dumps(list(completion_keys)),
                created_at,
            ),
        )
        return cursor.rowcount > 0
