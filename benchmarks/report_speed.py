"""`aib report` and `aib view` at 150 models × 5 runs × 15 items: time, phases and viewer size.

1. Fills a store through the `Store` API (the report tests' builder,
   `tests/support/report_fixtures.build_store`: deterministic, replies short and the same in every
   run), or reuses the one `--store` names.
2. Times `aib report` and `aib report --no-charts` in a fresh process, start to exit, in wall
   and CPU seconds (the child's own CPU, from `resource.getrusage`).
3. Runs `write_report` once more in a fresh process with a timer around each phase — imports,
   store load, leaderboard bootstrap, item difficulty, the other report sections, per-model
   details, LEADERBOARD.md, results.json/csv, the wait for the chart process — and prints
   them, with the CPU of the process that draws the charts (beside the others).
4. Times `aib view` the same way and prints the size of what it wrote, data files included.

    python benchmarks/report_speed.py                       # M=150, R=5
    python benchmarks/report_speed.py --models 20 --store /tmp/aib-20   # keep the store
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from child_timing import timed_run

from independence_bench.text.counts import count_of

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

PHASES: dict[str, list[tuple[str, str]]] = {
    "store load": [("independence_bench.gathering.suite_report", "load_results")],
    "leaderboard bootstrap": [("independence_bench.gathering.suite_report", "rank_models")],
    "item difficulty": [("independence_bench.gathering.suite_report", "item_difficulty")],
    "other sections": [("independence_bench.gathering.suite_report", "build_extras")],
    "waiting for the charts": [("independence_bench.reports.charts", "ChartDrawing.paths")],
    "LEADERBOARD.md": [("independence_bench.workflows.report", "render_leaderboard")],
    "results.json/csv": [
        ("independence_bench.workflows.report", "results_document"),
        ("independence_bench.workflows.report", "results_csv"),
    ],
}
"""Phase name → the functions whose time it sums, patched where `write_report` calls them."""


def fill_store(data_dir: Path, models: int, runs: int) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from support.report_fixtures import build_store  # the report tests' store builder

    rng = random.Random(1)
    strengths = {f"bench/model-{n:03d}": rng.uniform(0.3, 0.9) for n in range(models)}
    build_store(data_dir, strengths, runs=runs).close()


def run_timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of `python -m independence_bench ARGS`, start to exit."""
    wall, cpu, _ = timed_run([sys.executable, "-m", "independence_bench", *args], ENV)
    return wall, cpu


def folder_size(folder: Path) -> tuple[int, int, int]:
    """Total bytes under `folder`, the number of files and the largest file's bytes."""
    sizes = [path.stat().st_size for path in folder.rglob("*") if path.is_file()]
    return sum(sizes), len(sizes), max(sizes, default=0)


@contextmanager
def _timer(spent: dict[str, list[float]], phase: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        spent[phase][0] += time.perf_counter() - wall
        spent[phase][1] += time.process_time() - cpu


def _wrap(function: Callable[..., Any], spent: dict[str, list[float]], phase: str) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        with _timer(spent, phase):
            return function(*args, **kwargs)

    return timed


def measure_phases(data_dir: Path, out: Path) -> dict[str, list[float]]:
    """In this (fresh) process: `write_report` with every phase timed; [wall, CPU] seconds."""
    import importlib

    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    with _timer(spent, "imports"):
        from independence_bench.workflows.report import ReportOptions, write_report
    for phase, targets in PHASES.items():
        for module_name, path in targets:
            owner: Any = importlib.import_module(module_name)
            *outer, name = path.split(".")
            for part in outer:
                owner = getattr(owner, part)
            setattr(owner, name, _wrap(getattr(owner, name), spent, phase))
    with _timer(spent, "whole write_report"):
        write_report(ReportOptions(data_dir=data_dir, out=out))
    drawn = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent["chart process (CPU)"] = [0.0, drawn.ru_utime + drawn.ru_stime]
    return dict(spent)


def print_phases(data_dir: Path, out: Path) -> None:
    command = [sys.executable, __file__, "--phases-of", str(data_dir), "--out", str(out)]
    found = subprocess.run(command, check=True, env=ENV, capture_output=True, text=True)
    spent = json.loads(found.stdout)
    whole = spent.pop("whole write_report")
    unlisted = ("imports", "chart process (CPU)")
    listed = sum(wall for name, (wall, _) in spent.items() if name not in unlisted)
    print("aib report phases (one fresh process; wall / CPU seconds):")
    for name, (wall, cpu) in spent.items():
        print(f"  {name:<24} {wall:6.2f} s  {cpu:6.2f} s")
    print(f"  {'per-model details, rest':<24} {whole[0] - listed:6.2f} s")
    print(f"  {'write_report in all':<24} {whole[0]:6.2f} s  {whole[1]:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--store", type=Path, help="build the store here, or reuse it")
    parser.add_argument("--phases-of", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases_of:
        print(json.dumps(measure_phases(args.phases_of, args.out)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.store or Path(tmp) / "store"
        if not (data_dir / "aib.sqlite3").exists():
            started = time.perf_counter()
            fill_store(data_dir, args.models, args.runs)
            print(f"store filled in {time.perf_counter() - started:.1f} s (not timed below)")
        print(
            f"store: {count_of(args.models, 'model')} × {count_of(args.runs, 'run')} × 15 items, "
            f"{data_dir}"
        )
        out = Path(tmp)
        for label, extra in (("aib report --no-charts", ["--no-charts"]), ("aib report", [])):
            report = ["report", "--data-dir", str(data_dir), "--out", str(out / "report")]
            wall, cpu = run_timed(report + extra)
            print(f"{label:<25} wall {wall:6.2f} s   CPU {cpu:6.2f} s   (process start to exit)")
        print_phases(data_dir, out / "report-phases")
        viewer = out / "viewer"
        wall, cpu = run_timed(["view", "--data-dir", str(data_dir), "--out", str(viewer)])
        print(f"{'aib view':<25} wall {wall:6.2f} s   CPU {cpu:6.2f} s   (process start to exit)")
        total, files, largest = folder_size(viewer)
        index = (viewer / "data" / "index.js").stat().st_size
        print(
            f"viewer size: {total / 1e6:.1f} MB in {count_of(files, 'file')} (largest file "
            f"{largest / 1e6:.2f} MB, data/index.js {index / 1e6:.2f} MB)"
        )


if __name__ == "__main__":
    main()
