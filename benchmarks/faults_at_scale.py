"""Faults at scale: a big run under 20% faults, killed with SIGKILL and resumed, loses nothing.

Runs the `v2` suite for 20 model configurations × 5 runs (a `models.yaml` cycling the scripted
firm, caving and plain subjects under distinct labels, judged by the scripted judge) with the
`aib` command line, against the scripted server in its own process with a small latency:

1. fault-free, uninterrupted — the reference store and wall time;
2. with 20% of calls faulted (every fault kind the server has), SIGKILLed once a share of the
   calls has been made, then the same command again until it finishes.

It prints the items lost (neither done nor failed with a reason: must be 0), the calls repeated
after the resume (calls whose completion was already stored when a process started: must be
0), the calls lost in flight at the kill, whether the scores equal the fault-free run's, and
both wall times. Calls are matched between server and store by `request_fingerprint`.

    python benchmarks/faults_at_scale.py
    python benchmarks/faults_at_scale.py --models 6 --runs 2 --kill-at 0.3   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from independence_bench.text.counts import count_of
from support.mock_behaviours import FAULT_KINDS, request_fingerprint
from support.mock_process import mock_server_process

SUBJECTS = ("scripted-firm", "scripted-caving", "scripted-plain")
JUDGE = "scripted-judge"


@dataclass(frozen=True)
class Segment:
    """One `aib run` process: how long it ran, how it ended, what the server answered."""

    wall_s: float
    exit_code: int
    answered: Counter[str]
    stored_before: Counter[str]


def _get(base_url: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base_url.removesuffix('/v1')}{path}", timeout=10) as reply:
        return json.loads(reply.read())


def write_models_file(path: Path, base_url: str, count: int) -> None:
    lines = ["models:"]
    for index in range(count):
        subject = SUBJECTS[index % len(SUBJECTS)]
        label = f"{subject.removeprefix('scripted-')}-{index + 1:02d}"
        lines += [f"  - id: {subject}", f"    label: {label}", f"    base_url: {base_url}"]
    lines += ["judge:", f"  id: {JUDGE}", f"  base_url: {base_url}", "  temperature: 0"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def stored_fingerprints(data: Path) -> Counter[str]:
    if not (data / "aib.sqlite3").exists():
        return Counter()
    with Store(data, read_only=True) as store:
        requests = [store.completion_request(key) for key in store.completion_keys()]
    return Counter(request_fingerprint(r) for r in requests if r is not None)


def run_segment(
    base_url: str, models_file: Path, data: Path, args: argparse.Namespace, kill_at: int | None
) -> Segment:
    """One `aib run`; SIGKILLed once the server has seen `kill_at` more chat requests."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [
        sys.executable,
        "-m",
        "independence_bench",
        "run",
        "--config",
        str(models_file),
        "--runs",
        str(args.runs),
        "--concurrency",
        str(args.concurrency),
        "--timeout",
        str(args.timeout),
        "--data-dir",
        str(data),
    ]
    stored_before = stored_fingerprints(data)
    answered_before = Counter(_get(base_url, "/_answered")["answered"])
    start_requests = _get(base_url, "/_stats")["requests"]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_at is not None:
        while _get(base_url, "/_stats")["requests"] - start_requests < kill_at:
            if process.poll() is not None:
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    _, err = process.communicate()
    wall = time.perf_counter() - started
    if process.returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"aib run failed ({process.returncode}): {err.decode()[-2000:]}")
    time.sleep(args.latency * 4 + args.timeout)  # let calls in flight at a kill settle
    answered = Counter(_get(base_url, "/_answered")["answered"]) - answered_before
    return Segment(wall, process.returncode, answered, stored_before)


def item_outcomes(data: Path) -> Counter[str]:
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        rows = db.execute("SELECT status, error FROM items").fetchall()
    return Counter(
        "done" if status == "done" else "failed" if error else "lost" for status, error in rows
    )


def scores(data: Path) -> dict[tuple[str, str], str | None]:
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        rows = db.execute("SELECT item_id, judge_model, scores_json FROM judgments").fetchall()
    return {(item, judge): text for item, judge, text in rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per call")
    parser.add_argument("--fault-rate", type=float, default=0.2)
    parser.add_argument("--kill-at", type=float, default=0.4, help="share of clean calls")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=1.0, help="client timeout, s")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    suite = load_suite("v2")
    items = args.models * args.runs * len(suite.scenarios)
    clean_calls = args.models * args.runs * sum(len(s.turns) + 1 for s in suite.scenarios)
    print(
        f"faults at scale: {count_of(args.models, 'model')} × {count_of(args.runs, 'run')} of "
        f"suite v2 = {count_of(items, 'conversation')}, {count_of(clean_calls, 'call')} when "
        f"nothing fails; latency {args.latency}s, "
        f"concurrency {args.concurrency}, client timeout {args.timeout}s",
        flush=True,
    )
    server_args = ["--latency", str(args.latency), "--jitter", "0.5", "--seed", str(args.seed)]
    faulty_args = [
        *server_args,
        "--fault-rate",
        str(args.fault_rate),
        "--fault-kinds",
        ",".join(FAULT_KINDS),
        "--timeout-sleep",
        str(args.timeout * 3),
    ]
    with tempfile.TemporaryDirectory(prefix="aib-faults-") as tmp:
        root = Path(tmp)
        with mock_server_process(*server_args) as base_url:
            write_models_file(root / "clean.yaml", base_url, args.models)
            clean = run_segment(base_url, root / "clean.yaml", root / "clean", args, None)
            clean_requests = _get(base_url, "/_stats")["requests"]
        with mock_server_process(*faulty_args) as base_url:
            write_models_file(root / "faulty.yaml", base_url, args.models)
            kill_at = int(clean_calls * args.kill_at)
            killed = run_segment(base_url, root / "faulty.yaml", root / "faulty", args, kill_at)
            at_kill = stored_fingerprints(root / "faulty")
            resumed = run_segment(base_url, root / "faulty.yaml", root / "faulty", args, None)
            faulty_requests = _get(base_url, "/_stats")["requests"]
        final = stored_fingerprints(root / "faulty")
        # A call is repeated when a process was answered for one whose completion was stored
        # before that process started: whatever it was answered beyond what it newly stored.
        repeated = sum(
            sum((seg.answered - (final - seg.stored_before)).values()) for seg in (killed, resumed)
        )
        lost_in_flight = sum((killed.answered - (at_kill - killed.stored_before)).values())
        clean_outcomes = item_outcomes(root / "clean")
        faulty_outcomes = item_outcomes(root / "faulty")
        missing = items - sum(faulty_outcomes.values())
        same_scores = scores(root / "clean") == scores(root / "faulty")

    print(f"{'':<30} {'wall time':>10} {'requests':>9} {'done':>6} {'failed':>7} {'lost':>5}")
    print(
        f"{'fault-free, uninterrupted':<30} {clean.wall_s:>9.1f}s {clean_requests:>9} "
        f"{clean_outcomes['done']:>6} {clean_outcomes['failed']:>7} "
        f"{clean_outcomes['lost'] + items - sum(clean_outcomes.values()):>5}"
    )
    print(
        f"{f'{args.fault_rate:.0%} faults, killed + resumed':<30} "
        f"{killed.wall_s + resumed.wall_s:>9.1f}s {faulty_requests:>9} "
        f"{faulty_outcomes['done']:>6} {faulty_outcomes['failed']:>7} "
        f"{faulty_outcomes['lost'] + missing:>5}"
    )
    print(
        f"killed by SIGKILL after {kill_at} requests ({killed.wall_s:.1f}s, exit "
        f"{killed.exit_code}) with {count_of(sum(at_kill.values()), 'call')} stored; resumed in "
        f"{resumed.wall_s:.1f}s"
    )
    print(f"items lost: {faulty_outcomes['lost'] + missing} (must be 0)")
    print(f"calls repeated after resume: {repeated} (must be 0)")
    print(f"calls lost in flight at the kill: {lost_in_flight} (answered while the process died)")
    print(f"scores equal to the fault-free run: {'yes' if same_scores else 'NO'}")
    print(f"wall time vs fault-free: {(killed.wall_s + resumed.wall_s) / clean.wall_s:.2f}×")
    ok = faulty_outcomes["lost"] + missing == 0 and repeated == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
