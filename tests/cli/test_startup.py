"""What `aib` imports to start: `--help` and a store check load none of the heavy libraries.

Each case runs the CLI in a fresh interpreter (a module imported by an earlier test would hide a
regression here) and reads `sys.modules` afterwards. The time these imports would cost is
measured by `benchmarks/startup.py`, not asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from independence_bench.cli.main import COMMANDS
from independence_bench.store.store import Store

HEAVY = ("numpy", "matplotlib", "aiohttp", "rich", "pydantic", "yaml", "llama_cpp")
"""Libraries that cost tens to hundreds of milliseconds to import."""
ENGINE = ("independence_bench.engine", "independence_bench.clients.openai_compat")

_PROBE = """
import json, sys
from independence_bench.cli.main import main
codes = [main(args) for args in json.loads(sys.argv[1])]
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def _start(*invocations: list[str]) -> tuple[list[int], set[str], str]:
    """Run `main` on each argument list in one fresh interpreter: exit codes, modules, stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(invocations))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["codes"], set(report["modules"]), done.stderr


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names))


def test_importing_the_cli_loads_no_heavy_library() -> None:
    codes, modules, _ = _start()
    assert codes == []
    assert "independence_bench.cli.main" in modules
    assert _loaded(modules, HEAVY + ENGINE) == []


def test_help_lists_every_command_without_loading_a_heavy_library() -> None:
    codes, modules, _ = _start(["--help"], *([name, "--help"] for name in sorted(COMMANDS)))
    assert codes == [0] * (1 + len(COMMANDS))
    # Every command module was imported (to render its help), none of their libraries.
    assert {"independence_bench.cli.run", "independence_bench.cli.results"} <= modules
    assert _loaded(modules, HEAVY + ENGINE) == []


@pytest.mark.parametrize("store", ["missing", "empty"])
def test_leaderboard_on_a_store_without_runs_says_so_before_loading_the_statistics(
    store: str, tmp_path: Path
) -> None:
    data = tmp_path / store
    if store == "empty":
        Store(data).close()
    codes, modules, err = _start(["leaderboard", "--data-dir", str(data)])
    assert codes == [2]
    expected = "no store at" if store == "missing" else "holds no runs yet"
    assert err.startswith("aib: error:") and expected in err
    assert _loaded(modules, HEAVY + ENGINE + ("independence_bench.stats.bootstrap",)) == []
