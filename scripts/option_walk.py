"""Walk one option of `aib run` through the package: every function its value reaches.

A structure walk, traced rather than read: `aib run` runs in-process against the scripted
loopback server (one model, one scenario, one run) with a profiler on, and every call of a
package function that is given the option's value — the judge as its model id or `ModelSpec`,
the suite as its `Suite`, or an options or plan object holding them — is a stop. It prints the
stops in order, then the counts ARCHITECTURE.md quotes: stops, modules, layers, and the layer
entries (a stop in another layer than the stop before it):

    PYTHONPATH=src python scripts/option_walk.py judge
    PYTHONPATH=src python scripts/option_walk.py suite
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

import independence_bench
from independence_bench.cli.main import main
from independence_bench.clients.config import ModelSpec
from independence_bench.suites.suite import Suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.mock_server import MockConfig, MockServer

JUDGE, SUITE = "scripted-judge", "v2"
PACKAGE = str(Path(independence_bench.__file__).resolve().parent) + os.sep


def _is_value(option: str, value: Any) -> bool:
    if option == "judge":
        return (
            value == JUDGE
            if isinstance(value, str)
            else (isinstance(value, ModelSpec) and value.id == JUDGE)
        )
    return isinstance(value, Suite) and value.id == SUITE


def carries(option: str, value: Any) -> bool:
    """Whether `value` is the option's value, or an options/plan dataclass holding it."""
    if _is_value(option, value):
        return True
    if not hasattr(type(value), "__dataclass_fields__"):
        return False
    held = ("judge",) if option == "judge" else ("suite", "suite_id")
    return any(
        _is_value(option, getattr(value, name, None)) or getattr(value, name, None) == SUITE
        for name in held
        if option == "suite" or name == "judge"
    )


def walk(option: str) -> list[str]:
    """The stops of `option`'s value through one `aib run`, in order (a repeat in a row once)."""
    stops: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(PACKAGE):
            return
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(carries(option, frame.f_locals.get(name)) for name in names):
            stop = f"{code.co_filename[len(PACKAGE) :]}:{code.co_qualname}"
            if not stops or stops[-1] != stop:
                stops.append(stop)

    os.chdir(tempfile.mkdtemp())
    with MockServer(MockConfig()) as server:
        args = ["run", "--suite", SUITE, "--models", "scripted-firm", "--judge", JUDGE,
                "--base-url", server.base_url, "--scenarios", "direct", "--runs", "1",
                "--data-dir", "store"]  # fmt: skip
        sys.setprofile(profile)
        try:
            main(args)
        finally:
            sys.setprofile(None)
    return list(dict.fromkeys(stops))


def layer(stop: str) -> str:
    return stop.split(os.sep)[0].split(":")[0].removesuffix(".py")


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("option", choices=("judge", "suite"))
    option = parser.parse_args().option
    stops = walk(option)
    entries = [
        layer(stop) for i, stop in enumerate(stops) if i == 0 or layer(stop) != layer(stops[i - 1])
    ]
    print("\n".join(stops))
    modules = {stop.split(":")[0] for stop in stops}
    print(
        f"--{option}: {len(stops)} stops in {len(modules)} modules over "
        f"{len(set(entries))} layers, {len(entries)} layer entries"
    )


if __name__ == "__main__":
    main_()
