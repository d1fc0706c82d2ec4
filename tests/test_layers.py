"""The package's layers: every import points from a later pipeline stage to an earlier one.

Read from the source with `ast` (imports inside functions and `TYPE_CHECKING` blocks count
too), so a wrong-way import fails here before it becomes a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import independence_bench

PACKAGE = "independence_bench"
ROOT = Path(independence_bench.__file__).parent
LAYERS = (
    "text",
    "errors",
    "suites",
    "clients",
    "conversations",
    "store",
    "judging",
    "engine",
    "scoring",
    "stats",
    "reports",
    "legacy",
    "inspect_tasks",
    "workflows",
    "cli",
)
"""Pipeline order: a stage may import the ones before it, never one after it."""
TESTING_RANK = LAYERS.index("workflows") - 0.5
"""`testing/` (the mock server) may use anything before `workflows`; nothing may import it."""
ENTRY_POINTS = frozenset({"__init__", "__main__"})
"""The package's own `__init__` (its version) and `python -m` entry may be imported by all."""


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((PACKAGE, *parts)).removesuffix(".__init__")


def _imported(path: Path) -> set[str]:
    """Absolute names of the package modules `path` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _name_of(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *filter(None, [base])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


def _rank(module: str) -> float | None:
    """The layer rank of a package module; None for the package's entry points."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] in ENTRY_POINTS:
        return None
    if parts[1] == "testing":
        return TESTING_RANK
    if parts[1] not in LAYERS:
        return None  # `from independence_bench import __version__` and the like
    return float(LAYERS.index(parts[1]))


def test_every_module_belongs_to_a_layer() -> None:
    stray = [
        _name_of(p) for p in _modules() if _rank(_name_of(p)) is None and p.stem not in ENTRY_POINTS
    ]
    assert stray == []


def _wrong_way_imports(path: Path) -> list[str]:
    own = _rank(_name_of(path))
    if own is None:
        return []  # the entry points sit above every layer
    return sorted(
        module
        for module in _imported(path)
        if (rank := _rank(module)) is not None
        and (rank > own or (rank == TESTING_RANK and own != TESTING_RANK))
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: _name_of(p))
def test_imports_point_to_earlier_stages_only(path: Path) -> None:
    assert _wrong_way_imports(path) == [], f"{_name_of(path)} imports a later stage"


def test_a_wrong_way_import_is_caught_however_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / PACKAGE
    (fake / "store").mkdir(parents=True)
    (fake / "testing").mkdir()
    module = fake / "store" / "store.py"
    module.write_text(
        "from ..engine import engine\n"
        "from . import records\n"
        "from independence_bench.clients import protocol\n"
        "from independence_bench import __version__\n"
        "def f():\n    import independence_bench.testing.mock_server\n",
        encoding="utf-8",
    )
    mock = fake / "testing" / "mock_server.py"
    mock.write_text("from ..reports import report\nfrom ..workflows import workflows\n")
    monkeypatch.setattr(f"{__name__}.ROOT", fake)
    assert _wrong_way_imports(module) == [
        "independence_bench.engine",
        "independence_bench.engine.engine",
        "independence_bench.testing.mock_server",
    ]
    assert _wrong_way_imports(mock) == [
        "independence_bench.workflows",
        "independence_bench.workflows.workflows",
    ]


@pytest.mark.parametrize(
    "init", sorted(ROOT.rglob("__init__.py")), ids=lambda p: _name_of(p) or PACKAGE
)
def test_every_package_says_what_it_owns(init: Path) -> None:
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 5, f"{_name_of(init)} needs a docstring"
