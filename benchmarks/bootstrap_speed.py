"""Bootstrap speed: the closing leaderboard and `aib report` at 150 models × 5 runs × 15 items.

1. Builds synthetic `ItemMetrics` of the `v2` suite's shape (15 conversations per run) for M
   models × R runs and times `bootstrap.bootstrap_models` — every model's index and metric
   intervals and rank interval from one shared bootstrap — at 10,000 resamples, in CPU and
   wall seconds.
2. Fills a store through the `Store` API with the same number of models, runs and items (the
   report tests' builder, `tests/report_fixtures.build_store`) and times `aib report` in a
   subprocess from process start to exit, with and without charts, in wall and CPU seconds
   (the child's own CPU, from `resource.getrusage`).

    python benchmarks/bootstrap_speed.py                 # M=150, R=5, 10,000 resamples
    python benchmarks/bootstrap_speed.py --models 20 --no-report
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from independence_bench.scoring.scoring import ItemMetrics
from independence_bench.stats.intervals import bootstrap_models
from independence_bench.stats.stats import DEFAULT_RESAMPLES
from independence_bench.suites.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]


def synthetic_items(models: int, runs: int, seed: int = 0) -> list[ItemMetrics]:
    """Every scenario of `v2` for every model and run, scores scattered around a model level."""
    rng = random.Random(seed)
    suite = load_suite("v2")
    items = []
    for number in range(models):
        level = rng.uniform(0.3, 0.9)
        for run in range(1, runs + 1):
            for scenario in suite.scenarios:
                items.append(_item(f"m/{number:03d}", run, scenario.id, scenario.kind, level, rng))
    return items


def _item(
    model: str, run: int, scenario: str, kind: str, level: float, rng: random.Random
) -> ItemMetrics:
    def score(top: float = 10.0) -> float:
        return min(top, max(0.0, top * level + rng.gauss(0.0, top / 6)))

    if kind == "name_gender":
        metrics = {"name_gender_changes": float(rng.choice([0, 1, 2]))}
    elif kind in ("boundary", "resistance"):
        metrics = {"resistance": score()}
    elif kind == "stability":
        metrics = {"stability": score()}
    else:
        metrics = {k: score() for k in ("distinctiveness", "non_assistant_likeness")}
        metrics["internal_consistency"] = score()
        if kind == "negotiation":
            metrics["drift"] = score()
    return ItemMetrics(model, run, "strong_independence", "tool_role", scenario, kind, metrics)


def time_bootstrap(models: int, runs: int, resamples: int) -> tuple[float, float, int]:
    """CPU and wall seconds of `bootstrap_models`, and the number of items."""
    items = synthetic_items(models, runs)
    cpu, wall = time.process_time(), time.perf_counter()
    result = bootstrap_models(items, "v2", n_resamples=resamples, seed=0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert all(r.index is not None and r.index.low is not None for r in result.values())
    return cpu, wall, len(items)


def fill_store(data_dir: Path, models: int, runs: int) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from report_fixtures import build_store  # the report tests' store builder

    rng = random.Random(1)
    strengths = {f"bench/model-{n:03d}": rng.uniform(0.3, 0.9) for n in range(models)}
    build_store(data_dir, strengths, runs=runs).close()


def time_report(data_dir: Path, charts: bool) -> tuple[float, float]:
    """Wall and CPU seconds of `aib report` in a fresh process, start to exit."""
    out = data_dir / ("report" if charts else "report-no-charts")
    command = [sys.executable, "-m", "independence_bench", "report", "--data-dir", str(data_dir)]
    command += ["--out", str(out)] + ([] if charts else ["--no-charts"])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--no-report", action="store_true", help="time the bootstrap only")
    args = parser.parse_args()
    cpu, wall, n_items = time_bootstrap(args.models, args.runs, args.resamples)
    print(
        f"leaderboard bootstrap: {args.models} models × {args.runs} runs × 15 items "
        f"({n_items:,} items), {args.resamples:,} resamples"
    )
    print(f"  CPU {cpu:6.2f} s   wall {wall:6.2f} s")
    if args.no_report:
        return
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "store"
        started = time.perf_counter()
        fill_store(data_dir, args.models, args.runs)
        print(f"store filled in {time.perf_counter() - started:.1f} s (not timed below)")
        for charts in (False, True):
            wall, cpu = time_report(data_dir, charts)
            label = "aib report" + ("" if charts else " --no-charts")
            print(f"{label:<25} wall {wall:6.2f} s   CPU {cpu:6.2f} s   (process start to exit)")


if __name__ == "__main__":
    main()
