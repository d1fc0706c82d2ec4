"""What the engine reads from and writes to the store per call and per conversation.

A call costs one look before it is sent, the claim's (`Claims.attempt_many`, gathered per
wave), which finds a stored reply as well as a claim (`Engine._complete` makes no look of its
own before it); a conversation just stored is judged as it was written, which is what the store
holds, without reading it back; a finished conversation and a judge's verdict are written with
their wave (`batches.StoreBatches.store_record`), inside one shared transaction, not one each,
and the engine goes on only once they are committed."""

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
from independence_bench.clients.protocol import Completion
from independence_bench.engine.batches import ItemWrite, JudgmentWrite, StoreBatches
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.store.claims import Claims
from independence_bench.store.no_space import StoreFull
from independence_bench.store.store import ItemRecord, Store, Verdict
from independence_bench.suites.suite import load_suite
from independence_bench.text.lossless import has_surrogates
from support.mock_server import MockConfig, MockServer
from support.store_views import connect


def _run(server: MockServer, data: Path, models: int = 2, runs: int = 1) -> RunSummary:
    """The engine itself (no survey of what is stored first), on two scenarios of `v2`."""
    suite = load_suite("v2").subset(["direct", "negotiation"])

    async def run() -> RunSummary:
        pool = ClientPool(env={}, concurrency=16)
        subjects = tuple(
            ModelSpec(id="scripted-firm", label=f"m{i}", base_url=server.base_url, seed=i)
            for i in range(models)
        )
        judge = ModelSpec(id="scripted-judge", label="judge", base_url=server.base_url)
        try:
            with Store(data) as store:
                plan = RunPlan(suite=suite, models=subjects, judge=judge, runs=runs)
                return await Engine(store, pool).run(plan)
        finally:
            await pool.aclose()

    return asyncio.run(run())


def test_a_call_is_looked_up_only_by_its_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[str] = []
    checked: list[str] = []
    real_get, real_attempt = Store.get_completion, Claims.attempt_many

    def get_completion(self: Store, key: str) -> Completion | None:
        looked.append(key)
        return real_get(self, key)

    def attempt_many(self: Claims, keys: Any) -> Any:
        checked.extend(keys)
        return real_attempt(self, keys)

    monkeypatch.setattr(Store, "get_completion", get_completion)
    monkeypatch.setattr(Claims, "attempt_many", attempt_many)
    with MockServer(MockConfig(latency_s=0.02)) as server:
        first = _run(server, tmp_path)
        sent = server.seen.request_count
        assert first.calls == sent > 0
        # Every call went through the claim's check, and nothing was looked up alone.
        assert sorted(checked) == sorted(set(checked)) and len(checked) == sent
        assert looked == []
        checked.clear()
        with connect(tmp_path) as db:  # every reply stored, no conversation or verdict
            db.execute("DELETE FROM judgments")
            db.execute("DELETE FROM items")
            db.commit()
        again = _run(server, tmp_path)
        assert server.seen.request_count == sent  # nothing paid twice
    # The stored replies are found by the claim's look, each read once.
    assert again.calls == 0 and again.cached_calls == sent
    assert sorted(looked) == sorted(checked) and len(looked) == sent


def test_the_judge_reads_the_transcript_as_stored_without_reading_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hostile server's replies (lone surrogates, NUL, escapes, bytes not UTF-8): the item
    # each judgment gets is the stored row, equal field for field, and no item is read back.
    judged: list[ItemRecord] = []
    read_back: list[str] = []
    real_judge, real_get = Engine.judge_item, Store.get_item

    async def judge_item(self: Engine, item: ItemRecord, *args: Any) -> None:
        judged.append(item)
        await real_judge(self, item, *args)

    def get_item(self: Store, item_id: str) -> ItemRecord | None:
        read_back.append(item_id)
        return real_get(self, item_id)

    monkeypatch.setattr(Engine, "judge_item", judge_item)
    monkeypatch.setattr(Store, "get_item", get_item)
    with MockServer(MockConfig(latency_s=0.02, hostile=True)) as server:
        summary = _run(server, tmp_path)
    assert summary.items_done == len(judged) > 0 and read_back == []
    with Store(tmp_path) as store:
        for item in judged:
            assert item == real_get(store, item.id)
    assert any(has_surrogates(turn.reply) for item in judged for turn in item.turns)


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
        summary = _run(server, tmp_path, models=3, runs=2)
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
        _run(server, tmp_path / "first", models=3, runs=2)
    with Store(tmp_path / "first") as store:
        items = store.items()

    async def wave(batches: StoreBatches) -> None:
        await asyncio.gather(*(batches.store_record(ItemWrite(item)) for item in items))

    with Store(tmp_path / "first") as store:
        store.connection.execute("DELETE FROM judgments")
        store.connection.execute("DELETE FROM items")
        asyncio.run(wave(StoreBatches(store, Claims(store))))
        assert store.items() == items
