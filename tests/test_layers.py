"""The package's layers: every import points from a later pipeline stage to an earlier one.

Read from the source with `ast` (imports inside functions and `TYPE_CHECKING` blocks count
too), so a wrong-way import fails here before it becomes a cycle. The test doubles live outside
the package, in `tests/support/`: the package never imports them, and they use only the stages
before `workflows` (a scripted server needs the suites it scripts, never the pipeline it serves).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import independence_bench

PACKAGE = "independence_bench"
ROOT = Path(independence_bench.__file__).parent
SUPPORT = Path(__file__).resolve().parent / "support"
"""`tests/support/`: the mock servers and the tests' shared helpers, imported as `support`."""
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
    "workflows",
    "cli",
)
"""Pipeline order: a stage may import the ones before it, never one after it."""
TESTS_ONLY = ("support", "conftest")
"""Top-level names only the tests import: a package module importing one would need the tests."""
DOUBLES_BELOW = LAYERS.index("workflows")
"""The mock servers (`tests/support/mock_*.py`, `scripted_v3.py`) may use the stages before it."""
ENTRY_POINTS = frozenset({"__init__", "__main__"})
"""The package's own `__init__` (its version) and `python -m` entry may be imported by all."""


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((PACKAGE, *parts)).removesuffix(".__init__")


def _doubles() -> list[Path]:
    return sorted([*SUPPORT.glob("mock_*.py"), *SUPPORT.glob("scripted_*.py")])


def _imported(path: Path, here: list[str] | None = None) -> set[str]:
    """Absolute names of the package and test-only modules `path` imports (relative imports
    resolved against the module name `here`, by default its name in the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = here or _name_of(path).split(".")
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
    return {name for name in names if name.split(".")[0] in (PACKAGE, *TESTS_ONLY)}


def _rank(module: str) -> float | None:
    """The layer rank of a package module; None for the package's entry points."""
    parts = module.split(".")
    if parts[0] in TESTS_ONLY:
        return float(len(LAYERS))  # above every layer: nothing in the package may import it
    if len(parts) < 2 or parts[1] in ENTRY_POINTS:
        return None
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
    if own is None:  # the entry points sit above every layer, below the tests
        return sorted(m for m in _imported(path) if m.split(".")[0] in TESTS_ONLY)
    return sorted(
        module for module in _imported(path) if (rank := _rank(module)) is not None and rank > own
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: _name_of(p))
def test_imports_point_to_earlier_stages_only(path: Path) -> None:
    assert _wrong_way_imports(path) == [], f"{_name_of(path)} imports a later stage"


def _doubles_wrong_way_imports(path: Path) -> list[str]:
    here = ["support", path.stem]
    return sorted(
        module
        for module in _imported(path, here)
        if module.startswith(f"{PACKAGE}.")
        and ((rank := _rank(module)) is None or rank >= DOUBLES_BELOW)
        and module.split(".")[1] not in ENTRY_POINTS
    )


@pytest.mark.parametrize("path", _doubles(), ids=lambda p: f"support.{p.stem}")
def test_the_mock_servers_use_only_stages_before_workflows(path: Path) -> None:
    assert _doubles_wrong_way_imports(path) == [], f"support.{path.stem} imports a late stage"


def test_the_mock_servers_are_found() -> None:
    """The doubles' test above runs on the files it should: the server and its behaviours."""
    assert {"mock_server", "mock_behaviours", "mock_llamacpp", "scripted_v3"} <= {
        p.stem for p in _doubles()
    }


def test_the_package_ships_no_test_double() -> None:
    """The mock servers left the wheel: no package module is one, none imports one
    (`scripts/check_wheel.py` checks the built wheel itself in CI's slow step)."""
    names = [_name_of(p) for p in _modules()]
    assert [n for n in names if n.startswith(f"{PACKAGE}.testing")] == []
    assert [n for n in names if n.rsplit(".", 1)[-1].startswith(("mock_", "scripted_"))] == []


def test_a_wrong_way_import_is_caught_however_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / PACKAGE
    (fake / "store").mkdir(parents=True)
    module = fake / "store" / "store.py"
    module.write_text(
        "from ..engine import engine\n"
        "from . import records\n"
        "from independence_bench.clients import protocol\n"
        "from independence_bench import __version__\n"
        "def f():\n    import support.mock_server\n",
        encoding="utf-8",
    )
    mock = tmp_path / "support" / "mock_server.py"
    mock.parent.mkdir()
    mock.write_text(
        "from . import mock_http\n"
        "from independence_bench.reports import report\n"
        "from independence_bench.workflows import workflows\n"
        "from independence_bench.suites.suite import Scenario\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", fake)
    assert _wrong_way_imports(module) == [
        "independence_bench.engine",
        "independence_bench.engine.engine",
        "support.mock_server",
    ]
    assert _doubles_wrong_way_imports(mock) == [
        "independence_bench.workflows",
        "independence_bench.workflows.workflows",
    ]


@pytest.mark.parametrize(
    "init", sorted(ROOT.rglob("__init__.py")), ids=lambda p: _name_of(p) or PACKAGE
)
def test_every_package_says_what_it_owns(init: Path) -> None:
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 5, f"{_name_of(init)} needs a docstring"
