"""Bootstrap speed: the closing leaderboard's bootstrap at 150 models × 5 runs × 15 items.

Builds synthetic `ItemMetrics` of the `v2` suite's shape (15 conversations per run) for M
models × R runs and times `bootstrap.bootstrap_models` — every model's index and metric
intervals and rank interval from one shared bootstrap — at 10,000 resamples, in CPU and wall
seconds. `report_speed.py` times the whole `aib report` on a store of that size.

    python benchmarks/bootstrap_speed.py                 # M=150, R=5, 10,000 resamples
    python benchmarks/bootstrap_speed.py --models 20
"""

from __future__ import annotations

import argparse
import random
import time

from independence_bench.scoring.scoring import ItemMetrics
from independence_bench.stats.bootstrap import bootstrap_models
from independence_bench.stats.core import DEFAULT_RESAMPLES, Resampling
from independence_bench.suites.suite import load_suite
from independence_bench.text.counts import count_of


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
    result = bootstrap_models(items, "v2", resampling=Resampling(resamples, 0))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert all(r.index is not None and r.index.low is not None for r in result.values())
    return cpu, wall, len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    args = parser.parse_args()
    if args.models < 1 or args.runs < 2 or args.resamples < 1:
        # A model's interval resamples its runs: with one run there is none to time.
        parser.error("--models and --resamples must be at least 1 and --runs at least 2")
    cpu, wall, n_items = time_bootstrap(args.models, args.runs, args.resamples)
    print(
        f"leaderboard bootstrap: {count_of(args.models, 'model')} × "
        f"{count_of(args.runs, 'run')} × 15 items ({n_items:,} items), {args.resamples:,} resamples"
    )
    print(f"  CPU {cpu:6.2f} s   wall {wall:6.2f} s")


if __name__ == "__main__":
    main()
