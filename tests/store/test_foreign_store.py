"""Another program's SQLite file whose tables happen to be named like ours is left alone.

A file with tables `runs`, `items`, `completions` and `judgments` of its own was once taken
for an early store by a read-only command: stamped, switched to WAL, then a traceback. Every
command now refuses it with one line (exit 2) and leaves its bytes as they were, while a real
store of an earlier version (our tables and columns, no id) still opens and is stamped.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.store.opening import APPLICATION_ID
from independence_bench.store.store import Store
from support.mock_server import MockServer

LOOKALIKE = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, distance_km REAL, runner TEXT);
CREATE TABLE items (sku TEXT PRIMARY KEY, price REAL);
CREATE TABLE completions (task TEXT, done_at TEXT);
CREATE TABLE judgments (case_no TEXT, verdict TEXT);
INSERT INTO runs (distance_km, runner) VALUES (5.2, 'ana');
"""


def _lookalike(path: Path, user_version: int) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.executescript(LOOKALIKE)
        db.execute(f"PRAGMA user_version = {user_version}")
        db.commit()
    return path.read_bytes()


@pytest.mark.parametrize("user_version", [0, 1])
@pytest.mark.parametrize(
    "command",
    [("leaderboard",), ("runs",), ("items",), ("report", "--out", "rep"), ("run", "--models",
     "scripted-firm", "--judge", "scripted-judge", "--base-url", "{url}")],
)  # fmt: skip
def test_a_lookalike_file_is_refused_untouched_by_every_command(
    command: tuple[str, ...], user_version: int, aib: Any, server: MockServer
) -> None:
    path = Path("d/aib.sqlite3")
    before = _lookalike(path, user_version)
    result = aib(*(a.replace("{url}", server.base_url) for a in command), "--data-dir", "d")
    assert result.code == 2, result.out + result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "is not an aib store" in lines[0], result.err
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["aib.sqlite3"]


def test_an_unstamped_store_of_ours_still_opens_and_is_stamped_on_write(tmp_path: Path) -> None:
    Store(tmp_path).close()
    path = tmp_path / "aib.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id = 0")  # as stores before the stamp
    with Store(tmp_path, read_only=True) as store:
        assert store.runs() == []
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0  # a reader wrote nothing
    Store(tmp_path).close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
