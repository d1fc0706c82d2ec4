"""A finished conversation and a judge's verdict are written with their wave
(`batches.StoreBatches.store_record`): inside one shared transaction, not one each, and the
engine goes on only once they are committed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool
from independence_bench.engine.batches import ItemWrite, JudgmentWrite, StoreBatches
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.store.claims import Claims
from independence_bench.store.no_space import StoreFull
from independence_bench.store.store import ItemRecord, Store, Verdict
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer
from support.store_views import connect


def _run(server: MockServer, data: Path) -> RunSummary:
    suite = load_suite("v2").subset(["direct", "negotiation"])

    async def run() -> RunSummary:
        pool = ClientPool(env={}, concurrency=16)
        subjects = tuple(
            ModelSpec(id="scripted-firm", label=f"m{i}", base_url=server.base_url, seed=i)
            for i in range(3)
        )
        judge = ModelSpec(id="scripted-judge", label="judge", base_url=server.base_url)
        try:
            with Store(data) as store:
                plan = RunPlan(suite=suite, models=subjects, judge=judge, runs=2)
                return await Engine(store, pool).run(plan)
        finally:
            await pool.aclose()

    return asyncio.run(run())


def test_items_and_verdicts_are_written_inside_the_waves_transactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside: list[bool] = []
    transactions: list[int] = []
    real_item, real_judgment, real_transaction = (
        Store.put_item,
        Store.add_judgment,
        Store.transaction,
    )

    def put_item(self: Store, item: ItemRecord, **options: Any) -> bool:
        inside.append(self.connection.in_transaction)
        return real_item(self, item, **options)

    def add_judgment(self: Store, **fields: Any) -> bool:
        inside.append(self.connection.in_transaction)
        return real_judgment(self, **fields)

    @contextmanager
    def transaction(self: Store) -> Iterator[sqlite3.Connection]:
        transactions.append(1)
        with real_transaction(self) as db:
            yield db

    monkeypatch.setattr(Store, "put_item", put_item)
    monkeypatch.setattr(Store, "add_judgment", add_judgment)
    monkeypatch.setattr(Store, "transaction", transaction)
    with MockServer(MockConfig(latency_s=0.02)) as server:
        summary = _run(server, tmp_path)
        sent = server.seen.request_count
    items = 3 * 2 * 2
    assert summary.items_done == summary.judged == items
    assert len(inside) == 2 * items and all(inside)  # none in a transaction of its own
    # Every item and verdict is there, and fewer transactions than writes were needed.
    with connect(tmp_path) as db:
        assert db.execute("SELECT count(*) FROM items WHERE status = 'done'").fetchone()[0] == items
        assert db.execute("SELECT count(*) FROM judgments").fetchone()[0] == items
        assert db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    assert len(transactions) < sent + 2 * items


def test_a_record_the_disk_refuses_fails_its_own_task_with_store_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a write alone did (`no_space.write_or_full`): room is made, the write tried once more,
    # then the task that queued it gets `StoreFull` and the engine is told at once.
    verdict = Verdict("scored", {"x": 1}, "r", "{}", None, 1, ("k",))
    halted: list[StoreFull] = []
    tries: list[str] = []

    def refused(self: Store, **fields: Any) -> bool:
        tries.append(fields["item_id"])
        raise sqlite3.OperationalError("database or disk is full")

    async def wave(batches: StoreBatches) -> None:
        with pytest.raises(StoreFull):
            await batches.store_record(JudgmentWrite("item", "judge", "r", "h", 0, verdict))

    monkeypatch.setattr(Store, "add_judgment", refused)
    with Store(tmp_path) as store:
        asyncio.run(wave(StoreBatches(store, Claims(store), on_full=halted.append)))
    assert tries == ["item", "item"] and len(halted) == 1


def test_an_item_is_written_by_its_record(tmp_path: Path) -> None:
    with MockServer(MockConfig(latency_s=0.01)) as server:
        _run(server, tmp_path / "first")
    with Store(tmp_path / "first") as store:
        items = store.items()

    async def wave(batches: StoreBatches) -> None:
        await asyncio.gather(*(batches.store_record(ItemWrite(item)) for item in items))

    with Store(tmp_path / "first") as store:
        store.connection.execute("DELETE FROM judgments")
        store.connection.execute("DELETE FROM items")
        asyncio.run(wave(StoreBatches(store, Claims(store))))
        assert store.items() == items
