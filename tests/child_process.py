"""A child Python process that runs the same copy of the package as the test that starts it.

Without an editable install, or in a mutation run (where the tests import a mutated copy of
`src/`), a bare `python -c ...` would import another copy or none; the child is given the
path of the package this test imported first.
"""

from __future__ import annotations

import os
from pathlib import Path

import independence_bench


def env_with_this_package() -> dict[str, str]:
    """The environment, with the package this test imported first on the child's path."""
    here = str(Path(independence_bench.__file__).resolve().parent.parent)
    paths = (here, os.environ.get("PYTHONPATH", ""))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
