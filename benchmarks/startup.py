"""How long `aib` takes to start: `--help`, `--version`, and `leaderboard` on an empty store.

Each command runs N times as its own process (`python -m independence_bench`, what the `aib`
script runs); the figures are the median wall time of the whole process, its median CPU time
(user + system, less sensitive to other load on the machine than wall time), and the bare
interpreter's start for scale, against the 0.3 s target of issue 13. One more run with
`python -X importtime` shows where import time goes: the modules with the most time of their
own. The load average is printed first because wall times on a busy machine run long.

    PYTHONPATH=src python benchmarks/startup.py [--runs 15] [--top 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from child_timing import timed_run

from independence_bench.store.store import Store
from independence_bench.text.counts import count_of

TARGET_S = 0.3
HEAVY = {"numpy", "matplotlib", "aiohttp", "rich", "pydantic", "yaml", "llama_cpp"}


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `argv` as a child process (`aib leaderboard` on an
    empty store exits 2, after the start-up this measures)."""
    wall, cpu, _ = timed_run(argv, check=False)
    return wall, cpu


def _import_times(args: list[str]) -> list[tuple[int, int, str]]:
    """(own µs, cumulative µs, module) for every module one run imports."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "independence_bench", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(own), int(cumulative), name.strip()))
    return rows


def measure(label: str, args: list[str], runs: int, top: int) -> None:
    argv = [sys.executable, "-m", "independence_bench", *args]
    walls, cpus = zip(*(_timed(argv) for _ in range(runs)), strict=True)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    verdict = "within" if wall <= TARGET_S else "OVER"
    print(f"\n{label}")
    print(
        f"  wall median {wall:.3f} s (min {min(walls):.3f}, max {max(walls):.3f}), "
        f"CPU median {cpu:.3f} s — {verdict} the {TARGET_S:.1f} s target"
    )
    rows = _import_times(args)
    heavy = sorted({name.split(".")[0] for _, _, name in rows} & HEAVY)
    print(
        f"  {len(rows)} modules imported, {sum(own for own, _, _ in rows) / 1000:.1f} ms of "
        f"import time; heavy libraries loaded: {', '.join(heavy) or 'none'}"
    )
    for own, cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"    {own / 1000:6.1f} ms own {cumulative / 1000:7.1f} ms cumulative  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="Runs per command (median).")
    parser.add_argument("--top", type=int, default=8, help="Import-time entries to show.")
    options = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    runs = count_of(options.runs, "run")
    print(f"load average {load} on {os.cpu_count()} CPUs; {runs} per command")
    bare = [_timed([sys.executable, "-c", "pass"]) for _ in range(options.runs)]
    print(
        f"bare interpreter: wall median {statistics.median(w for w, _ in bare):.3f} s, "
        f"CPU median {statistics.median(c for _, c in bare):.3f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        Store(empty).close()
        measure("aib --help", ["--help"], options.runs, options.top)
        measure("aib --version", ["--version"], options.runs, options.top)
        measure(
            "aib leaderboard --data-dir <empty store>",
            ["leaderboard", "--data-dir", str(empty)],
            options.runs,
            options.top,
        )


if __name__ == "__main__":
    main()
