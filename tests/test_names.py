"""Each public name defined at the top of a package module names one thing.

Two modules that each define `completion_of` (one read a server's reply, the other Inspect's
`ModelOutput`) make a reader guess which one a call means; a name defined twice is renamed for
what it does. Read from the source with `ast`: functions, classes and assigned names
(constants, type aliases) at module level; names starting with `_` are private to their module.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import independence_bench

ROOT = Path(independence_bench.__file__).parent


def _public_names(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def defined_twice(root: Path) -> dict[str, list[str]]:
    """Each public top-level name defined in more than one module below `root`, with them."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for name in dict.fromkeys(_public_names(path.read_text(encoding="utf-8"))):
            where[name].append(path.relative_to(root).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_each_public_name_names_one_thing() -> None:
    assert defined_twice(ROOT) == {}


def test_a_name_defined_in_two_modules_is_found(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.py").write_text(
        "def completion_of(x): ...\nLIMIT = 1\n_private = 2\n", encoding="utf-8"
    )
    (tmp_path / "two.py").write_text(
        "class completion_of: ...\n_private = 3\nLIMIT: int = 2\n", encoding="utf-8"
    )
    (tmp_path / "three.py").write_text("def completion_of(x): ...\n", encoding="utf-8")
    assert defined_twice(tmp_path) == {
        "completion_of": ["a/one.py", "three.py", "two.py"],
        "LIMIT": ["a/one.py", "two.py"],
    }
