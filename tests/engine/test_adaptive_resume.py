"""Suite `adaptive` survives SIGKILL mid-conversation: no paid call of any role is repeated.

As `test_resume.py` does for scripted suites: the mock server runs as its own process and
counts every answered call by fingerprint; `aib run --suite adaptive` runs as a subprocess and
is killed twice while conversations are under way, then finishes. The calls of all three roles
(subject, user model, judge) are counted, and each role is checked to have calls stored before
the last segment, so the resume really started mid-conversation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.store.store import Store
from support.mock_process import mock_server_process
from support.store_views import integrity_problems, store_dump, stored_fingerprints

LATENCY_S = 0.05
SCENARIOS = "escalation_pref_city,escalation_opinion_zoos,control_name_pressure"


@pytest.fixture(scope="module")
def server_process() -> Iterator[str]:
    with mock_server_process("--latency", str(LATENCY_S)) as url:
        yield url


def _get(base_url: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base_url.removesuffix('/v1')}{path}", timeout=5) as response:
        return json.loads(response.read())


def _args(base_url: str, data: Path) -> list[str]:
    return [
        "run", "--suite", "adaptive", "--models", "scripted-caver-k3,scripted-flipflop",
        "--judge", "scripted-judge", "--user-model", "scripted-user", "--base-url", base_url,
        "--runs", "1", "--concurrency", "2", "--scenarios", SCENARIOS, "--data-dir", str(data),
    ]  # fmt: skip


def _segment(base_url: str, data: Path, kill_at: int | None) -> tuple[Counter[str], int]:
    before = Counter(_get(base_url, "/_answered")["answered"])
    start = _get(base_url, "/_stats")["requests"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "independence_bench", *_args(base_url, data)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if kill_at is not None:
        deadline = time.monotonic() + 60
        while _get(base_url, "/_stats")["requests"] - start < kill_at:
            assert process.poll() is None, "the run ended before the kill point"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    code = process.wait(timeout=60)
    time.sleep(LATENCY_S * 4)
    return Counter(_get(base_url, "/_answered")["answered"]) - before, code


def _stored_models(data: Path) -> Counter[str]:
    with Store(data, read_only=True) as store:
        requests = [store.completion_request(key) for key in store.completion_keys()]
    return Counter(str(r["model"]) for r in requests if r is not None)


def test_sigkill_mid_conversation_then_resume_repeats_no_call_of_any_role(
    server_process: str, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    assert main(_args(server_process, reference)) == 0
    total = sum(stored_fingerprints(reference).values())
    # 2 models × (2 escalations × (6 turns + 5 user turns) + 1 control × 2 turns) + 6 judgments
    assert total == 2 * (2 * 11 + 2) + 6
    data = tmp_path / "killed"
    segments = []
    for kill_at in (7, 25, None):  # inside the first conversations, mid-run, then to the end
        stored_before = stored_fingerprints(data)
        answered, code = _segment(server_process, data, kill_at)
        if kill_at is not None:
            assert code == -signal.SIGKILL
            assert not integrity_problems(data)
        else:
            assert code == 0
        segments.append((stored_before, answered))
    # Before the last segment the store held calls of the user model and of the subjects, so
    # conversations resumed at their exact turn, with the user model's turns from the store.
    assert _stored_models(data) == _stored_models(reference)
    final = stored_fingerprints(data)
    for stored_before, answered in segments:
        repeated = sum((answered - (final - stored_before)).values())
        assert repeated == 0, "a process asked again for a call stored before it started"
    assert store_dump(data) == store_dump(reference)


def test_killed_segments_stored_user_model_calls_before_the_resume(
    server_process: str, tmp_path: Path
) -> None:
    data = tmp_path / "store"
    _, code = _segment(server_process, data, 12)
    assert code == -signal.SIGKILL
    stored = _stored_models(data)
    assert (
        stored["scripted-user"] >= 1
        and stored["scripted-caver-k3"] + stored["scripted-flipflop"] >= 2
    )
    with Store(data, read_only=True) as store:
        done = store.items(status="done", words=False)
    assert len(done) < 6  # the kill came while conversations were under way
