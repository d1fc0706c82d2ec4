"""Coverage of the bootstrap's index and rank intervals over simulated benchmarks.

Runs `tests/support/bootstrap_simulation.simulate` (benchmarks of the `v2` suite's shape with known
true indexes; see that module for the model of scenarios, runs and truth) with more simulated
benchmarks and resamples than the test does, and prints how often the 95% index and rank
intervals cover the true values, how wide they are, and the same for rank intervals from
per-model scenario draws (each model drawing its own scenarios) instead of shared ones.

    python benchmarks/bootstrap_coverage.py        # 1,000 benchmarks × 2,000 resamples
    python benchmarks/bootstrap_coverage.py --benchmarks 200 --resamples 400
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from independence_bench.text.counts import count_of
from support.bootstrap_simulation import Coverage, simulate, width


def _line(label: str, hits: list[bool], widths: list[int] | list[float], unit: str) -> str:
    share = Coverage.share(hits)
    error = 2 * math.sqrt(share * (1 - share) / len(hits))
    return (
        f"  {label:<32} coverage {share:6.1%} (± {error:.1%}, {len(hits):,} intervals)   "
        f"mean width {width(widths):5.2f} {unit}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    tally = simulate(
        benchmarks=args.benchmarks,
        models=args.models,
        runs=args.runs,
        resamples=args.resamples,
        seed=args.seed,
        per_model=True,
    )
    print(
        f"{args.benchmarks:,} simulated benchmarks × {count_of(args.models, 'model')} × "
        f"{count_of(args.runs, 'run')} (v2 shape), {args.resamples:,} resamples each, "
        f"seed {args.seed}"
    )
    print(_line("index interval", tally.index_hits, tally.index_widths, "index points"))
    print(_line("rank interval, shared scenarios", tally.rank_hits, tally.rank_widths, "places"))
    print(
        _line(
            "rank interval, per-model draws",
            tally.per_model_rank_hits,
            tally.per_model_rank_widths,
            "places",
        )
    )
    print(f"  ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
