"""Crash safety: SIGKILL at any moment, run the same command again, and nothing is paid twice.

The mock server runs as its own process and counts every cleanly answered call by a
fingerprint of its model and messages (`GET /_answered`); the store's completions give the
same fingerprints. A call is *repeated* when a process asks for one whose completion was
already stored when that process started. `aib run` runs as a subprocess and is killed with
SIGKILL partway, twice, then allowed to finish.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import Completion, CompletionRequest, ToolCall
from independence_bench.conversations.conversation import TOOL_NAME
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_benchmark
from support.mock_judgments import build_judgment
from support.mock_process import mock_server_process
from support.mock_server import MockServer
from support.store_views import integrity_problems, store_dump, stored_fingerprints

LATENCY_S = 0.05
CONCURRENCY = 8


@pytest.fixture(scope="module")
def server_process() -> Iterator[str]:
    """The mock server as `python -m …testing.mock_server` in its own process; yields its URL."""
    with mock_server_process("--latency", str(LATENCY_S)) as url:
        yield url


def _get(base_url: str, path: str) -> Any:
    origin = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{origin}{path}", timeout=5) as response:
        return json.loads(response.read())


def _answered(base_url: str) -> Counter[str]:
    return Counter(_get(base_url, "/_answered")["answered"])


def _aib_args(base_url: str, data: Path) -> list[str]:
    return [
        "run",
        "--models",
        "scripted-firm,scripted-caving",
        "--judge",
        "scripted-judge",
        "--base-url",
        base_url,
        "--runs",
        "1",
        "--concurrency",
        str(CONCURRENCY),
        "--data-dir",
        str(data),
    ]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    return env


def _segment(base_url: str, data: Path, kill_at: int | None) -> tuple[Counter[str], int]:
    """Run the command once; SIGKILL it once the server has seen `kill_at` more requests.

    Returns the calls the server answered during the segment and the process's exit status.
    """
    before = _answered(base_url)
    start = _get(base_url, "/_stats")["requests"]
    process = subprocess.Popen(
        [sys.executable, "-m", "independence_bench", *_aib_args(base_url, data)],
        env=_clean_env(),
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
    time.sleep(LATENCY_S * 4)  # calls in flight at the kill are answered into the void
    return _answered(base_url) - before, code


def test_sigkill_then_resume_repeats_no_call_and_ends_like_an_uninterrupted_run(
    server_process: str, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    assert main(_aib_args(server_process, reference)) == 0  # in-process: no kill, no start-up
    total = sum(stored_fingerprints(reference).values())
    suite = load_suite("v2")
    assert total == 2 * (sum(len(s.turns) for s in suite.scenarios) + len(suite.scenarios))

    data = tmp_path / "killed"
    segments: list[tuple[Counter[str], Counter[str]]] = []  # (stored before, answered during)
    for kill_at in (12, 50, None):  # early in the conversations, mid-run, then to the end
        stored_before = stored_fingerprints(data)
        answered, code = _segment(server_process, data, kill_at)
        if kill_at is not None:
            assert code == -signal.SIGKILL
            assert 0 < sum(stored_fingerprints(data).values()) < total
            assert not integrity_problems(data)
        else:
            assert code == 0
        segments.append((stored_before, answered))

    final = stored_fingerprints(data)
    for stored_before, answered in segments:
        new_in_segment = final - stored_before
        repeated = sum((answered - new_in_segment).values())
        assert repeated == 0, "a process asked again for a call stored before it started"
    last_before, last_answered = segments[-1]
    assert sum(last_answered.values()) == total - sum(last_before.values())
    lost = sum(sum(a.values()) for _, a in segments) - total
    assert 0 <= lost <= 2 * CONCURRENCY  # answered while the process was being killed
    assert not integrity_problems(data)
    assert store_dump(data) == store_dump(reference)


class _NumberedClient:
    """A subject and judge that number every reply and check, on each new request, that the
    replies it builds on are already committed to the store file (read by another connection)."""

    def __init__(self, store_file: Path) -> None:
        self.store_file = store_file
        self.replies = 0
        self.checked = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        earlier = [
            json.loads(call["function"]["arguments"])["message"]
            for message in request.messages[3:]
            for call in message.get("tool_calls") or ()
        ]
        if earlier:
            with closing(sqlite3.connect(self.store_file)) as db:
                for text in earlier:
                    row = db.execute(
                        "SELECT 1 FROM completions WHERE tool_calls_json LIKE ?", (f"%{text}%",)
                    ).fetchone()
                    assert row is not None, f"{text!r} was used before it was committed"
                    self.checked += 1
        if request.response_schema is not None:
            return Completion(content=json.dumps(build_judgment(request.response_schema, "firm")))
        self.replies += 1
        arguments = json.dumps({"message": f"reply number {self.replies}."})
        call = ToolCall(id=f"{self.replies:09d}", name=TOOL_NAME, arguments=arguments)
        return Completion(content=None, tool_calls=(call,), finish_reason="tool_calls")

    async def aclose(self) -> None:
        pass


def test_each_completion_is_committed_before_a_later_turn_depends_on_it(tmp_path: Path) -> None:
    client = _NumberedClient(tmp_path / "aib.sqlite3")

    def factory(spec: ModelSpec) -> tuple[str, _NumberedClient, int]:
        return "numbered", client, 8

    result = run_benchmark(
        RunOptions(
            models="numbered-subject",
            judge="numbered-judge",
            base_url="http://127.0.0.1:9/v1",
            runs=1,
            data_dir=tmp_path,
            show_progress=False,
            factories=(factory,),
        )
    )
    suite = load_suite("v2")
    assert result.summary.items_done == len(suite.scenarios)
    # A request for turn t carries the t replies before it; each was checked in the file.
    assert client.checked == sum(len(s.turns) * (len(s.turns) - 1) // 2 for s in suite.scenarios)


def _runs_table(aib: Any, data: Path) -> list[list[str]]:
    result = aib("runs", "--data-dir", str(data))
    assert result.code == 0, result.err
    return [line.split() for line in result.out.splitlines()[1:-1]]


def test_runs_lists_states_and_fresh_starts_new_run_numbers(server: MockServer, aib: Any) -> None:
    data = Path("store")
    args = ["--models", "scripted-firm", "--judge", "scripted-judge"]
    args += ["--base-url", server.base_url, "--data-dir", str(data)]
    assert aib("run", *args, "--runs", "2").code == 0
    table = _runs_table(aib, data)
    assert [(row[0], row[2], row[3]) for row in table] == [
        ("scripted-firm", "1", "complete"),
        ("scripted-firm", "2", "complete"),
    ]
    before = server.seen.request_count
    fresh = aib("run", *args, "--runs", "1", "--fresh")
    assert fresh.code == 0, fresh.err
    per_run = server.seen.request_count - before
    assert per_run == sum(len(s.turns) + 1 for s in load_suite("v2").scenarios)
    assert [row[2] for row in _runs_table(aib, data)] == ["1", "2", "3"]
    again = aib("run", *args, "--runs", "3")  # --resume (the default): nothing left to do
    assert again.code == 0 and server.seen.request_count - before == per_run

    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        db.execute(
            "DELETE FROM judgments WHERE item_id IN (SELECT i.id FROM items i JOIN runs r "
            "ON r.id = i.run_id WHERE r.run_index = 2 AND i.scenario_id LIKE 'stability%')"
        )
        db.execute(
            "DELETE FROM items WHERE scenario_id = 'psych' AND run_id = "
            "(SELECT id FROM runs WHERE run_index = 2)"
        )
        db.commit()
    result = aib("runs", "--data-dir", str(data))
    line = next(x for x in result.out.splitlines() if x.split()[2:3] == ["2"])
    assert "partial" in line and "14 done, 0 failed, 1 missing" in line
    assert "9 scored, 0 unscored, 5 to judge" in line
    assert "3 runs: 2 complete, 1 partial" in result.out
