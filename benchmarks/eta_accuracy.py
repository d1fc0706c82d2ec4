"""How close the first ETA of `aib run` comes to the time the run really took.

Runs the README's offline run (the embedded 0.5B judged by the embedded 1.5B; no key, no
`--models`) in-process on a fresh store, with the progress display `aib run` uses, and records
every progress event with its time. Prints the first ETA figure the calls row showed (right
after the first answered call), the time the calls then really took, and their ratio; the issue
asks for a ratio within 0.5–2. Also prints the ETA after 10%, 25% and 50% of the calls, and
how long loading the models took before the first call (which the ETA must not count).

    python benchmarks/eta_accuracy.py [--scenarios ID,ID] [--data-dir DIR]

Weights come from the installed part packages, assembled once into the usual cache; the run
itself takes minutes on 2 CPUs. `--scenarios` narrows the suite for a quicker look.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from independence_bench.engine import progress as progress_module
from independence_bench.workflows import run as run_module
from independence_bench.workflows.plan import RunOptions


class RecordingProgress(progress_module.RichProgress):
    """The progress display of `aib run`, noting each event's time and the ETA it shows."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.events: list[tuple[float, str]] = []
        self.etas: list[tuple[float, int, float | None]] = []
        """(time, calls answered, ETA shown) after each answered call."""

    def advance(self, event: str) -> None:
        super().advance(event)
        now = time.monotonic()
        self.events.append((now, event))
        if event == "call_done":
            answered = sum(1 for _, e in self.events if e == "call_done")
            self.etas.append((now, answered, self.eta()))


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "none"
    return f"{seconds / 60:5.1f} min ({seconds:6.0f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="", help="Only these scenario ids (comma list).")
    parser.add_argument("--data-dir", type=Path, default=None, help="Store (default: a temp dir).")
    args = parser.parse_args()
    recorders: list[RecordingProgress] = []

    def recording(*a: object, **k: object) -> RecordingProgress:
        made = RecordingProgress(*a, **k)
        recorders.append(made)
        return made

    # The one display `aib run` builds; replaced here so its events can be timed.
    run_module.RichProgress = recording  # type: ignore[misc,assignment]
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="aib-eta-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENROUTER")}
    options = RunOptions(
        data_dir=data_dir,
        env=env,
        scenarios=tuple(s for s in args.scenarios.split(",") if s),
    )
    started = time.monotonic()
    result = run_module.run_benchmark(options)
    recorder = recorders[0]
    first_call = next(t for t, e in recorder.events if e == "call_started")
    last = recorder.events[-1][0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; store {data_dir}")
    print(
        f"suite {result.suite.id}: {result.summary.calls} calls answered, "
        f"{result.summary.items_done} conversations, {result.summary.judged} judged"
    )
    print(f"before the first call (models loaded): {first_call - started:6.1f} s")
    if not recorder.etas:
        print("no call answered: nothing to compare")
        return
    total = len(recorder.etas)
    for share in (0.0, 0.1, 0.25, 0.5):
        at, answered, eta = recorder.etas[min(total - 1, int(share * total))]
        actual = last - at
        ratio = f"{eta / actual:4.2f}×" if eta is not None and actual > 0 else "–"
        what = "first ETA" if share == 0.0 else f"ETA at {share:.0%}"
        print(
            f"{what:<11} after {answered:3d} of {total} answered: shown {_minutes(eta)}, "
            f"actual {_minutes(actual)}, ratio {ratio}"
        )


if __name__ == "__main__":
    main()
