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
    "version",
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
    "gathering",
    "reports",
    "legacy",
    "inspect_tasks",
    "workflows",
    "cli",
)
"""Pipeline order: a stage may import the ones before it, never one after it."""
TESTS_ONLY = ("support", "conftest")
"""Top-level names only the tests import: a package module importing one would need the tests."""
DOUBLES_BELOW = LAYERS.index("workflows")
"""The mock servers (`tests/support/mock_*.py`, `scripted_v3.py`) may use the stages before it."""
ENTRY_POINTS = frozenset({"__init__", "__main__"})
"""The package's front (`__init__`, the public API) and its `python -m` entry: they sit above
every layer, so no layer imports them (the version is `version.py`, the first layer)."""
FRONT = len(LAYERS) - 0.5
"""The rank of the package front and the names it exports (`from independence_bench import
__version__`): above every layer, as it imports `workflows/`; below the tests."""


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
            if base != PACKAGE:  # `from independence_bench import x` imports x, not the package
                names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] in (PACKAGE, *TESTS_ONLY)}


def _rank(module: str) -> float | None:
    """The layer rank of a package module or name; `FRONT` for the package front and the names
    it exports; None for `__main__`, which may import any layer."""
    parts = module.split(".")
    if parts[0] in TESTS_ONLY:
        return float(len(LAYERS))  # above every layer: nothing in the package may import it
    if len(parts) < 2:
        return FRONT  # `import independence_bench`
    if parts[1] == "__main__":
        return None  # `python -m independence_bench`: above the front, may import any layer
    if parts[1] not in LAYERS:
        return FRONT  # `from independence_bench import __version__`: a name of the front
    return float(LAYERS.index(parts[1]))


def test_every_module_belongs_to_a_layer() -> None:
    stray = [
        name
        for p in _modules()
        if p.stem not in ENTRY_POINTS and (name := _name_of(p)).split(".")[1] not in LAYERS
    ]
    assert stray == []


def _wrong_way_imports(path: Path) -> list[str]:
    own = _rank(_name_of(path))
    if own is None:  # `__main__` sits above every layer, below the tests
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
        if module.split(".")[0] == PACKAGE
        and ((rank := _rank(module)) is None or rank >= DOUBLES_BELOW)
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
        "from independence_bench.version import __version__\n"
        "from independence_bench import errors, text\n"
        "def f():\n    import support.mock_server\n    import independence_bench\n",
        encoding="utf-8",
    )
    mock = tmp_path / "support" / "mock_server.py"
    mock.parent.mkdir()
    mock.write_text(
        "from . import mock_http\n"
        "from independence_bench.reports import report\n"
        "from independence_bench.workflows import workflows\n"
        "from independence_bench.suites.suite import Scenario\n"
        "from independence_bench import __version__\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", fake)
    assert _wrong_way_imports(module) == [
        "independence_bench",
        "independence_bench.__version__",
        "independence_bench.engine",
        "independence_bench.engine.engine",
        "support.mock_server",
    ]
    assert _doubles_wrong_way_imports(mock) == [
        "independence_bench.__version__",
        "independence_bench.workflows",
        "independence_bench.workflows.workflows",
    ]


STATS_TAKE_AS_VALUES = (f"{PACKAGE}.clients", f"{PACKAGE}.suites")
"""What the statistics are given instead of importing: a label reader (`ModelLabel`) and the
items' kinds through `scoring`'s item types (`kind_metric_keys`, `arm`)."""


@pytest.mark.parametrize("path", sorted((ROOT / "stats").rglob("*.py")), ids=_name_of)
def test_the_statistics_import_no_configuration_or_suite(path: Path) -> None:
    assert [m for m in _imported(path) if m.startswith(STATS_TAKE_AS_VALUES)] == []


RENDERERS_NEVER_IMPORT = (f"{PACKAGE}.store",)
"""What `reports/` may not import: it renders the values `gathering/` reads from the store (and
the workflows open it), so every output can be drawn without a database."""


def _store_imports(path: Path) -> list[str]:
    return sorted(m for m in _imported(path) if m.startswith(RENDERERS_NEVER_IMPORT))


@pytest.mark.parametrize("path", sorted((ROOT / "reports").rglob("*.py")), ids=_name_of)
def test_the_renderers_never_import_the_store(path: Path) -> None:
    assert _store_imports(path) == [], f"{_name_of(path)} reads the store: move it to gathering/"


def test_a_renderer_reading_the_store_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / PACKAGE
    (fake / "reports" / "viewer").mkdir(parents=True)
    module = fake / "reports" / "viewer" / "_model.py"
    module.write_text(
        "from independence_bench.gathering.transcripts import ItemRecord\n"
        "def f():\n    from ...store.store import Store\n"
        "    from independence_bench.store import standings\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", fake)
    assert _store_imports(module) == [
        "independence_bench.store",
        "independence_bench.store.standings",
        "independence_bench.store.store",
        "independence_bench.store.store.Store",
    ]


FLOORS = {
    "stats": ("core", "bootstrap", "agreement", "analysis"),
    "gathering": (
        "options",
        "standings",
        "details",
        "adaptivity",
        "leaderboard",
        "analyses",
        "extras",
        "suite_report",
        "spend",
        "transcripts",
    ),
    "reports": (
        "format",
        "leaderboard",
        "analyses",
        "spend",
        "markdown",
        "exports",
        "charts",
        "viewer",
    ),
}
"""The modules of the reading layers, in import order: within `stats/`, `gathering/` and
`reports/` too, a module may import the ones before it (and its own private parts), never one
after it."""


def _floor(module: str) -> tuple[str, int] | None:
    """(layer, place) of a module inside `stats/`, `gathering/` or `reports/`; None elsewhere."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in FLOORS:
        return None
    return parts[1], FLOORS[parts[1]].index(parts[2])


def _upward_imports(path: Path) -> list[str]:
    own = _floor(_name_of(path))
    if own is None:
        return []
    return sorted(
        module
        for module in _imported(path)
        if (floor := _floor(module)) is not None and floor[0] == own[0] and floor[1] > own[1]
    )


def test_the_reading_layers_are_the_named_modules() -> None:
    for layer, floors in FLOORS.items():
        entries = (ROOT / layer).iterdir()
        found = {p.stem for p in entries if p.suffix == ".py" or (p / "__init__.py").exists()}
        assert found - {"__init__"} == set(floors), layer


@pytest.mark.parametrize(
    "path",
    [p for layer in FLOORS for p in sorted((ROOT / layer).rglob("*.py"))],
    ids=lambda p: _name_of(p),
)
def test_reading_modules_import_earlier_floors_only(path: Path) -> None:
    assert _upward_imports(path) == [], f"{_name_of(path)} imports a later module of its layer"


def _owner_of_private(module: str) -> str | None:
    """The package whose private part (`_name`, not a dunder) `module` is or is inside."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _private_imports(path: Path) -> list[str]:
    """Private parts (`pkg._part`) of another package that `path` imports."""
    own = _name_of(path)
    return sorted(
        module
        for module in _imported(path)
        if (owner := _owner_of_private(module)) is not None
        and not f"{own}.".startswith(f"{owner}.")
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: _name_of(p))
def test_private_parts_are_used_through_their_package(path: Path) -> None:
    """`reports.viewer._model` is the viewer's own: others import `reports.viewer`."""
    assert _private_imports(path) == [], f"{_name_of(path)} reaches into a package's private parts"


def test_an_upward_or_private_import_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / PACKAGE
    (fake / "reports" / "leaderboard").mkdir(parents=True)
    module = fake / "reports" / "leaderboard" / "_rows.py"
    module.write_text(
        "from independence_bench.reports.format import number\n"
        "from independence_bench.reports.leaderboard._details import details_lines\n"
        "from independence_bench.reports.viewer._model import model_data\n"
        "def f():\n    from ..markdown import render_leaderboard\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", fake)
    assert _upward_imports(module) == [
        "independence_bench.reports.markdown",
        "independence_bench.reports.markdown.render_leaderboard",
        "independence_bench.reports.viewer._model",
        "independence_bench.reports.viewer._model.model_data",
    ]
    assert _private_imports(module) == [
        "independence_bench.reports.viewer._model",
        "independence_bench.reports.viewer._model.model_data",
    ]


@pytest.mark.parametrize(
    "init", sorted(ROOT.rglob("__init__.py")), ids=lambda p: _name_of(p) or PACKAGE
)
def test_every_package_says_what_it_owns(init: Path) -> None:
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 5, f"{_name_of(init)} needs a docstring"
