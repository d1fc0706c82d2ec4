"""`aib runs` on a damaged store prints the damaged-store line, not a table of the counts it
could still read (it reads no texts, so damage there went unseen: `opening.check_intact`)."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from support.cli_home import cli_home
from support.mock_server import MockConfig, MockServer

PAGE = 4096


def _damage_table(path: Path, table: str) -> None:
    """Zero the root page of `table`, as a torn write or a bad sector would leave it."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert db.execute("PRAGMA page_size").fetchone()[0] == PAGE
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    data = bytearray(path.read_bytes())
    data[(root - 1) * PAGE : root * PAGE] = bytes(PAGE)
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def judged_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One judged run's store for the module; each test damages a copy of it."""
    root = tmp_path_factory.mktemp("judged")
    with MockServer(MockConfig()) as server, cli_home(root):
        code = main([
            "run", "--models", "scripted-firm", "--judge", "scripted-judge", "--base-url",
            server.base_url, "--runs", "1", "--scenarios", "direct", "--data-dir", "d",
        ])  # fmt: skip
    assert code == 0
    return root / "d"


@pytest.mark.parametrize("table", ["texts", "messages", "judge_standings"])
@pytest.mark.parametrize("failed", [False, True], ids=["runs", "runs --failed"])
def test_aib_runs_on_a_damaged_store_is_the_damaged_store_line(
    aib: Any, judged_store: Path, table: str, failed: bool
) -> None:
    shutil.copytree(judged_store, "d")
    assert aib("runs", "--data-dir", "d").code == 0  # the copy reads whole before the damage
    _damage_table(Path("d/aib.sqlite3"), table)
    result = aib("runs", "--data-dir", "d", *(("--failed",) if failed else ()))
    assert result.code == 2 and result.out == "", result.out
    [line] = result.err.splitlines()
    assert line.startswith("aib: error: the store is damaged (database disk image is malformed")
    assert "restore aib.sqlite3 from a backup" in line and "Traceback" not in result.err
