"""The whole `aib run` against its critical path, its CPU per call and its stored re-run.

Runs `aib run` as a user does (a new process, default settings, 2 s ± 10 % per call on the
scripted loopback server, closing leaderboard included) `--repeats` times on fresh stores, each
followed by the same command with everything stored, and prints per repeat and as medians:

- the whole command's wall time ÷ the critical path (the longest chain of dependent calls ×
  the latency): the issue's goal is ≤ 1.15 at 20 models × 5 runs;
- its CPU per call: the process's user + system CPU ÷ the calls the server counted;
- its CPU per call beyond the stored re-run: (CPU − the re-run's CPU) ÷ calls, the part that
  grows with the calls (start-up, survey and leaderboard are in both and cancel out);
- the stored re-run's wall time (goal ≤ 1 s) and that it sent no request.

CPU time is steady on a shared machine where wall time is not: with `--max-cpu-ms-per-call`
the benchmark fails (exit 1) when the median CPU per call beyond the re-run is over that
limit, which is how CI's slow step notices a regression. The load average is printed with the
figures.

    python benchmarks/critical_path.py                      # 20 × 5, three repeats
    python benchmarks/critical_path.py --models 4 --runs 2 --latency 0.5 --max-cpu-ms-per-call 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # throughput: the shared harness

from throughput import (
    SUITE_ID,
    BenchConfig,
    CommandMeasurement,
    add_size_arguments,
    check_command,
    expected_calls,
    load_average,
    machine_description,
    measure_command,
    mock_servers,
)

from independence_bench.suites.suite import load_suite
from independence_bench.text.counts import count_of


def cpu_ms_beyond_rerun(m: CommandMeasurement) -> float:
    """CPU milliseconds per call beyond what the stored re-run of the same command costs."""
    return 1000 * (m.cpu_s - m.rerun_cpu_s) / m.calls if m.calls else 0.0


def format_repeat(index: int, m: CommandMeasurement) -> str:
    return (
        f"  repeat {index}: wall {m.wall_s:.2f} s = {m.ratio:.3f} × critical path, "
        f"CPU {m.cpu_ms_per_call:.3f} ms per call ({m.cpu_s:.2f} s), "
        f"{cpu_ms_beyond_rerun(m):.3f} ms beyond the re-run; "
        f"stored re-run {m.rerun_wall_s:.2f} s wall, {m.rerun_cpu_s:.2f} s CPU, "
        f"{m.rerun_requests} requests"
    )


def format_medians(measured: Sequence[CommandMeasurement]) -> str:
    def median(values: Sequence[float]) -> float:
        return statistics.median(values)

    first = measured[0]
    return "\n".join(
        [
            f"medians of {count_of(len(measured), 'repeat')} "
            f"({first.calls:,} calls, critical path {first.critical_path_s:.2f} s):",
            f"  whole command / critical path  {median([m.ratio for m in measured]):.3f}"
            f"   (goal ≤ 1.15)",
            f"  CPU per call                   {median([m.cpu_ms_per_call for m in measured]):.3f}"
            " ms   (the whole process)",
            f"  CPU per call beyond re-run     "
            f"{median([cpu_ms_beyond_rerun(m) for m in measured]):.3f} ms",
            f"  stored re-run                  {median([m.rerun_wall_s for m in measured]):.2f} s"
            f"   (goal ≤ 1 s; {median([m.rerun_cpu_s for m in measured]):.2f} s CPU)",
        ]
    )


def cpu_verdict(measured: Sequence[CommandMeasurement], limit: float) -> tuple[str, str | None]:
    """The line CI prints (the median CPU per call beyond the re-run against `limit`), and
    the problem when it is over."""
    beyond = statistics.median([cpu_ms_beyond_rerun(m) for m in measured])
    over = beyond > limit
    line = f"CPU per call beyond the re-run: {beyond:.3f} ms, limit {limit:g} ms: " + (
        "REGRESSED" if over else "ok"
    )
    problem = (
        f"CPU per call {beyond:.3f} ms is over the limit of {limit:g} ms "
        "(benchmarks/critical_path.py; docs/performance.md says what it measures)"
    )
    return line, problem if over else None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_size_arguments(parser)
    parser.add_argument("--repeats", type=int, default=3, help="runs measured (median shown)")
    parser.add_argument(
        "--max-cpu-ms-per-call",
        type=float,
        default=None,
        help="fail when the median CPU per call beyond the re-run is over this",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be 1 or more")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite(SUITE_ID)
    config = BenchConfig(
        models=args.models, runs=args.runs, latency_s=args.latency, jitter=args.jitter
    )
    print(f"machine: {machine_description()}; load average {load_average()}")
    print(
        f"aib run, {count_of(args.models, 'model')} × {count_of(args.runs, 'run')}, "
        f"{count_of(expected_calls(suite, args.models, args.runs), 'call')}, "
        f"latency {args.latency:g} s ± {100 * args.jitter:g} %, default concurrency",
        flush=True,
    )
    measured: list[CommandMeasurement] = []
    problems: list[str] = []
    with mock_servers(args.latency, args.jitter) as urls:
        for index in range(1, args.repeats + 1):
            m = measure_command(config, urls)
            measured.append(m)
            problems += check_command(m, suite, config)
            print(format_repeat(index, m), flush=True)
    print(format_medians(measured))
    print(f"load average at the end: {load_average()}")
    if args.max_cpu_ms_per_call is not None:
        line, problem = cpu_verdict(measured, args.max_cpu_ms_per_call)
        print(line)
        problems += [problem] if problem else []
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
