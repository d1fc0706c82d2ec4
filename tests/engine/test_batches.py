"""Claims and completion writes gathered per wave (`engine/batches.py`).

Each test counts what a lost write or a double payment would change: transactions, stored
rows, claims left behind, requests the loopback server received.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool
from independence_bench.clients.protocol import Completion
from independence_bench.engine.batches import StoreBatches
from independence_bench.engine.engine import Engine, RunPlan
from independence_bench.store.claims import Claims
from independence_bench.store.held import CompletionWrite
from independence_bench.store.no_space import StoreFull
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer
from support.store_views import connect


@contextmanager
def _counted(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the store's write transactions (one entry per transaction)."""
    counted: list[int] = []
    real = Store.transaction

    @contextmanager
    def transaction(self: Store) -> Iterator[sqlite3.Connection]:
        counted.append(1)
        with real(self) as db:
            yield db

    monkeypatch.setattr(Store, "transaction", transaction)
    yield counted


def _write(key: str) -> CompletionWrite:
    return CompletionWrite(key, "m", {"model": "m", "messages": []}, Completion(content=key))


def _stored_keys(data: Path) -> set[str]:
    with connect(data) as db:
        return {row[0] for row in db.execute("SELECT key FROM completions")}


def _claimed_keys(data: Path) -> set[str]:
    with connect(data) as db:
        return {row[0] for row in db.execute("SELECT key FROM claims")}


def test_a_wave_is_claimed_in_one_transaction_and_stored_in_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"k{i}" for i in range(50)]

    async def wave(batches: StoreBatches) -> None:
        attempts = await asyncio.gather(*(batches.attempt(key) for key in keys))
        assert all(attempt.claimed for attempt in attempts)
        await asyncio.gather(*(batches.store_completion(_write(key)) for key in keys))

    with Store(tmp_path) as store, _counted(store, monkeypatch) as transactions:
        asyncio.run(wave(StoreBatches(store, Claims(store))))
        assert len(transactions) == 2
    assert _stored_keys(tmp_path) == set(keys)
    assert _claimed_keys(tmp_path) == set()  # each released with its completion


def test_the_same_call_twice_in_one_wave_is_claimed_once(tmp_path: Path) -> None:
    async def twice(batches: StoreBatches) -> list[Any]:
        return list(await asyncio.gather(batches.attempt("same"), batches.attempt("same")))

    with Store(tmp_path) as store:
        first, second = asyncio.run(twice(StoreBatches(store, Claims(store))))
    assert first.claimed and not second.claimed
    assert second.held_by is not None  # it waits for the first one's reply


def test_one_reply_the_store_refuses_fails_only_its_own_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Store.put_completion

    def put(self: Store, key: str, *args: Any, **kwargs: Any) -> bool:
        if key == "bad":
            raise ValueError("cannot store this one")
        return real(self, key, *args, **kwargs)

    monkeypatch.setattr(Store, "put_completion", put)

    async def wave(batches: StoreBatches) -> list[Any]:
        await asyncio.gather(*(batches.attempt(key) for key in ("a", "bad", "b")))
        writes = (batches.store_completion(_write(key)) for key in ("a", "bad", "b"))
        return list(await asyncio.gather(*writes, return_exceptions=True))

    with Store(tmp_path) as store:
        outcomes = asyncio.run(wave(StoreBatches(store, Claims(store))))
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], ValueError)
    assert _stored_keys(tmp_path) == {"a", "b"}
    assert _claimed_keys(tmp_path) == {"bad"}  # the engine releases a failed call's claim


def test_a_full_disk_fails_the_whole_wave_and_stores_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Store.put_completion

    def put(self: Store, key: str, *args: Any, **kwargs: Any) -> bool:
        if key == "second":
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, key, *args, **kwargs)

    monkeypatch.setattr(Store, "put_completion", put)

    async def wave(batches: StoreBatches) -> list[Any]:
        writes = (batches.store_completion(_write(key)) for key in ("first", "second"))
        return list(await asyncio.gather(*writes, return_exceptions=True))

    refusals: list[StoreFull] = []
    with Store(tmp_path) as store:
        outcomes = asyncio.run(wave(StoreBatches(store, Claims(store), refusals.append)))
        assert store.get_completion("first") is None  # rolled back with the rest
    # Tried again after making room, then `StoreFull` for each: the engine holds the replies,
    # and was told once, in the flush, so that it starts no call from there.
    assert len(refusals) == 1 and all(o is refusals[0] for o in outcomes)
    assert all("database or disk is full" in str(o) for o in outcomes)
    assert _stored_keys(tmp_path) == set()


def test_a_wave_the_disk_refuses_once_is_stored_after_making_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Store.put_completion
    refused: list[str] = []

    def put(self: Store, key: str, *args: Any, **kwargs: Any) -> bool:
        if key == "second" and not refused:
            refused.append(key)
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, key, *args, **kwargs)

    monkeypatch.setattr(Store, "put_completion", put)

    async def wave(batches: StoreBatches) -> list[Any]:
        writes = (batches.store_completion(_write(key)) for key in ("first", "second"))
        return list(await asyncio.gather(*writes, return_exceptions=True))

    with Store(tmp_path) as store:
        outcomes = asyncio.run(wave(StoreBatches(store, Claims(store))))
    assert outcomes == [None, None]
    assert _stored_keys(tmp_path) == {"first", "second"}


def test_a_store_locked_past_its_timeout_fails_the_wave_with_that_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def put(self: Store, key: str, *args: Any, **kwargs: Any) -> bool:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Store, "put_completion", put)

    async def wave(batches: StoreBatches) -> list[Any]:
        writes = (batches.store_completion(_write(key)) for key in ("first", "second"))
        return list(await asyncio.gather(*writes, return_exceptions=True))

    with Store(tmp_path) as store:
        outcomes = asyncio.run(wave(StoreBatches(store, Claims(store))))
    assert all(type(o) is sqlite3.OperationalError for o in outcomes)
    assert _stored_keys(tmp_path) == set()


def test_a_reply_whose_task_is_cancelled_while_its_write_waits_is_stored(
    tmp_path: Path,
) -> None:
    async def cancelled(batches: StoreBatches) -> None:
        await batches.attempt("paid")
        task = asyncio.create_task(batches.store_completion(_write("paid")))
        await asyncio.sleep(0)  # the write is queued, its flush not run yet
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with Store(tmp_path) as store:
        asyncio.run(cancelled(StoreBatches(store, Claims(store))))
    assert _stored_keys(tmp_path) == {"paid"}
    assert _claimed_keys(tmp_path) == set()


def test_a_claim_whose_task_is_gone_is_given_back(tmp_path: Path) -> None:
    async def cancelled(batches: StoreBatches) -> None:
        task = asyncio.create_task(batches.attempt("unsent"))
        await asyncio.sleep(0)  # queued; the wave is claimed after the task is cancelled
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)

    with Store(tmp_path) as store:
        asyncio.run(cancelled(StoreBatches(store, Claims(store))))
    assert _claimed_keys(tmp_path) == set()


def test_an_engine_run_stores_every_reply_it_used_once_and_leaves_no_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Many conversations at once, so waves hold many calls: every transcript's completion is
    # stored, each request went to the server once, and no claim outlives its call.
    suite = load_suite("v2").subset(["direct", "negotiation"])
    sizes: list[int] = []
    real = Claims.attempt_many

    def attempt_many(self: Claims, keys: Any) -> Any:
        sizes.append(len(keys))
        return real(self, keys)

    monkeypatch.setattr(Claims, "attempt_many", attempt_many)

    async def run(server: MockServer) -> None:
        pool = ClientPool(env={}, concurrency=64)
        subjects = tuple(
            ModelSpec(id="scripted-firm", label=f"m{i}", base_url=server.base_url, seed=i)
            for i in range(6)
        )
        judge = ModelSpec(id="scripted-judge", label="judge", base_url=server.base_url)
        try:
            with Store(tmp_path) as store:
                plan = RunPlan(suite=suite, models=subjects, judge=judge, runs=2)
                summary = await Engine(store, pool).run(plan)
                assert summary.items_done == 6 * 2 * len(suite.scenarios)
        finally:
            await pool.aclose()

    with MockServer(MockConfig(latency_s=0.05)) as server:
        asyncio.run(run(server))
        requests = server.seen.request_count
    with connect(tmp_path) as db:
        used = {
            turn["completion_key"]
            for (transcript,) in db.execute("SELECT transcript_json FROM items")
            for turn in json.loads(transcript)
        }
        judged = {
            key
            for (keys,) in db.execute("SELECT completion_keys_json FROM judgments")
            for key in json.loads(keys)
        }
    stored = _stored_keys(tmp_path)
    assert used | judged <= stored
    assert requests == len(stored)  # nothing paid twice
    assert _claimed_keys(tmp_path) == set()
    assert max(sizes) > 1  # the waves were gathered, so the above covers batching
