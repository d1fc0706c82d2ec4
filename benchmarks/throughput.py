"""Throughput benchmark: a run's wall time against its critical path, CPU per call and memory.

Starts the scripted OpenAI-compatible server (`support.mock_server`) in its own
process with a fixed per-call latency, runs the `v2` suite for M models × R runs with the scripted
judge through the library API, and prints total calls, wall time, the critical-path lower bound
(the longest chain of calls that must happen one after another × latency), their ratio, calls per
second, the harness's own CPU time per call and its peak memory. Each measured run happens in a
fresh child process so its CPU time and peak RSS are its own; the server's CPU is never counted.

Then it times the whole command as a user runs it: `python -m independence_bench run` in a new
process with the default settings (no `--concurrency`: adaptive), from process start to exit,
closing leaderboard included, and the same command again once everything is stored (the cached
re-run, which must send no request at all). The load average is printed with the figures: on a
shared machine they move with it.

It also runs a small configuration sequentially (concurrency 1) and concurrently to show the
measured speedup, and extrapolates the sequential wall time to the full size (labelled as such).
With `--prefill N` the full run is repeated on a store already holding N unrelated completions,
to show that cache lookups do not slow down as the store grows.

    python benchmarks/throughput.py                       # M=20, R=5, 2 s ± 10 %, adaptive
    python benchmarks/throughput.py --models 2 --runs 1 --latency 0.2 --no-sequential

`run_measurement` and `BenchConfig` are importable, so a test can run a tiny configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import multiprocessing
import os
import platform
import resource
import sqlite3
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from child_timing import timed_run, without_api_keys

from independence_bench.clients.protocol import Completion
from independence_bench.gathering.leaderboard import load_leaderboard
from independence_bench.store.store import Store
from independence_bench.suites.suite import Suite, load_suite
from independence_bench.text.counts import count_of
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_benchmark_async
from support.mock_process import mock_server_process

SUITE_ID = "v2"
SUBJECTS = ("scripted-firm", "scripted-caving")
JUDGE = "scripted-judge"


@dataclass(frozen=True)
class BenchConfig:
    """One measured run: its size, the endpoints' latency and the harness's concurrency."""

    models: int = 20
    runs: int = 5
    latency_s: float = 2.0
    jitter: float = 0.1
    concurrency: int | None = None
    """`--concurrency`; None: the default, adaptive."""
    prefill: int = 0
    endpoints: int = 1
    """Mock servers the models' requests are spread across (`base_urls`); the judge uses one."""


@dataclass(frozen=True)
class Measurement:
    """What one run cost: its calls as the server counted them, time, CPU and memory."""

    config: BenchConfig
    calls: int
    server_calls: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    items: int
    failures: int
    critical_path_s: float
    leaderboard_s: float
    """Wall time of the leaderboard (bootstrap intervals) the run ends with, timed again alone."""
    leaderboard_cpu_s: float
    stored_completions: int
    """Completions in the store after the run, prefilled ones included."""
    lookup_hit_us: float
    """CPU microseconds per cache lookup of a completion the run stored."""
    lookup_miss_us: float
    """CPU microseconds per cache lookup of a key the store does not hold."""

    @property
    def ratio(self) -> float:
        return self.wall_s / self.critical_path_s if self.critical_path_s else float("inf")

    @property
    def calls_wall_s(self) -> float:
        """The run's wall time less its closing leaderboard: the calls and their bookkeeping."""
        return self.wall_s - self.leaderboard_s

    @property
    def calls_ratio(self) -> float:
        return self.calls_wall_s / self.critical_path_s if self.critical_path_s else float("inf")

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls if self.calls else 0.0

    @property
    def calls_cpu_ms_per_call(self) -> float:
        cpu = self.cpu_s - self.leaderboard_cpu_s
        return 1000 * cpu / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class CommandMeasurement:
    """The whole `aib run` as a process, start to exit, and its cached re-run."""

    calls: int
    """Chat requests the server counted during the first run."""
    wall_s: float
    cpu_s: float
    rerun_wall_s: float
    rerun_cpu_s: float
    rerun_requests: int
    """Requests of any kind the server saw during the re-run (`GET /models` included)."""
    same_leaderboard: bool
    critical_path_s: float

    @property
    def ratio(self) -> float:
        return self.wall_s / self.critical_path_s if self.critical_path_s else float("inf")

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls if self.calls else 0.0


def critical_chain(suite: Suite) -> int:
    """The longest chain of dependent calls: a scenario's turns in order, then its judge call."""
    return max(len(scenario.turns) + 1 for scenario in suite.scenarios)


def expected_calls(suite: Suite, models: int, runs: int) -> int:
    """Calls a fresh run makes: every turn of every item plus one judge call per item."""
    per_run = sum(len(s.turns) + 1 for s in suite.scenarios)
    return per_run * len(suite.variants) * len(suite.delivery_modes) * models * runs


@contextmanager
def mock_servers(latency_s: float, jitter: float, count: int = 1) -> Iterator[list[str]]:
    """`count` scripted servers, each in its own process; yields their base URLs."""
    args = ("--latency", str(latency_s), "--jitter", str(jitter))
    with ExitStack() as stack:
        yield [stack.enter_context(mock_server_process(*args)) for _ in range(count)]


def server_request_count(base_url: str) -> int:
    """Chat requests the server at `base_url` has answered (its `/_stats`)."""
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/_stats", timeout=10) as response:
        return int(json.load(response)["requests"])


def server_models_listings(base_url: str) -> int:
    """`GET /models` requests the server at `base_url` has answered (its `/_stats`)."""
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/_stats", timeout=10) as response:
        return int(json.load(response).get("model_lists", 0))


def write_models_file(path: Path, models: int, base_urls: Sequence[str]) -> None:
    """`models` distinct model configurations cycling the firm and caving subjects.

    Each gets its own seed: the seed is part of every request's cache key, so no two models
    share a stored answer and every call really goes to the server.
    """
    entries = []
    for index in range(models):
        entry: dict[str, object] = {
            "id": SUBJECTS[index % len(SUBJECTS)],
            "label": f"bench-{index:03d}-{SUBJECTS[index % len(SUBJECTS)]}",
            "seed": index,
        }
        if len(base_urls) > 1:
            entry["base_urls"] = list(base_urls)
        entries.append(entry)
    path.write_text(json.dumps({"models": entries}, indent=2), encoding="utf-8")


def prefill_store(data_dir: Path, count: int) -> None:
    """Put `count` unrelated completions into the store, as a long-used store would hold.

    Keys are sha256 digests like real ones (random order in the index), requests about 1 kB.
    """
    if count <= 0:
        return
    system = "You are a helpful assistant. " * 30
    with Store(data_dir) as store, store.transaction():
        for index in range(count):
            question = f"Earlier question number {index}: what do you prefer, and why?"
            request = {
                "model": "prefill",
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": question},
                ],
            }
            completion = Completion(content=f"An earlier answer, number {index}.", latency_s=1.0)
            key = hashlib.sha256(f"prefill-{index}".encode()).hexdigest()
            store.put_completion(key, "prefill", request, completion)


def time_leaderboard(data_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of the leaderboard a run ends with, computed again on its store."""
    with Store(data_dir) as store:
        cpu, wall = time.process_time(), time.perf_counter()
        load_leaderboard(store, suite_id=SUITE_ID, judge=JUDGE)
        return time.perf_counter() - wall, time.process_time() - cpu


def time_lookups(data_dir: Path) -> tuple[int, float, float]:
    """Completions stored, and CPU µs per `get_completion` of a stored key and of a missing one.

    The run's own completions are looked up again (each once), then as many absent keys.
    """
    with Store(data_dir) as store:
        with closing(sqlite3.connect(store.path)) as db:
            total = db.execute("SELECT count(*) FROM completions").fetchone()[0]
            rows = db.execute("SELECT key FROM completions WHERE model_id != 'prefill'")
            keys = [row[0] for row in rows]
        missing = [hashlib.sha256(f"absent-{i}".encode()).hexdigest() for i in range(len(keys))]
        start = time.process_time()
        for key in keys:
            store.get_completion(key)
        hit = time.process_time() - start
        start = time.process_time()
        for key in missing:
            store.get_completion(key)
        miss = time.process_time() - start
    per = 1e6 / max(1, len(keys))
    return total, hit * per, miss * per


def run_measurement(config: BenchConfig, base_urls: Sequence[str], work_dir: Path) -> Measurement:
    """Run the suite once against running servers and measure this process while it does.

    Call it in a fresh process for a clean peak-memory figure (`main` does).
    """
    suite = load_suite(SUITE_ID)
    data_dir = work_dir / "store"
    models_file = work_dir / "models.yaml"
    write_models_file(models_file, config.models, base_urls)
    prefill_store(data_dir, config.prefill)
    before = sum(server_request_count(url) for url in base_urls)
    options = RunOptions(
        config_path=models_file,
        judge=JUDGE,
        base_url=base_urls[0],
        suite_id=SUITE_ID,
        runs=config.runs,
        concurrency=config.concurrency,
        data_dir=data_dir,
        env={},
        show_progress=False,
    )
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    result = asyncio.run(run_benchmark_async(options))
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    server_calls = sum(server_request_count(url) for url in base_urls) - before
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    leaderboard_s, leaderboard_cpu_s = time_leaderboard(data_dir)
    stored, hit_us, miss_us = time_lookups(data_dir)
    summary = result.summary
    return Measurement(
        config=config,
        calls=summary.calls,
        server_calls=server_calls,
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_mb=peak_rss_mb,
        items=summary.items_done,
        failures=summary.items_failed + summary.judge_failed + summary.judge_unscored,
        critical_path_s=critical_chain(suite) * config.latency_s,
        leaderboard_s=leaderboard_s,
        leaderboard_cpu_s=leaderboard_cpu_s,
        stored_completions=stored,
        lookup_hit_us=hit_us,
        lookup_miss_us=miss_us,
    )


def _measure_in_child(config: BenchConfig, base_urls: Sequence[str]) -> Measurement:
    with tempfile.TemporaryDirectory(prefix="aib-bench-") as work:
        return run_measurement(config, base_urls, Path(work))


def measure(config: BenchConfig, base_urls: Sequence[str]) -> Measurement:
    """`run_measurement` in a fresh spawned process, so CPU and peak RSS are this run's alone."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as executor:
        return executor.submit(_measure_in_child, config, list(base_urls)).result()


def measure_command(config: BenchConfig, base_urls: Sequence[str]) -> CommandMeasurement:
    """`aib run` as a new process (default settings unless `config.concurrency` is set), then
    the same command again with everything stored."""
    suite = load_suite(SUITE_ID)
    with tempfile.TemporaryDirectory(prefix="aib-command-") as work:
        models_file = Path(work) / "models.yaml"
        write_models_file(models_file, config.models, base_urls)
        argv = [sys.executable, "-m", "independence_bench", "run", "--config", str(models_file)]
        argv += ["--judge", JUDGE, "--base-url", base_urls[0], "--suite", SUITE_ID]
        argv += ["--runs", str(config.runs), "--data-dir", str(Path(work) / "store")]
        if config.concurrency is not None:
            argv += ["--concurrency", str(config.concurrency)]

        def requests() -> tuple[int, int]:
            chats = sum(server_request_count(url) for url in base_urls)
            return chats, chats + sum(server_models_listings(url) for url in base_urls)

        chats, _ = requests()
        wall, cpu, first = timed_run(argv, without_api_keys())
        after_chats, after_all = requests()
        rerun_wall, rerun_cpu, again = timed_run(argv, without_api_keys())
        _, rerun_all = requests()
    return CommandMeasurement(
        calls=after_chats - chats,
        wall_s=wall,
        cpu_s=cpu,
        rerun_wall_s=rerun_wall,
        rerun_cpu_s=rerun_cpu,
        rerun_requests=rerun_all - after_all,
        same_leaderboard=first.split("\n", 1)[1:] == again.split("\n", 1)[1:],
        critical_path_s=critical_chain(suite) * config.latency_s,
    )


def format_command(m: CommandMeasurement) -> str:
    return "\n".join(
        [
            "whole command: aib run in a new process, start to exit, leaderboard included",
            f"  wall time            {m.wall_s:>10.2f} s   = {m.ratio:.2f} × critical path "
            f"({m.critical_path_s:.2f} s)",
            f"  CPU per call         {m.cpu_ms_per_call:>10.3f} ms   ({m.cpu_s:.2f} s for "
            f"{m.calls:,} calls, the whole process)",
            f"  cached re-run        {m.rerun_wall_s:>10.2f} s   wall, {m.rerun_cpu_s:.2f} s CPU, "
            f"{m.rerun_requests} requests to the server, same leaderboard: "
            f"{'yes' if m.same_leaderboard else 'NO'}",
        ]
    )


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (figures on a shared machine move with them)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_description() -> str:
    """CPU count and model, Python version: what a quoted figure was measured on."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, {sys.platform}"


def format_measurement(title: str, m: Measurement) -> str:
    c = m.config
    concurrency = "adaptive" if c.concurrency is None else c.concurrency
    lines = [
        f"{title}: {count_of(c.models, 'model')} × {count_of(c.runs, 'run')}, "
        f"concurrency {concurrency}, "
        f"latency {c.latency_s:g} s ± {100 * c.jitter:g} %, {count_of(c.endpoints, 'endpoint')}, "
        f"{c.prefill:,} completions prefilled",
        f"  total calls          {m.calls:>10,}   (server counted {m.server_calls:,}; "
        f"{m.items:,} conversations, {m.failures} failed/unscored)",
        f"  wall time            {m.wall_s:>10.2f} s   (the whole run, leaderboard included)",
        f"  critical path        {m.critical_path_s:>10.2f} s   (longest chain × latency)",
        f"  wall / critical path {m.ratio:>10.2f}",
        f"  calls per second     {m.calls_per_s:>10.1f}",
        f"  harness CPU per call {m.cpu_ms_per_call:>10.3f} ms   ({m.cpu_s:.2f} s in total)",
        f"  peak memory (RSS)    {m.peak_rss_mb:>10.1f} MB",
        f"  of which leaderboard {m.leaderboard_s:>10.2f} s   (bootstrap intervals, "
        f"{m.leaderboard_cpu_s:.2f} s CPU; timed again alone)",
        f"  calls phase: wall {m.calls_wall_s:.2f} s = {m.calls_ratio:.2f} × critical path, "
        f"CPU {m.calls_cpu_ms_per_call:.3f} ms per call",
        f"  cache lookup         {m.lookup_hit_us:>10.1f} µs CPU per stored key, "
        f"{m.lookup_miss_us:.1f} µs per missing key ({m.stored_completions:,} in the store)",
    ]
    return "\n".join(lines)


def add_size_arguments(parser: argparse.ArgumentParser) -> None:
    """The run's size and the loopback server's latency, as both throughput benchmarks take them."""
    parser.add_argument("--models", type=int, default=20, help="distinct models (M)")
    parser.add_argument("--runs", type=int, default=5, help="runs per model (R)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per call")
    parser.add_argument("--jitter", type=float, default=0.1, help="latency ± this fraction")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_size_arguments(parser)
    parser.add_argument(
        "--concurrency", type=int, default=None, help="calls in flight at most (default: adaptive)"
    )
    parser.add_argument(
        "--sequential",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also measure concurrency 1 at a small size (default on)",
    )
    parser.add_argument("--seq-models", type=int, default=1, help="models in the sequential run")
    parser.add_argument("--seq-runs", type=int, default=1, help="runs in the sequential run")
    parser.add_argument(
        "--prefill",
        type=int,
        default=0,
        help="also repeat the full run on a store holding this many unrelated completions",
    )
    parser.add_argument(
        "--endpoints", type=int, default=1, help="mock servers listed as the models' base_urls"
    )
    parser.add_argument(
        "--command",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the whole `aib run` process and its cached re-run (default on)",
    )
    return parser.parse_args(argv)


def check(title: str, m: Measurement, suite: Suite) -> list[str]:
    """What went wrong in a measured run: failed items, or calls that did not all happen."""
    problems = []
    if m.failures:
        problems.append(f"{title}: {m.failures} of the conversations and judgments failed")
    expected = expected_calls(suite, m.config.models, m.config.runs)
    if m.calls != expected or m.server_calls != expected:
        problems.append(
            f"{title}: expected {count_of(expected, 'call')}, the harness made {m.calls}, "
            f"the server counted {m.server_calls}"
        )
    return problems


def check_command(m: CommandMeasurement, suite: Suite, config: BenchConfig) -> list[str]:
    """What went wrong with the whole command: calls missing, or a re-run that was not free."""
    problems = []
    expected = expected_calls(suite, config.models, config.runs)
    if m.calls != expected:
        problems.append(
            f"whole command: expected {count_of(expected, 'call')}, the server counted {m.calls}"
        )
    if m.rerun_requests or not m.same_leaderboard:
        problems.append(
            f"cached re-run: {m.rerun_requests} requests, same leaderboard {m.same_leaderboard}"
        )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite(SUITE_ID)
    full = BenchConfig(
        models=args.models,
        runs=args.runs,
        latency_s=args.latency,
        jitter=args.jitter,
        concurrency=args.concurrency,
        endpoints=args.endpoints,
    )
    print(f"machine: {machine_description()}; load average {load_average()}")
    print(
        f"suite {suite.id}: {count_of(len(suite.scenarios), 'conversation')} per run, "
        f"longest chain {count_of(critical_chain(suite), 'call')}, "
        f"{count_of(expected_calls(suite, 1, 1), 'call')} per model and run",
        flush=True,
    )
    measured: list[tuple[str, Measurement]] = []

    def report(title: str, config: BenchConfig, urls: Sequence[str]) -> Measurement:
        result = measure(config, urls)
        measured.append((title, result))
        print(format_measurement(title, result), flush=True)
        return result

    command_problems: list[str] = []
    with mock_servers(args.latency, args.jitter, args.endpoints) as urls:
        if args.command:
            command = measure_command(full, urls)
            print(format_command(command), flush=True)
            command_problems = check_command(command, suite, full)
        concurrent = report("calls phase (library API, in a fresh process)", full, urls)
        if args.prefill > 0:
            report("concurrent, prefilled store", replace(full, prefill=args.prefill), urls)
        if args.sequential:
            small = replace(full, models=args.seq_models, runs=args.seq_runs)
            small_concurrent = report("small size, concurrent", small, urls)
            small_sequential = report(
                "small size, sequential (concurrency 1)", replace(small, concurrency=1), urls
            )
            speedup = small_sequential.wall_s / small_concurrent.wall_s
            print(f"measured speedup at the small size: {speedup:.1f}×")
            per_call = small_sequential.wall_s / max(1, small_sequential.calls)
            estimate = per_call * concurrent.calls
            print(
                f"sequential at the full size, EXTRAPOLATED (not measured): {concurrent.calls:,} "
                f"calls × {per_call:.2f} s = {estimate:,.0f} s, "
                f"{estimate / concurrent.wall_s:,.0f}× the concurrent run"
            )
    print(f"load average at the end: {load_average()}")
    problems = [problem for title, m in measured for problem in check(title, m, suite)]
    problems += command_problems
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
