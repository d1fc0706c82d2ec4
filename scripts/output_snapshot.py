"""Every read-only command's output on one store, written to a folder, to diff two versions.

A refactoring that must not change what users see is checked by building one store, taking a
snapshot of every command's output with the old code and with the new, and diffing the two:

    python scripts/output_snapshot.py build /tmp/snap/store [--upstream PATH]
    PYTHONPATH=/old/src python scripts/output_snapshot.py take /tmp/snap/store /tmp/snap/old
    PYTHONPATH=src      python scripts/output_snapshot.py take /tmp/snap/store /tmp/snap/new
    diff -r /tmp/snap/old /tmp/snap/new

`build` runs, against the scripted loopback server, suite v2 for four model configurations
(two runs each but one), judged by `scripted-judge` and re-judged by `scripted-judge-graded`
and `scripted-judge-flaky` (two repeats); suite v3 for its four scripted archetypes; suite
`full` for two models (the config analysis); and, when given, imports an upstream sample
(`aib import`). `take` runs each command of `COMMANDS` in a child process and writes its exit
status, stdout and stderr to `<name>.txt`; `report` and `view` also write their folders there.
The store is copied first, so nothing a command does can touch the store the other side reads.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

V2_MODELS = ("scripted-firm", "scripted-caving")
V3_MODELS = ("scripted-calibrated", "scripted-stubborn", "scripted-late-caver", "scripted-pushover")
JUDGE, GRADED, FLAKY = "scripted-judge", "scripted-judge-graded", "scripted-judge-flaky"
FEW = ("--resamples", "200")

COMMANDS: dict[str, tuple[str, ...]] = {
    "runs": ("runs",),
    "runs-failed": ("runs", "--failed"),
    "runs-v3": ("runs", "--suite", "v3"),
    "models": ("models",),
    "leaderboard-v2": ("leaderboard", "--suite", "v2", *FEW),
    "leaderboard-v2-json-detailed": ("leaderboard", "--suite", "v2", "--json", "--detailed", *FEW),
    "leaderboard-v2-detailed": ("leaderboard", "--suite", "v2", "--detailed", *FEW),
    "leaderboard-v2-graded": ("leaderboard", "--suite", "v2", "--judge", GRADED, *FEW),
    "leaderboard-v2-panel": ("leaderboard", "--suite", "v2", "--judges", f"{JUDGE},{GRADED}", *FEW),
    "leaderboard-v2-panel-json": (
        "leaderboard", "--suite", "v2", "--judges", f"{JUDGE},{GRADED}", "--json", *FEW,
    ),
    "leaderboard-v2-selection": (
        "leaderboard", "--suite", "v2", "--experiments", "identity,boundary", "--detailed", *FEW,
    ),
    "leaderboard-v2-legacy": ("leaderboard", "--suite", "v2", "--method", "legacy"),
    "leaderboard-v2-legacy-json": ("leaderboard", "--suite", "v2", "--method", "legacy", "--json"),
    "leaderboard-v3": ("leaderboard", "--suite", "v3", *FEW),
    "leaderboard-v3-json-detailed": ("leaderboard", "--suite", "v3", "--json", "--detailed", *FEW),
    "leaderboard-full": ("leaderboard", "--suite", "full", *FEW),
    "leaderboard-no-suite": ("leaderboard", *FEW),
    "leaderboard-both-judges": ("leaderboard", "--judge", JUDGE, "--judges", JUDGE),
    "judges-v2": ("judges", "--suite", "v2"),
    "judges-v2-json": ("judges", "--suite", "v2", "--json"),
    "judges-v3": ("judges", "--suite", "v3"),
    "judges-reference": ("judges", "--suite", "v2", "--reference", JUDGE),
    "judges-reference-json": ("judges", "--suite", "v2", "--reference", JUDGE, "--json"),
    "compare-pair": ("compare", "scripted-firm", "scripted-caving", "--suite", "v2", *FEW),
    "compare-pair-json": (
        "compare", "scripted-firm", "scripted-caving", "--suite", "v2", "--json", *FEW,
    ),
    "compare-settings": ("compare", "--suite", "v2", *FEW),
    "compare-settings-json": ("compare", "--suite", "v2", "--json", *FEW),
    "compare-unknown": ("compare", "nobody", "scripted-firm", "--suite", "v2", *FEW),
    "items-v2": ("items", "--suite", "v2"),
    "items-v2-json": ("items", "--suite", "v2", "--json"),
    "items-v3": ("items", "--suite", "v3"),
    "configs-full": ("configs", "--suite", "full", *FEW),
    "configs-full-json": ("configs", "--suite", "full", "--json", *FEW),
    "configs-v2": ("configs", "--suite", "v2", *FEW),
    "estimate-v2": (
        "estimate", "--models", "scripted-firm", "--judge", JUDGE, "--base-url", "{url}",
    ),
    "report": ("report", "--out", "{out}/report", *FEW),
    "report-v3-selection": (
        "report", "--suite", "v3", "--experiments", "escalation", "--no-charts",
        "--out", "{out}/report-v3", *FEW,
    ),
    "view": ("view", "--out", "{out}/view", *FEW),
}  # fmt: skip
"""Each snapshot file and the arguments of its command (`{out}`: the snapshot folder)."""
UPSTREAM_COMMANDS: dict[str, tuple[str, ...]] = {
    "leaderboard-legacy-v2": ("leaderboard", "--suite", "legacy-v2", *FEW),
    "leaderboard-legacy-v2-legacy": ("leaderboard", "--suite", "legacy-v2", "--method", "legacy"),
    "leaderboard-legacy-v2-json-detailed": (
        "leaderboard", "--suite", "legacy-v2", "--json", "--detailed", *FEW,
    ),
    "judges-legacy-v2": ("judges", "--suite", "legacy-v2"),
    "items-legacy-v2": ("items", "--suite", "legacy-v2"),
    "compare-legacy-v2": ("compare", "--suite", "legacy-v2", *FEW),
    "configs-legacy-v2": ("configs", "--suite", "legacy-v2", *FEW),
}  # fmt: skip


def _mock_server() -> Any:
    """The scripted server's module of the version under test: from `tests/support/` beside the
    `src/` the package is imported from (`PYTHONPATH=/old/src`), else beside this script; from
    the package's `testing/` in versions before issue 26 moved the test doubles out of it."""
    import independence_bench

    try:
        return importlib.import_module("independence_bench.testing.mock_server")
    except ImportError:
        pass
    beside = Path(independence_bench.__file__).resolve().parents[2] / "tests"
    here = Path(__file__).resolve().parents[1] / "tests"
    sys.path.insert(0, str(beside if (beside / "support").is_dir() else here))
    return importlib.import_module("support.mock_server")


def _aib(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIB_", "OPENROUTER"))}
    env["COLUMNS"] = "160"
    return subprocess.run(
        [sys.executable, "-m", "independence_bench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _must(*args: str, cwd: Path) -> None:
    done = _aib(*args, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"aib {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")


def build(store: Path, upstream: Path | None) -> None:
    """Fill `store` (a new folder) with the runs, judgments and import described above."""
    mock = _mock_server()

    store = store.resolve()
    store.mkdir(parents=True)
    cwd = store.parent
    (cwd / "models.yaml").write_text(
        "models:\n  - id: scripted-firm\n  - id: scripted-firm\n    temperature: 1.0\n"
        "  - id: scripted-caving\n",
        encoding="utf-8",
    )
    with mock.MockServer(mock.MockConfig()) as server:
        url, data = server.base_url, ("--data-dir", str(store))
        common = ("--judge", JUDGE, "--base-url", url, "--concurrency", "32", *data)
        _must("run", "--config", "models.yaml", "--runs", "2", *common, cwd=cwd)
        _must("run", "--models", "scripted-plain", "--runs", "1", *common, cwd=cwd)
        _must("judge", "--judge", GRADED, "--base-url", url, "--suite", "v2", *data, cwd=cwd)
        _must("judge", "--judge", FLAKY, "--base-url", url, "--repeats", "2", *data, cwd=cwd)
        _must("run", "--suite", "v3", "--models", ",".join(V3_MODELS), "--runs", "1", *common,
              cwd=cwd)  # fmt: skip
        _must("run", "--suite", "full", "--models", ",".join(V2_MODELS), "--runs", "2", *common,
              cwd=cwd)  # fmt: skip
    if upstream is not None:
        _must("import", str(upstream), *data, cwd=cwd)


def take(store: Path, out: Path, *, upstream: bool) -> None:
    """Run every command on a copy of `store`; write each one's status and output to `out`."""
    mock = _mock_server()

    store, out = store.resolve(), out.resolve()
    out.mkdir(parents=True)
    work = out.parent / f".{out.name}-work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work / "store")
    commands = {**COMMANDS, **(UPSTREAM_COMMANDS if upstream else {})}
    with mock.MockServer(mock.MockConfig()) as server:
        for name, args in commands.items():
            filled = [a.format(out=out, url=server.base_url) for a in args]
            data = () if args[0] == "models" else ("--data-dir", str(work / "store"))
            done = _aib(*filled, *data, cwd=work)
            text = f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
            (out / f"{name}.txt").write_text(text.replace(str(out), "<out>"), encoding="utf-8")
    shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    make = sub.add_parser("build", help="build the store")
    make.add_argument("store", type=Path)
    make.add_argument("--upstream", type=Path, default=None, help="an upstream sample to import")
    snap = sub.add_parser("take", help="snapshot every command's output")
    snap.add_argument("store", type=Path)
    snap.add_argument("out", type=Path)
    snap.add_argument("--upstream", action="store_true", help="the store holds an import")
    args = parser.parse_args()
    if args.step == "build":
        build(args.store, args.upstream)
    else:
        take(args.store, args.out, upstream=args.upstream)


if __name__ == "__main__":
    main()
