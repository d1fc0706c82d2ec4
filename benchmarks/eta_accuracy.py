"""How close the first ETA of `aib run` comes to the time the run really took.

Runs the README's offline run (the embedded 0.5B judged by the embedded 1.5B; no key, no
`--models`) in-process on a fresh store and records every progress event the engine sends with
its time. The events are then played, on a fake clock, into the progress display `aib run`
draws (`RichProgress`), which gives the ETA it showed after each answered call. Prints the first
ETA figure, the time the calls then really took and their ratio (the issue asks for 0.5–2),
the same at 10%, 25% and 50% of the calls, and how long loading the models took before the
first call (which the ETA must not count).

    python benchmarks/eta_accuracy.py [--scenarios ID,ID] [--data-dir DIR] [--save FILE]
    python benchmarks/eta_accuracy.py --replay FILE

`--save` keeps the timed events as JSON; `--replay` plays a saved run again, so a change to
the ETA can be judged on the same run. The offline run takes minutes on 2 CPUs; `--scenarios`
narrows the suite for a quicker look.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from rich.console import Console

from independence_bench.engine.progress import RichProgress
from independence_bench.text.counts import count_of
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_benchmark


class Recorder:
    """A `ProgressSink` that notes the plan and each event with its time."""

    def __init__(self) -> None:
        self.plan: tuple[int, int, int] = (0, 0, 0)
        self.events: list[tuple[float, str]] = []

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        self.plan = (items, judgments, calls)
        self.events.append((time.monotonic(), "planned"))

    def advance(self, event: str) -> None:
        self.events.append((time.monotonic(), event))

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *_: object) -> None:
        pass


def record_offline_run(data_dir: Path, scenarios: tuple[str, ...]) -> dict[str, object]:
    """Run the offline default once; the plan, the events and when the run began."""
    recorder = Recorder()
    from independence_bench.workflows import run as run_module

    # The display `aib run` builds, swapped for the recorder so every event is timed.
    run_module.RichProgress = lambda **_: recorder  # type: ignore[assignment,misc]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENROUTER")}
    began = time.monotonic()
    result = run_benchmark(RunOptions(data_dir=data_dir, env=env, scenarios=scenarios))
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "suite": result.suite.id,
        "calls": result.summary.calls,
        "began": began,
        "plan": list(recorder.plan),
        "events": recorder.events,
    }


def replay(run: dict[str, object]) -> list[tuple[float, int, float | None]]:
    """(time, calls answered, ETA shown) after each answered call, as `RichProgress` draws it."""
    now = [0.0]
    shown: list[tuple[float, int, float | None]] = []
    console = Console(file=io.StringIO(), force_terminal=False)
    with RichProgress(console, clock=lambda: now[0]) as progress:
        answered = 0
        for at, event in run["events"]:  # type: ignore[attr-defined]
            now[0] = at
            if event == "planned":
                progress.planned(*run["plan"])  # type: ignore[misc]
                continue
            progress.advance(event)
            if event == "call_done":
                answered += 1
                shown.append((at, answered, progress.eta()))
    return shown


def _minutes(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds / 60:5.1f} min ({seconds:5.0f} s)"


def report(run: dict[str, object]) -> None:
    events: list[tuple[float, str]] = run["events"]  # type: ignore[assignment]
    first_call = next(at for at, e in events if e == "call_started")
    last = events[-1][0]
    answered = count_of(run["calls"], "call")  # type: ignore[arg-type]
    print(f"machine: {run['machine']}; suite {run['suite']}, {answered} answered")
    print(f"before the first call (models loaded): {first_call - run['began']:.1f} s")  # type: ignore[operator]
    print(f"calls from the first sent to the last event: {_minutes(last - first_call)}")
    shown = replay(run)
    figures = [(at, n, eta) for at, n, eta in shown if eta is not None]
    if not figures:
        print("no ETA was shown: nothing to compare")
        return
    for share in (0.0, 0.1, 0.25, 0.5):
        at, answered, eta = figures[min(len(figures) - 1, int(share * len(shown)))]
        actual = last - at
        ratio = f"{eta / actual:4.2f}×" if eta is not None and actual > 0 else "–"
        what = "first ETA" if share == 0.0 else f"ETA at {share:.0%}"
        print(
            f"{what:<10} after {answered:3d} of {len(shown)} answered: shown {_minutes(eta)}, "
            f"actual {_minutes(actual)}, ratio {ratio}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", default="", help="Only these scenario ids (comma list).")
    parser.add_argument("--data-dir", type=Path, default=None, help="Store (default: a temp dir).")
    parser.add_argument("--save", type=Path, default=None, help="Keep the timed events here.")
    parser.add_argument("--replay", type=Path, default=None, help="Play saved events again.")
    args = parser.parse_args()
    if args.replay is not None:
        run = json.loads(args.replay.read_text("utf-8"))
    else:
        data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="aib-eta-"))
        scenarios = tuple(s for s in args.scenarios.split(",") if s)
        run = record_offline_run(data_dir, scenarios)
        if args.save is not None:
            args.save.write_text(json.dumps(run), "utf-8")
    report(run)


if __name__ == "__main__":
    main()
