"""`aib` as a new user runs it: in a folder of its own, with no API key and no `AIB_DATA_DIR`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

USER_VARIABLES = ("OPENROUTER_API_KEY", "AIB_API_KEY", "AIB_DATA_DIR")
"""What a developer's shell may set that would change what `aib` does in a test."""


def clear_user_variables(patch: pytest.MonkeyPatch, root: Path) -> None:
    """Work in `root` with none of `USER_VARIABLES` set, until `patch` is undone."""
    patch.chdir(root)
    for name in USER_VARIABLES:
        patch.delenv(name, raising=False)


@contextmanager
def cli_home(root: Path) -> Iterator[None]:
    """`clear_user_variables` for a block: a module-scoped fixture's setup, say."""
    with pytest.MonkeyPatch.context() as patch:
        clear_user_variables(patch, root)
        yield
