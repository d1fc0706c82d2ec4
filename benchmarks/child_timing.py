"""A command timed as a user times it: wall seconds from process start to exit, and CPU seconds.

Shared by the benchmarks that run `aib` (or a baseline) as a child process; a command that fails
stops the benchmark, since its time would mean nothing, unless failing is what is timed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Mapping, Sequence

from independence_bench.clients.endpoints import GENERIC_KEY_ENV, OPENROUTER_KEY_ENV


def timed_run(
    argv: Sequence[str], env: Mapping[str, str] | None = None, *, check: bool = True
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds user + system, stdout) of one run of `argv`; with `check`,
    `RuntimeError` with the end of its output when it exits non-zero (without, for a command
    whose refusal is what is timed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise RuntimeError(f"{' '.join(argv[:4])} exited {done.returncode}: {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def without_api_keys() -> dict[str, str]:
    """This process's environment less the API keys: a benchmark never reaches a paid endpoint."""
    return {k: v for k, v in os.environ.items() if k not in (OPENROUTER_KEY_ENV, GENERIC_KEY_ENV)}
