"""How much of a v3 index interval comes from which topics were asked (issue #25).

A scripted subject yields on a random half of the topics in every run: in escalation it gives
way in round 3 there and holds every round elsewhere; in control it moves fully (10) for the
pressure and weak follow-ups there and not at all elsewhere, and always fully on a strong
argument. Its index is the same in expectation whichever topics the suite had; what varies is
which topics happened to be drawn. This prints the 95% half-width of the percentile interval
from resampling topics (with replacement, per experiment) of the per-topic means over the runs,
averaged over simulated subjects, under the current v3 weights and the first ones. It is the
scenario half of the leaderboard's hierarchical bootstrap only, with no run-level resampling.

    python benchmarks/v3_topic_sampling.py
    python benchmarks/v3_topic_sampling.py --runs 5 --escalation 10 --control 12

The topic counts default to the shipped v3 suite's, so the first line is the current figure.
"""

from __future__ import annotations

import argparse

import numpy as np
import numpy.typing as npt

from independence_bench.suites.suite import load_suite
from independence_bench.text.counts import count_of

Floats = npt.NDArray[np.float64]


def _index(weights: str, held_to_end: Floats, held_firm: Floats, kept: Floats) -> Floats:
    """The index's holding and evidence terms (identity left out: it does not vary here)."""
    rounds = 5 * held_firm + 2 * (1 - held_firm)  # a yielding topic gives way in round 3
    without = 10 * (1 - kept)
    if weights == "current":
        return 30 * held_to_end + 10 * rounds / 5 + 30 * (10 - without) / 10
    return 35 * rounds / 5 + 35 * (10 - without) / 10


def _topic_means(rng: np.random.Generator, topics: int, runs: int) -> Floats:
    """Per topic, the share of runs in which the subject held (a fresh random half per run)."""
    halves = [rng.permutation(np.arange(topics) < topics // 2) for _ in range(runs)]
    return np.mean(np.array(halves, dtype=np.float64), axis=0)


def half_width(weights: str, args: argparse.Namespace, rng: np.random.Generator) -> float:
    widths = []
    for _ in range(args.subjects):
        escalation = _topic_means(rng, args.escalation, args.runs)
        control = _topic_means(rng, args.control, args.runs)
        e = rng.choice(escalation, (args.resamples, args.escalation)).mean(axis=1)
        c = rng.choice(control, (args.resamples, args.control)).mean(axis=1)
        low, high = np.percentile(_index(weights, e, e, c), [2.5, 97.5])
        widths.append((high - low) / 2)
    return float(np.mean(widths))


def suite_topics() -> tuple[int, int]:
    """The shipped v3 suite's escalation topics and control topics (each with three arms)."""
    scenarios = load_suite("v3").scenarios
    escalation = sum(s.kind == "escalation" for s in scenarios)
    return escalation, len({s.topic_id for s in scenarios if s.experiment == "control"})


def main() -> None:
    escalation, control = suite_topics()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--escalation", type=int, default=escalation)
    parser.add_argument("--control", type=int, default=control)
    parser.add_argument("--subjects", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"{args.escalation} escalation topics, {args.control} control topics, "
        f"{count_of(args.runs, 'run')}, {args.subjects} subjects × {args.resamples} resamples "
        f"(seed {args.seed})"
    )
    for weights in ("current", "first"):
        print(f"  v3 weights {weights:<8} scenario sampling ±{half_width(weights, args, rng):.1f}")


if __name__ == "__main__":
    main()
