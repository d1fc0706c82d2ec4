"""The scripted server in a process of its own, for benchmarks and tests that must not share
its CPU or event loop with the code they measure."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
"""The folder that holds `support/`: the child imports `support.mock_server` from it."""


@contextmanager
def mock_server_process(*args: str) -> Iterator[str]:
    """Start `python -m support.mock_server *args` (`tests/` on its path); yield its base URL.

    The server prints `listening <base url>` once it accepts connections; anything else on its
    first line is a failed start. The process is terminated on exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", "support.mock_server", *args],
        stdout=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, (str(TESTS), os.environ.get("PYTHONPATH")))),
        },
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("listening "):
            raise RuntimeError(f"the mock server did not start: {line!r}")
        yield line.removeprefix("listening ")
    finally:
        process.terminate()
        process.wait(timeout=10)
