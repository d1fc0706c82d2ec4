"""Two `aib run` processes on one data directory: requests sent against requests needed.

Issue 14's reproduction, as a measurement: the scripted server runs in its own process with a
latency; `--copies` identical `aib run --runs R` commands start at the same moment on one data
directory, then the same number of `aib run --fresh --runs 1` commands. It prints the requests
the server received against those one command alone needs (models × runs × (turns + judge
calls)), each command's wall time and exit status, and the run numbers the `--fresh` commands
took (they must all differ).

    python benchmarks/concurrent_runs.py
    python benchmarks/concurrent_runs.py --copies 3 --runs 1 --latency 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from independence_bench.suites.suite import load_suite
from support.mock_process import mock_server_process

MODELS = ("scripted-firm", "scripted-caving")
JUDGE = "scripted-judge"


def requests_so_far(base_url: str) -> int:
    origin = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{origin}/_stats", timeout=5) as response:
        return int(json.loads(response.read())["requests"])


def run_together(commands: Sequence[Sequence[str]]) -> list[tuple[int, float]]:
    """Start every command at once; (exit status, wall seconds) of each."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AIB_DATA_DIR", None)
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "independence_bench", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for args in commands
    ]
    ended = []
    for process in processes:
        code = process.wait()
        ended.append((code, time.perf_counter() - start))
    return ended


def run_args(base_url: str, data: Path, runs: int, *extra: str) -> list[str]:
    return [
        "run",
        "--models",
        ",".join(MODELS),
        "--judge",
        JUDGE,
        "--base-url",
        base_url,
        "--runs",
        str(runs),
        "--data-dir",
        str(data),
        *extra,
    ]


def calls_needed(runs: int) -> int:
    suite = load_suite("v2")
    per_run = sum(len(s.turns) for s in suite.scenarios) + len(suite.scenarios)
    return len(MODELS) * runs * per_run


def fresh_run_numbers(data: Path) -> list[int]:
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        rows = db.execute(
            "SELECT run_index FROM runs WHERE model_label = ? ORDER BY run_index", (MODELS[0],)
        )
        return [int(r[0]) for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=2, help="commands started together")
    parser.add_argument("--runs", type=int, default=3, help="--runs of each command")
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per call")
    args = parser.parse_args(argv)
    with (
        mock_server_process("--latency", str(args.latency)) as base_url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        data = Path(tmp) / "shared"
        same = [run_args(base_url, data, args.runs) for _ in range(args.copies)]
        ended = run_together(same)
        sent = requests_so_far(base_url)
        needed = calls_needed(args.runs)
        command = f"aib run --runs {args.runs}"
        print(f"{args.copies} × '{command}' on one data dir, latency {args.latency} s")
        for i, (code, wall) in enumerate(ended, 1):
            print(f"  command {i}: exit {code}, {wall:.1f} s")
        print(f"  requests sent {sent}, needed {needed} (one command alone)")

        before = requests_so_far(base_url)
        fresh = [run_args(base_url, data, 1, "--fresh") for _ in range(args.copies)]
        ended = run_together(fresh)
        numbers = fresh_run_numbers(data)[args.runs :]
        print(f"{args.copies} × 'aib run --fresh --runs 1' together")
        for i, (code, wall) in enumerate(ended, 1):
            print(f"  command {i}: exit {code}, {wall:.1f} s")
        print(
            f"  new run numbers {numbers} (distinct: {len(set(numbers)) == args.copies}); "
            f"requests sent {requests_so_far(base_url) - before}, "
            f"needed {args.copies * calls_needed(1)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
