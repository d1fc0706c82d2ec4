"""A write the disk refuses keeps every answered call it can, stops sending, and says so.

`aib run` runs as a subprocess under a file-size limit (`RLIMIT_FSIZE`, what `ulimit -f` sets:
the write gets EFBIG, SQLite says "disk I/O error") against the scripted server. Under a limit
the write-ahead log passes but the store does not, every answered call is stored and the run
ends normally (before: 122 answered, 63 stored). Under a limit the store itself passes, no call
starts after the first refusal and the last line says how many answered calls were stored and
how many must be paid again, which is what the server and the store show.
"""

from __future__ import annotations

import re
import resource
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from independence_bench.clients.protocol import Completion
from independence_bench.errors import UserError
from independence_bench.store import store as store_module
from independence_bench.store.held import (
    SPILL_FOLDER,
    CompletionWrite,
    HeldCompletions,
    take_spilled,
)
from independence_bench.store.no_space import StoreFull, is_no_space
from independence_bench.store.store import Store
from support.child_process import env_with_this_package
from support.mock_server import MockConfig, MockServer
from support.store_views import stored_fingerprints

CONCURRENCY = 8


def _run_limited(
    server: MockServer, data: Path, limit_bytes: int
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, resource.RLIM_INFINITY))

    args = [
        "run", "--models", "scripted-firm,scripted-caving", "--judge", "scripted-judge",
        "--base-url", server.base_url, "--runs", "2", "--concurrency", str(CONCURRENCY),
        "--data-dir", str(data),
    ]  # fmt: skip
    env = {k: v for k, v in env_with_this_package().items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "independence_bench", *args],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,  # only setrlimit, before exec
        timeout=300,
    )


def test_a_log_that_passes_the_file_size_limit_makes_room_and_loses_nothing(
    tmp_path: Path,
) -> None:
    with MockServer(MockConfig(latency_s=0.02)) as server:
        result = _run_limited(server, tmp_path / "d", 1024 * 1024)
        assert result.returncode == 0, result.stderr
        answered = sum(server.seen.answered.values())
    assert (tmp_path / "d" / "aib.sqlite3").stat().st_size <= 1024 * 1024
    assert sum(stored_fingerprints(tmp_path / "d").values()) == answered > 100


def test_a_store_that_passes_the_limit_stops_sending_spills_and_counts_what_it_lost(
    tmp_path: Path,
) -> None:
    data = tmp_path / "d"
    with MockServer(MockConfig(latency_s=0.02)) as server:
        result = _run_limited(server, data, 160 * 1024)
        before = Counter(server.seen.answered)
        assert result.returncode == 2, result.stderr
        lines = [line for line in result.stderr.splitlines() if not line.startswith("progress:")]
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        found = re.search(
            r"the disk is full .*?(\d+) answered calls? stored, (\d+) answered calls? kept in "
            r"(.+) for the next run, (\d+) answered",
            lines[0],
        )
        assert found is not None, lines[0]
        kept, spilled, lost = int(found[1]), int(found[2]), int(found[4])
        assert found[3] == str(data / SPILL_FOLDER)
        assert sum(stored_fingerprints(data).values()) == kept
        assert kept + spilled + lost == sum(before.values())
        # Only the calls on the wire when the disk refused a wave, and the replies that wave
        # held (each reply waits for its wave's write after its slot is free): none started after.
        assert spilled + lost <= 2 * CONCURRENCY
        resumed = _run_limited(server, data, resource.RLIM_INFINITY)
        assert resumed.returncode == 0, resumed.stderr
        answered = sum(server.seen.answered.values())
    # Every call answered in either run is stored once, but the lost ones, answered twice:
    # the spilled ones came from the spill store, not the server.
    assert answered - sum(stored_fingerprints(data).values()) == lost
    assert not (data / SPILL_FOLDER).exists()


def _completion(text: str) -> Completion:
    return Completion(content=text, finish_reason="stop")


@pytest.fixture()
def refusing(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The store's completion writes raise SQLite's real no-space error while the list's
    first number is above 0 (each refusal counts it down)."""
    left = [0]
    real = store_module.write_completion

    def write(*args: object, **kwargs: object) -> None:
        if left[0] > 0:
            left[0] -= 1
            raise sqlite3.OperationalError("database or disk is full")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "write_completion", write)
    return left


def test_one_refused_write_makes_room_and_is_tried_again(
    tmp_path: Path, refusing: list[int]
) -> None:
    refusing[0] = 1
    with Store(tmp_path) as store:
        assert store.put_completion("k", "m", {}, _completion("kept"))
        assert store.get_completion("k") == _completion("kept")
        assert not store.connection.in_transaction


def test_held_replies_wait_in_memory_until_the_store_takes_them(
    tmp_path: Path, refusing: list[int]
) -> None:
    held = HeldCompletions()
    with Store(tmp_path) as store:
        refusing[0] = 4  # two writes, each refused twice (the second time after making room)
        assert not held.put(store, CompletionWrite("a", "m", {}, _completion("first")))
        assert not held.put(store, CompletionWrite("b", "m", {}, _completion("second")))
        assert isinstance(held.full, StoreFull) and len(held) == 2
        assert held.get("a") == _completion("first") and store.get_completion("a") is None
        assert held.flush(store) == 0  # the disk has room again
        assert store.get_completion("b") == _completion("second") and held.get("b") is None


@pytest.mark.parametrize(
    ("error", "no_space"),
    [
        (sqlite3.OperationalError("database or disk is full"), True),
        (OSError(28, "No space left on device"), True),
        (OSError(27, "File too large"), True),
        (sqlite3.OperationalError("database is locked"), False),
        (OSError(13, "Permission denied"), False),
    ],
)
def test_what_counts_as_no_space(error: Exception, no_space: bool) -> None:
    assert is_no_space(error) is no_space


def test_held_replies_the_store_never_takes_go_to_the_spill_store_for_the_next_run(
    tmp_path: Path, refusing: list[int]
) -> None:
    held = HeldCompletions()
    with Store(tmp_path) as store:
        refusing[0] = 4  # the write and its retry, then the same at the end; the spill takes it
        answered = CompletionWrite("a", "m", {"messages": []}, _completion("answered"))
        assert not held.put(store, answered)
        with pytest.raises(UserError, match=r"0 answered calls stored, 1 answered call kept in"):
            held.finish(store, answered=1)
        assert store.get_completion("a") is None and (tmp_path / SPILL_FOLDER).is_dir()
        assert take_spilled(store) == 1  # the next run, before it sends anything
        assert store.get_completion("a") == _completion("answered")
        assert store.completion_request("a") == {"messages": []}
    assert not (tmp_path / SPILL_FOLDER).exists()
