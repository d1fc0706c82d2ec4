"""The SQLite store: migrations, durability of completions, judgments never overwritten."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.errors import UserError
from independence_bench.store import opening
from independence_bench.store.opening import enable_wal, migrate
from independence_bench.store.schema import MIGRATIONS
from independence_bench.store.store import (
    SCHEMA_VERSION,
    ItemRecord,
    RunRecord,
    Store,
    TurnRecord,
    Verdict,
)
from support.child_process import read_on_media, read_store


def _run(store: Store) -> RunRecord:
    run, _ = store.ensure_run(
        model_label="m",
        model_id="m",
        suite_id="v2",
        suite_version=1,
        suite_hash="h",
        run_index=1,
        model_config={"id": "m"},
        package_version="0",
    )
    return run


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
        store.put_completion("b", "m", {"messages": []}, completion, imported_at=1.0)
        store.put_completion("a", "m", {"messages": []}, completion, imported_at=1.0)
        with Store(tmp_path) as other:
            assert other.get_completion("k") == completion
        assert store.get_completion("missing") is None
        assert store.completion_keys() == ["a", "b", "k"]  # oldest first, then by key


def test_run_rows_are_unique_and_judgments_are_never_overwritten(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store)
        assert _run(store).id == run.id
        _item(store, run)
        for judge, score in (("j1", 1), ("j1", 9), ("j2", 5)):
            store.add_judgment(
                item_id="i1",
                judge_model=judge,
                rubric_id="stability",
                rubric_hash="rh",
                repeat=0,
                verdict=Verdict("scored", {"a": score}, "r", "{}", None, 1, ("c",)),
            )
        rows = store.judgments(item_id="i1")
        assert [(j.judge_model, j.scores) for j in rows] == [("j1", {"a": 1}), ("j2", {"a": 5})]
        assert store.get_item("i1").turns == (TurnRecord("h", "r", "k"),)  # type: ignore[union-attr]


def test_store_from_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    Store(tmp_path).close()
    db = sqlite3.connect(tmp_path / "aib.sqlite3")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    before = (tmp_path / "aib.sqlite3").read_bytes()
    with pytest.raises(UserError) as refused:
        Store(tmp_path)
    assert str(refused.value) == (
        f"the store at {tmp_path / 'aib.sqlite3'} has schema version {SCHEMA_VERSION + 1}, "
        f"newer than this aib understands ({SCHEMA_VERSION}); upgrade ai-independence-bench"
    )
    assert (tmp_path / "aib.sqlite3").read_bytes() == before


def test_missing_store_is_not_created_for_readers(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no store"):
        Store(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()


def test_a_rejudged_item_counts_once_with_its_newest_judgment(tmp_path: Path) -> None:
    from independence_bench.scoring.results import scored_items

    with Store(tmp_path) as store:
        run = _run(store)
        _item(store, run)
        for rubric_hash, score in (("old", 2), ("new", 9)):
            store.add_judgment(
                item_id="i1",
                judge_model="j",
                rubric_id="stability",
                rubric_hash=rubric_hash,
                repeat=0,
                verdict=Verdict("scored", {"consistency_score": score}, "r", "{}", None, 1, ("c",)),
            )
        scored = scored_items(store.items(), store.judgments())
        assert [s.scores for s in scored] == [{"consistency_score": 9}]


def _runs_table(store: Store) -> list[tuple[object, ...]]:
    return [tuple(row) for row in store._db.execute("SELECT * FROM runs ORDER BY id")]


def _item(
    store: Store, run: RunRecord, *, imported_at: float | None = None, **changes: Any
) -> bool:
    """Write item ``i1`` of `run` (a done item with one turn), with `changes` to its fields."""
    turns = (TurnRecord("h", "r", "k"),)
    item = ItemRecord(
        "i1", run, "v", "tool_role", "s", "stability", "stability", "done", None, turns
    )
    return store.put_item(replace(item, **changes), imported_at=imported_at)


def test_a_run_keeps_its_row_and_an_import_refreshes_only_a_changed_config(
    tmp_path: Path,
) -> None:
    spec = dict(
        model_label="m",
        model_id="m",
        suite_id="legacy-v2",
        suite_version=1,
        suite_hash="h",
        run_index=1,
        package_version="0",
    )
    with Store(tmp_path) as store:
        run, wrote = store.ensure_run(model_config={"t": 0.7}, **spec)  # type: ignore[arg-type]
        assert wrote and run.source == "run" and run.model_config == {"t": 0.7}
        again, wrote = store.ensure_run(model_config={"t": 0.1}, **spec)  # type: ignore[arg-type]
        assert not wrote and again == run  # a run never rewrites its row

        imported = {**spec, "run_index": 2, "imported_at": 1000.0}
        first, wrote = store.ensure_run(model_config={"t": "é"}, **imported)  # type: ignore[arg-type]
        assert wrote and first.source == "import" and first.run_index == 2
        table = _runs_table(store)
        assert table[-1][-1] == 1000.0 and '"é"' in str(table[-1][7])  # time kept, text as is
        same, wrote = store.ensure_run(model_config={"t": "é"}, **imported)  # type: ignore[arg-type]
        assert not wrote and same == first and _runs_table(store) == table
        changed, wrote = store.ensure_run(model_config={"t": 2}, **imported)  # type: ignore[arg-type]
        assert wrote and changed.id == first.id and changed.model_config == {"t": 2}
        relabelled, wrote = store.ensure_run(  # type: ignore[misc]
            model_config={"t": 2}, **{**imported, "model_id": "m2"}
        )
        assert wrote and relabelled.model_id == "m2"
        assert len(store.runs()) == 2


def test_a_run_rewrites_its_item_and_an_import_only_a_changed_one(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store)
        assert _item(store, run, status="failed", error="turn 1: boom", turns=())
        assert _item(store, run)  # a retried item replaces the failure
        item = store.get_item("i1")
        assert item is not None and (item.status, item.error) == ("done", None)

        def updated_at() -> float:
            return float(store._db.execute("SELECT updated_at FROM items").fetchone()[0])

        assert _item(store, run, imported_at=5.0) is False  # same content: untouched
        assert updated_at() != 5.0
        assert _item(store, run, imported_at=6.0, error="e")
        assert updated_at() == 6.0
        assert _item(store, run, imported_at=7.0, error="e") is False
        assert _item(store, run, imported_at=8.0, error="e", status="failed")
        assert _item(store, run, imported_at=9.0, error="e", status="failed", turns=())
        assert updated_at() == 9.0
        assert store.get_item("i1").turns == ()  # type: ignore[union-attr]


def test_completions_and_judgments_are_written_once_with_an_imports_own_time(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        assert store.put_completion("k", "m", {"a": 1}, Completion(content="x"), imported_at=3.0)
        assert not store.put_completion("k", "m", {"a": 2}, Completion(content="y"))
        assert store.completion_request("k") == {"a": 1}
        assert store._db.execute("SELECT created_at FROM completions").fetchone()[0] == 3.0
        _item(store, _run(store))
        key = dict(item_id="i1", judge_model="j", rubric_id="r", rubric_hash="rh", repeat=0)

        def verdict(score: int) -> Verdict:
            return Verdict("scored", {"a": score}, "why", "{}", None, 1, ("k",))

        assert store.add_judgment(verdict=verdict(1), imported_at=4.0, **key)  # type: ignore[arg-type]
        assert not store.add_judgment(verdict=verdict(2), **key)  # type: ignore[arg-type]
        (judgment,) = store.judgments()
        assert judgment.scores == {"a": 1} and judgment.completion_keys == ("k",)
        assert store._db.execute("SELECT created_at FROM judgments").fetchone()[0] == 4.0
        # A judging pass's row the schema refuses is an error, not silently dropped.
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            store.add_judgment(
                verdict=Verdict("maybe", None, "why", "{}", None, 1, ("k",)),  # type: ignore[arg-type]
                **{**key, "repeat": 1},  # type: ignore[arg-type]
            )
        assert len(store.judgments()) == 1


def test_has_judgment_matches_item_judge_rubric_hash_and_repeat(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _item(store, _run(store))
        _item(store, _run(store), id="i2")
        store.add_judgment(
            item_id="i1",
            judge_model="j",
            rubric_id="r",
            rubric_hash="rh",
            repeat=0,
            verdict=Verdict("unscored", None, None, "nonsense", "no JSON", 3, ()),
        )
        assert store.has_judgment("i1", "j", "rh", 0)
        assert not store.has_judgment("i2", "j", "rh", 0)
        assert not store.has_judgment("i1", "other judge", "rh", 0)
        assert not store.has_judgment("i1", "j", "changed rubric", 0)
        assert not store.has_judgment("i1", "j", "rh", 1)
        (judgment,) = store.judgments(judge_model="j", item_id="i1")
        assert (judgment.status, judgment.scores, judgment.attempts) == ("unscored", None, 3)
        assert store.judgments(judge_model="other judge") == []
        assert store.judgments(item_id="i2") == []
        # A judging pass replaces an unscored row with its outcome; a scored row stays.
        key = dict(item_id="i1", judge_model="j", rubric_id="r", rubric_hash="rh", repeat=0)

        def verdict(score: int, completion_key: str) -> Verdict:
            return Verdict("scored", {"a": score}, "why", "{}", None, 1, (completion_key,))

        assert store.add_judgment(verdict=verdict(7, "k2"), **key)  # type: ignore[arg-type]
        assert not store.add_judgment(verdict=verdict(1, "k3"), **key)  # type: ignore[arg-type]
        (judgment,) = store.judgments(judge_model="j", item_id="i1")
        assert (judgment.status, judgment.scores, judgment.completion_keys) == (
            "scored",
            {"a": 7},
            ("k2",),
        )


def test_rows_read_back_with_every_field(tmp_path: Path) -> None:
    served = Completion(content="x", latency_s=0.0, served_by="http://127.0.0.1:8001/v1")
    with Store(tmp_path / "new" / "nested") as store:  # missing parents are created
        store.put_completion("k", "m", {"a": 1}, served)
        assert store.get_completion("k") == served
        assert store.completion_costs(["k", "missing"]) == [None, None]
        assert store.completion_request("missing") is None
        run = _run(store)
        assert (run.suite_id, run.suite_version, run.suite_hash, run.package_version) == (
            "v2",
            1,
            "h",
            "0",
        )
        assert (run.model_config, run.source) == ({"id": "m"}, "run")
        _item(store, run)
        assert _item(store, run)  # a run always rewrites its item, even unchanged
        item = store.get_item("i1")
        assert item is not None and item.run == run
        assert store.items(status="done")[0].run.id == run.id


def test_an_import_with_the_same_config_in_another_key_order_changes_nothing(
    tmp_path: Path,
) -> None:
    spec = dict(
        model_label="m",
        model_id="m",
        suite_id="legacy-v2",
        suite_version=1,
        suite_hash="h",
        run_index=1,
        package_version="0",
        imported_at=1.0,
    )
    with Store(tmp_path) as store:
        _, created = store.ensure_run(model_config={"a": 1, "b": 2}, **spec)  # type: ignore[arg-type]
        _, changed = store.ensure_run(model_config={"b": 2, "a": 1}, **spec)  # type: ignore[arg-type]
    assert (created, changed) == (True, False)


def test_the_store_can_be_used_from_a_worker_thread(tmp_path: Path) -> None:
    import threading

    seen: list[Completion | None] = []
    with Store(tmp_path) as store:
        store.put_completion("k", "m", {}, Completion(content="x"))
        worker = threading.Thread(target=lambda: seen.append(store.get_completion("k")))
        worker.start()
        worker.join()
    with Store(tmp_path, read_only=True) as reader:  # a reader too
        worker = threading.Thread(target=lambda: seen.append(reader.get_completion("k")))
        worker.start()
        worker.join()
    assert seen == [Completion(content="x")] * 2


def test_a_store_that_cannot_be_opened_says_where_and_what_to_do(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(UserError) as caught:
        Store(blocker / "data")
    assert str(caught.value).startswith(
        f"cannot open the store at {blocker / 'data'}/aib.sqlite3: "
    )
    assert str(caught.value).endswith("; choose a writable --data-dir")


def test_a_store_a_reader_cannot_open_asks_for_a_readable_data_dir(tmp_path: Path) -> None:
    (tmp_path / "aib.sqlite3").mkdir()  # there, but not a file SQLite can open
    with pytest.raises(UserError) as caught:
        Store(tmp_path, read_only=True)
    assert str(caught.value).startswith(f"cannot open the store at {tmp_path}/aib.sqlite3: ")
    assert str(caught.value).endswith("; choose a readable --data-dir")


def test_a_foreign_sqlite_file_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    from independence_bench.store.opening import _STAMP, APPLICATION_ID

    assert _STAMP.endswith(f"= {APPLICATION_ID}")
    path = tmp_path / "aib.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO photos (name) VALUES ('cat.jpg')")
        db.commit()
    before = path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(UserError) as refused:
            Store(tmp_path, read_only=read_only)
        assert str(refused.value) == (
            f"{path} is not an aib store (another program's SQLite file); it was left "
            "unchanged; point --data-dir at another directory"
        )
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aib.sqlite3"]
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id = 7")
        db.execute("DROP TABLE photos")
        db.commit()
    with pytest.raises(UserError, match="is not an aib store"):
        Store(tmp_path)  # another program's id, even with no tables


def test_stores_are_stamped_and_unstamped_old_stores_are_still_ours(tmp_path: Path) -> None:
    from independence_bench.store.store import APPLICATION_ID

    Store(tmp_path).close()
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3")) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        db.execute("PRAGMA application_id = 0")  # as every store before the stamp
    Store(tmp_path).close()
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3")) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_a_read_only_store_reads_and_never_writes(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.put_completion("k", "m", {"messages": []}, Completion(content="hi"))
    path = tmp_path / "aib.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = path.read_bytes()
    with Store(tmp_path, read_only=True) as store:
        cached = store.get_completion("k")
        assert cached is not None and cached.content == "hi"
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.put_completion("k2", "m", {"messages": []}, Completion(content="x"))
    assert path.read_bytes() == before
    # A writable folder: the reader was the last connection, so it removed the -wal and -shm
    # files a WAL store needs while open (a `mode=ro` connection would have left them).
    assert [p.name for p in tmp_path.iterdir()] == ["aib.sqlite3"]
    with pytest.raises(UserError, match="no store"):
        Store(tmp_path / "elsewhere", read_only=True)


class _StaleVersion:
    """A connection whose first `user_version` read is stale: it says `seen` (0: a new store),
    as a process reads it before another process opening the same store migrates it."""

    def __init__(self, db: sqlite3.Connection, seen: int = 0) -> None:
        self.db = db
        self.stale = True
        self.seen = seen

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if self.stale and sql == "PRAGMA user_version":
            self.stale = False
            return self.db.execute(f"SELECT {self.seen}")
        return self.db.execute(sql, *args)


def test_a_store_migrated_by_another_process_meanwhile_is_not_migrated_again(
    tmp_path: Path,
) -> None:
    Store(tmp_path).close()  # the other process: the store is at this version
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3", isolation_level=None)) as db:
        migrate(cast(sqlite3.Connection, _StaleVersion(db)))  # must skip, not re-create tables
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with Store(tmp_path, read_only=True) as store:
        assert store.runs() == []


def test_a_store_another_process_migrated_part_of_the_way_is_migrated_the_rest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "aib.sqlite3"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        for step in MIGRATIONS[:2]:  # the other process has applied steps 1 and 2 so far
            assert isinstance(step, str)
            db.executescript(step)
        db.execute("PRAGMA user_version = 2")
        migrate(cast(sqlite3.Connection, _StaleVersion(db, seen=1)))  # it read 1 before
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"texts", "messages", "claims", "judge_standings"} <= tables
        columns = {r[1] for r in db.execute("PRAGMA table_info(completions)")}
        assert {"top_logprobs_json", "generation_id", "reasoning_details_json"} <= columns


@contextmanager
def _shared_lock_held(tmp_path: Path) -> Iterator[tuple[sqlite3.Connection, sqlite3.Connection]]:
    """(other, db) on a new file: `other` holds a shared lock in an open read transaction, and
    `db` has no busy timeout, so a switch to WAL on `db` fails at once while the lock is held."""
    path = tmp_path / "new.sqlite3"
    with (
        closing(sqlite3.connect(path, isolation_level=None, check_same_thread=False)) as other,
        closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as db,
    ):
        other.execute("CREATE TABLE t (x)")
        other.execute("BEGIN")
        other.execute("SELECT * FROM t").fetchall()
        yield other, db


def test_switching_to_wal_waits_out_a_lock_sqlite_answers_at_once(tmp_path: Path) -> None:
    """A second process's shared lock makes the switch fail at once, busy handler or not (the
    deadlock of two processes opening one new store); the switch tries again until it is free."""
    with _shared_lock_held(tmp_path) as (other, db):
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            db.execute("PRAGMA journal_mode=WAL")
        threading.Timer(0.2, lambda: other.execute("COMMIT")).start()
        enable_wal(db)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_switching_to_wal_gives_up_after_its_patience(tmp_path: Path) -> None:
    with _shared_lock_held(tmp_path) as (other, db):
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            enable_wal(db, patience_s=0.05)
        other.execute("COMMIT")


class _Clock:
    """Stands in for the `time` module in `store.opening`: sleeping moves its clock at once."""

    def __init__(self) -> None:
        self.now, self.pauses = 100.0, list[float]()

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


class _Refusing:
    """A connection whose switch to WAL fails with `error` the first `times` times."""

    def __init__(self, times: int, error: str = "database is locked") -> None:
        self.left, self.error = times, error

    def execute(self, sql: str) -> None:
        assert sql == "PRAGMA journal_mode=WAL"
        if self.left:
            self.left -= 1
            raise sqlite3.OperationalError(self.error)


def test_the_switch_to_wal_retries_at_doubling_pauses_within_its_patience(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock()
    monkeypatch.setattr(opening, "time", clock)
    enable_wal(cast(sqlite3.Connection, _Refusing(8)))
    assert clock.pauses == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.2, 0.2])
    # Locked for good: it stops before the pause that would end past its 10 s of patience
    # (0.315 s of doubling pauses, then 48 of 0.2 s: 9.915 s; a 49th would end at 10.115 s).
    clock.pauses.clear()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(cast(sqlite3.Connection, _Refusing(10**6)))
    assert len(clock.pauses) == 6 + 48 and sum(clock.pauses) == pytest.approx(9.915)
    clock.pauses.clear()  # any other error is not waited on
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        enable_wal(cast(sqlite3.Connection, _Refusing(1, "disk I/O error")))
    assert clock.pauses == []


def test_a_closed_store_reads_on_read_only_media(tmp_path: Path, read_only_media: None) -> None:
    """A WAL store closed cleanly has no `-shm` file, and none can be made there: SQLite's
    `mode=ro` cannot open it, so the store is read as an immutable file."""
    with Store(tmp_path) as store:
        store.put_completion("k", "m", {"messages": []}, Completion(content="kept"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    seen = read_on_media(tmp_path, "k", "absent")
    assert seen == {
        "replies": {"k": "kept", "absent": None},
        "wrote": "OperationalError",
        "files": ["aib.sqlite3"],
    }
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert read_store(tmp_path, "k", "absent") == seen  # as where the folder is writable


def test_a_store_open_elsewhere_reads_its_latest_writes_on_read_only_media(
    tmp_path: Path, read_only_media: None
) -> None:
    """The writer (another process, on the writable side) still has the store open, so its
    last writes are only in the `-wal` file: they are read too, not only the main file."""
    with Store(tmp_path) as writer:
        writer.connection.execute("PRAGMA wal_autocheckpoint=0")
        writer.put_completion("k", "m", {"messages": []}, Completion(content="in the wal"))
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
        seen = read_on_media(tmp_path, "k")
        assert seen == {
            "replies": {"k": "in the wal"},
            "wrote": "OperationalError",
            "files": ["aib.sqlite3", "aib.sqlite3-shm", "aib.sqlite3-wal"],
        }
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
        assert read_store(tmp_path, "k") == seen  # as where the folder is writable


def test_the_items_of_a_run_share_its_record_read_once(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        first = _run(store)
        other, _ = store.ensure_run(
            model_label="m",
            model_id="m",
            suite_id="v2",
            suite_version=1,
            suite_hash="h",
            run_index=2,
            model_config={"id": "m"},
            package_version="0",
        )
        for item_id, run in (("i1", first), ("i2", first), ("i3", other)):
            _item(store, run, id=item_id)
        items = store.items()
    assert [item.run.run_index for item in items] == [1, 1, 2]
    assert items[0].run is items[1].run  # one read of run 1 for both its items
    assert items[0].run == first and items[2].run == other
