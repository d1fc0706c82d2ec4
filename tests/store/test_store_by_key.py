"""The closing report's cost and cache sums read many completions with one query per chunk of
keys, and answer exactly as one query per key did (order, duplicates, keys not stored)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from independence_bench.clients.protocol import Completion
from independence_bench.store import by_key
from independence_bench.store.store import Store

STORED = 1_203  # more than two chunks


def _completion(i: int) -> Completion:
    return Completion(
        content="x",
        cost_usd=None if i % 7 == 0 else i / 1000,
        cached_tokens=None if i % 5 == 0 else i,
        cache_write_tokens=i % 3 or None,
        cache_discount=None if i % 4 == 0 else -i / 10_000,
    )


def _per_key(
    db: sqlite3.Connection, keys: list[str]
) -> tuple[list[object], tuple[int, int, float]]:
    """The answers as one SELECT per key gave them before (the reference)."""
    costs: list[object] = []
    read = written = 0
    saved = 0.0
    for key in keys:
        row = db.execute(
            "SELECT cost_usd, cached_tokens, cache_write_tokens, cache_discount "
            "FROM completions WHERE key = ?",
            (key,),
        ).fetchone()
        costs.append(None if row is None else row[0])
        if row is not None:
            read += row[1] or 0
            written += row[2] or 0
            saved += row[3] or 0.0
    return costs, (read, written, saved)


def test_batched_sums_equal_per_key_ones_with_missing_and_repeated_keys(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for i in range(STORED):
            store.put_completion(f"k{i}", "m", {"i": i}, _completion(i))
        keys = [f"k{i}" for i in reversed(range(STORED))]
        keys[10:10] = ["missing", "k5", "k5", "also-missing", "k1200"]
        costs, cache = _per_key(store._db, keys)
        assert store.completion_costs(keys) == costs
        assert store.cache_usage(keys) == cache
        assert store.completion_costs([]) == []
        assert store.cache_usage(["nowhere"]) == (0, 0, 0.0)


def test_one_query_per_chunk_of_keys_not_one_per_key(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for i in range(STORED):
            store.put_completion(f"k{i}", "m", {"i": i}, _completion(i))
        keys = [f"k{i}" for i in range(STORED)] * 2
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        store.completion_costs(keys)
        store.cache_usage(keys)
        store._db.set_trace_callback(None)
    chunks = -(-STORED // by_key.CHUNK)
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 2 * chunks
