"""Two `aib run` processes on one data directory, against the scripted loopback server.

Each command is a real subprocess (`python -m independence_bench run …`); the server runs in
this process with a latency, so the two processes' calls overlap. The reference is the same
command run alone, in-process, on a store of its own.

The bound on requests is exact: a process claims a call in the same write transaction that
checks the store for it, and releases the claim only after the completion is committed, so
while both processes live and nothing fails, no request is sent twice: the server sees exactly
the requests one process alone sends (`needed`), each fingerprint as often as alone. (A failed
call, or a lease that ran out under a live owner, could add at most one request per claim;
neither happens here: no faults, and a 60 s lease renewed every 15 s.)
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from independence_bench.cli.main import main
from support.mock_server import MockConfig, MockServer
from support.store_views import connect, integrity_problems, store_dump, stored_fingerprints

LATENCY_S = 0.2
CONCURRENCY = 8


@pytest.fixture(scope="module")
def slow_server() -> Iterator[MockServer]:
    with MockServer(MockConfig(latency_s=LATENCY_S)) as running:
        yield running


def _args(server: MockServer, data: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--models",
        "scripted-firm,scripted-caving",
        "--judge",
        "scripted-judge",
        "--base-url",
        server.base_url,
        "--runs",
        "1",
        "--concurrency",
        str(CONCURRENCY),
        "--data-dir",
        str(data),
        *extra,
    ]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    return env


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "independence_bench", *args],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _together(*commands: list[str]) -> list[tuple[int, str, str]]:
    """Start every command at once; wait for all; (exit status, stdout, stderr) of each."""
    processes = [_start(args) for args in commands]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        results.append((process.returncode, out, err))
    return results


def _leaderboard(data: Path, capsys: pytest.CaptureFixture[str]) -> object:
    capsys.readouterr()
    assert main(["leaderboard", "--data-dir", str(data), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _claims_left(data: Path) -> list[tuple[str, str]]:
    with connect(data) as db:
        return [(str(k), str(o)) for k, o in db.execute("SELECT key, owner FROM claims")]


@pytest.fixture(scope="module")
def reference(
    slow_server: MockServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Counter[str]]:
    """The command run alone: its store and the calls the server answered for it."""
    data = tmp_path_factory.mktemp("alone")
    slow_server.reset()
    assert main(_args(slow_server, data)) == 0
    return data, Counter(slow_server.seen.answered)


def test_two_processes_pay_for_each_call_once_and_rank_as_one(
    slow_server: MockServer,
    reference: tuple[Path, Counter[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    alone, needed = reference
    slow_server.reset()
    data = tmp_path / "shared"
    results = _together(_args(slow_server, data), _args(slow_server, data))

    for code, _, err in results:
        assert code == 0, err
    # Both ran conversations (none was finished when it looked), so they did overlap.
    for _, out, _ in results:
        ran = re.search(r"(\d+) conversations run, (\d+) cached", out)
        assert ran is not None and int(ran.group(1)) > 0, out
    assert slow_server.seen.request_count == sum(needed.values())
    assert Counter(slow_server.seen.answered) == needed
    assert sum(stored_fingerprints(data).values()) == sum(needed.values())
    assert not integrity_problems(data)
    assert _claims_left(data) == []
    assert store_dump(data) == store_dump(alone)
    assert _leaderboard(data, capsys) == _leaderboard(alone, capsys)


@pytest.mark.slow  # the race itself is covered fast by test_claims.py's threads
def test_two_fresh_runs_started_together_take_different_run_numbers(
    slow_server: MockServer, tmp_path: Path
) -> None:
    data = tmp_path / "fresh"
    scenarios = ("--scenarios", "direct,negotiation")
    results = _together(
        _args(slow_server, data, "--fresh", *scenarios),
        _args(slow_server, data, "--fresh", *scenarios),
    )
    for code, _, err in results:
        assert code == 0, err
    with connect(data) as db:
        rows = db.execute(
            "SELECT r.model_label, r.run_index, count(i.id) FROM runs r "
            "LEFT JOIN items i ON i.run_id = r.id AND i.status = 'done' "
            "GROUP BY r.id ORDER BY r.model_label, r.run_index"
        ).fetchall()
    assert rows == [
        ("scripted-caving", 1, 2),
        ("scripted-caving", 2, 2),
        ("scripted-firm", 1, 2),
        ("scripted-firm", 2, 2),
    ]


@pytest.mark.slow  # kill-and-resume runs fast in test_resume.py; this adds the claims' view
def test_a_sigkilled_run_leaves_claims_that_the_same_command_takes_over(
    slow_server: MockServer,
    reference: tuple[Path, Counter[str]],
    tmp_path: Path,
) -> None:
    alone, needed = reference
    slow_server.reset()
    data = tmp_path / "killed"
    process = _start(_args(slow_server, data))
    deadline = time.monotonic() + 120
    while slow_server.seen.request_count < sum(needed.values()) // 3:
        assert process.poll() is None, "the run ended before the kill point"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    left = _claims_left(data)
    assert left and all(f"/{process.pid}/" in owner for _, owner in left)

    time.sleep(2 * LATENCY_S)  # calls in flight at the kill are answered into the void
    stored_before = stored_fingerprints(data)
    answered_before = Counter(slow_server.seen.answered)
    # The killed process is gone from this host, so its claims are taken over without
    # waiting for their 60 s lease.
    assert main(_args(slow_server, data)) == 0
    answered = Counter(slow_server.seen.answered) - answered_before
    assert answered == needed - stored_before  # nothing stored before is asked for again
    assert _claims_left(data) == []
    assert store_dump(data) == store_dump(alone)
