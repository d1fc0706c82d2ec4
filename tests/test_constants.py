"""One home per constant: a public constant of the layers that turn judgments into what users
read (suites, scoring, stats, reports, legacy, workflows) is assigned in one module; every
other module imports it. `PRESSURE_METRICS` was once declared in two report modules and the
report's experiment order beside `suites.kinds`' own."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import independence_bench

ROOT = Path(independence_bench.__file__).parent
LAYERS = ("suites", "scoring", "stats", "reports", "legacy", "workflows")


def _constants(path: Path) -> set[str]:
    """Names of the module-level UPPER_CASE assignments of `path`."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
    return names


def declared_twice(root: Path) -> dict[str, list[str]]:
    homes: dict[str, list[str]] = defaultdict(list)
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for name in _constants(path):
                homes[name].append(str(path.relative_to(root)))
    return {name: paths for name, paths in homes.items() if len(paths) > 1}


def test_each_constant_has_one_home() -> None:
    assert declared_twice(ROOT) == {}


def test_a_second_declaration_is_found(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "reports" / "report").mkdir(parents=True)
    (tmp_path / "suites" / "kinds.py").write_text('PRESSURE_METRICS = ("resistance",)\n')
    (tmp_path / "reports" / "report" / "_gather.py").write_text(
        'PRESSURE_METRICS: tuple[str, ...] = ("resistance",)\n_PRIVATE = 1\n'
    )
    assert declared_twice(tmp_path) == {
        "PRESSURE_METRICS": ["suites/kinds.py", "reports/report/_gather.py"]
    }


NUMBER_FORMATS = {"_round", "_num", "_interval", "rounded", "number", "interval_text"}
"""The names the number format once had in four report modules; `reports/format.py` owns it."""


def number_formats(root: Path) -> list[str]:
    """Modules outside `reports/format.py` that define one of `NUMBER_FORMATS`."""
    found = []
    for path in sorted((root / "reports").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        if defined & NUMBER_FORMATS and path != root / "reports" / "format.py":
            found.append(str(path.relative_to(root)))
    return found


def test_numbers_are_rounded_and_written_in_one_module() -> None:
    assert number_formats(ROOT) == []
