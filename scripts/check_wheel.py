"""Build the wheel users install and check that no test double ships in it.

The mock servers and the tests' helpers live in `tests/support/`; the wheel holds the package
under `src/` and its data only. Run from anywhere (CI's slow step runs it):

    .venv/bin/python scripts/check_wheel.py

Prints one line per file that should not be there and exits 1, or `wheel ok: <name>, <n> files`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from independence_bench.text.counts import count_of

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "src")
"""What the build reads, copied to a fresh folder: a stale `build/` can put old files in a wheel."""
TEST_ONLY_PARTS = frozenset({"tests", "support", "testing", "conftest.py"})
"""Path parts that only the tests own: a wheel file under one of them is a test file."""
TEST_ONLY_PREFIXES = ("mock_", "scripted_", "test_")
"""File-name starts of the doubles (`mock_server.py`, `scripted_v3.py`) and of test files."""


def test_files_in(names: list[str]) -> list[str]:
    """The wheel entries that belong to the tests, not to the package."""
    found = []
    for name in names:
        path = PurePosixPath(name)
        if TEST_ONLY_PARTS & set(path.parts) or path.name.startswith(TEST_ONLY_PREFIXES):
            found.append(name)
    return found


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="aib-wheel-") as tmp:
        tree, out = Path(tmp) / "tree", Path(tmp) / "out"
        for name in SOURCES:
            source, copy = ROOT / name, tree / name
            if source.is_dir():
                shutil.copytree(
                    source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
                )
            else:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, copy)
        built = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "-w",
                str(out),
                str(tree),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wheels = sorted(out.glob("*.whl"))
        if built.returncode != 0 or len(wheels) != 1:
            print(f"pip wheel failed: {built.stderr.strip()[-500:]}", file=sys.stderr)
            return 2
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = wheel.namelist()
    bad = test_files_in(names)
    for name in bad:
        print(f"test file in the wheel: {name}")
    if not bad:
        print(f"wheel ok: {wheels[0].name}, {count_of(len(names), 'file')}, no test double")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
