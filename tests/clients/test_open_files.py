"""The open-file bound: a run raises its soft limit and never holds more connections than fit."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from independence_bench.clients.open_files import MIN_CONNECTIONS, RESERVE, connection_budget
from support.cli_home import environment_without_user_variables
from support.mock_server import MockConfig, MockServer

SRC = Path(__file__).resolve().parents[2] / "src"


def _limit_files(soft: int, hard: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return apply


def _python(args: list[str], soft: int, hard: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**environment_without_user_variables(), "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, *args],
        preexec_fn=_limit_files(soft, hard),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def test_the_budget_is_the_soft_limit_less_open_files_and_a_reserve() -> None:
    assert connection_budget(256, open_now=10) == 256 - 10 - RESERVE
    assert connection_budget(40, open_now=30) == MIN_CONNECTIONS
    assert connection_budget(0, open_now=10) is None  # no limit to respect


def test_a_run_raises_its_soft_limit_to_the_hard_one(tmp_path: Path) -> None:
    code = "from independence_bench.clients.open_files import *; print(raise_open_file_limit())"
    done = _python(["-c", code], 256, 1024, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1024"


def test_a_run_at_ulimit_256_with_concurrency_2000_stores_every_conversation(
    tmp_path: Path,
) -> None:
    """20 models × 5 runs × 3 scenarios: 300 conversations want a connection each at once."""
    models = [
        {"id": "scripted-firm", "label": f"m{index:02d}", "seed": index} for index in range(20)
    ]
    (tmp_path / "models.yaml").write_text(json.dumps({"models": models}), encoding="utf-8")
    scenarios = "direct,tool_context,negotiation"
    with MockServer(MockConfig(latency_s=0.2, keep_bodies=False)) as server:
        args = ["-m", "independence_bench", "run", "--config", "models.yaml"]
        args += ["--judge", "scripted-judge", "--base-url", server.base_url, "--runs", "5"]
        args += ["--scenarios", scenarios, "--concurrency", "2000", "--data-dir", "store"]
        done = _python(args, 256, 256, tmp_path)
        peak = server.seen.peak_in_flight
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Errno 24" not in done.stderr
    assert "300 conversations run" in done.stdout and "0 failed" in done.stdout
    assert 100 < peak < 256, f"{peak} calls were in flight at once"
    with sqlite3.connect(tmp_path / "store" / "aib.sqlite3") as db:
        done_items = db.execute("SELECT count(*) FROM items WHERE status = 'done'").fetchone()[0]
        judged = db.execute("SELECT count(*) FROM judgments WHERE status = 'scored'").fetchone()
    assert done_items == 300 and judged[0] == 300
