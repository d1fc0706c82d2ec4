"""Interruptions lose no answered call and pay for none twice.

`aib run` runs as a subprocess against the scripted server (in this process, slow enough that
calls are in flight). The first Ctrl-C, SIGTERM or SIGHUP (a closed terminal) stops starting
calls and stores the ones in flight, then exits 130/143/129 saying to run the command again, for
`aib run` and `aib judge` alike; a second Ctrl-C aborts at once. A
process frozen with SIGSTOP while another took its calls over sends, once resumed, only the
calls that were already on the wire.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from independence_bench.engine.claiming import ClaimLost, guard_claim
from independence_bench.store.claims import Claims
from independence_bench.store.store import Store
from support.mock_server import MockConfig, MockServer
from support.store_views import stored_fingerprints

LEASE_S = 1.0
CHILD = f"""
import sys
import independence_bench.workflows.run as run
from independence_bench.store.claims import Claims
run.Claims = lambda store, lease_s: Claims(store, lease_s={LEASE_S})  # a test-sized lease
from independence_bench.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture()
def slow_server() -> Iterator[MockServer]:
    with MockServer(MockConfig(latency_s=0.5)) as running:
        yield running


def _start(server: MockServer, data: Path, concurrency: int, *extra: str) -> subprocess.Popen[str]:
    args = [
        "run", "--models", "scripted-firm,scripted-caving", "--judge", "scripted-judge",
        "--base-url", server.base_url, "--runs", "1", "--concurrency", str(concurrency),
        "--data-dir", str(data), *extra,
    ]  # fmt: skip
    return _start_aib(args)


def _start_aib(args: list[str]) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_requests(server: MockServer, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while server.seen.request_count < count:
        assert process.poll() is None, "the run ended too soon"
        assert time.monotonic() < deadline
        time.sleep(0.01)


SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]


@pytest.mark.parametrize(("signum", "status"), SIGNALS)
def test_the_first_signal_stores_the_calls_in_flight_and_starts_none(
    signum: int, status: int, slow_server: MockServer, tmp_path: Path
) -> None:
    process = _start(slow_server, tmp_path / "d", concurrency=32)
    _stop_and_check(process, signum, status, slow_server, tmp_path / "d")


@pytest.mark.parametrize(("signum", "status"), SIGNALS[1:])
def test_aib_judge_stores_the_judge_calls_in_flight_at_a_signal(
    signum: int, status: int, slow_server: MockServer, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    with MockServer(MockConfig()) as fast:
        first = _start(fast, data, concurrency=32)
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    judge = [
        "judge", "--judge", "scripted-judge-lenient", "--base-url", slow_server.base_url,
        "--concurrency", "8", "--data-dir", str(data),
    ]  # fmt: skip
    process = _start_aib(judge)  # 30 judgments in all
    _stop_and_check(process, signum, status, slow_server, data, after=12, in_flight=8)


def _stop_and_check(
    process: subprocess.Popen[str],
    signum: int,
    status: int,
    server: MockServer,
    data: Path,
    *,
    after: int = 40,
    in_flight: int = 32,
) -> None:
    """Signal `process` after `after` requests; every answered call must be in the store."""
    _wait_for_requests(server, after, process)
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == status, err
    assert "run the command again to resume" in err and "Traceback" not in err
    time.sleep(0.2)
    answered = Counter(server.seen.answered)
    stored = stored_fingerprints(data)
    assert answered - stored == Counter(), "an answered call in flight was not stored"
    assert sum(stored.values()) >= after - in_flight  # what was in flight at the signal is there


def test_a_second_ctrl_c_aborts_without_waiting(tmp_path: Path) -> None:
    with MockServer(MockConfig(latency_s=600)) as server:  # no call ever ends by itself
        # user_role only (suite full has it): a model's first tools call goes alone (a server
        # that refuses tools says so once), and here no call ever ends to let the others start.
        process = _start(server, tmp_path / "d", 8, "--suite", "full", "--modes", "user_role")
        _wait_for_requests(server, 8, process)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert process.poll() is None, "the first Ctrl-C did not wait for the calls in flight"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


def test_a_resumed_process_does_not_send_calls_another_took_over(
    slow_server: MockServer, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    paused = _start(slow_server, data, concurrency=2)
    _wait_for_requests(slow_server, 6, paused)
    paused.send_signal(signal.SIGSTOP)
    try:
        other = _start(slow_server, data, concurrency=16)  # waits out the frozen leases
        _, err = other.communicate(timeout=300)
        assert other.returncode == 0, err
    finally:
        paused.send_signal(signal.SIGCONT)
    _, err = paused.communicate(timeout=300)
    assert paused.returncode == 0, err
    repeated = sum(count - 1 for count in slow_server.seen.answered.values() if count > 1)
    assert repeated <= 2, f"{repeated} calls were paid twice; only the 2 in flight may be"


def test_a_claim_taken_over_during_a_pause_stops_the_send(tmp_path: Path) -> None:
    now = [1000.0]
    with Store(tmp_path) as store:
        mine = Claims(store, lease_s=10, owner="host/1/a", clock=lambda: now[0])
        theirs = Claims(store, lease_s=10, owner="host/2/b", clock=lambda: now[0])
        assert mine.attempt("k").claimed
        check = guard_claim(mine, "k", lambda: None)
        check()  # still ours
        now[0] += 11  # frozen past the lease, nobody took it: renewed and sent
        check()
        assert theirs.attempt("k").held_by is not None
        now[0] += 11
        assert theirs.attempt("k").claimed  # taken over while we were frozen
        with pytest.raises(ClaimLost):
            check()
