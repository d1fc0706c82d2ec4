"""`aib` as a new user runs it: in a folder of its own, with no API key and no `AIB_DATA_DIR`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from independence_bench.cli.options import DATA_DIR_ENV
from independence_bench.clients.endpoints import GENERIC_KEY_ENV, OPENROUTER_KEY_ENV
from independence_bench.clients.openrouter import BASE_URL_ENV, KEY_ALIAS_ENV

USER_VARIABLES = (OPENROUTER_KEY_ENV, KEY_ALIAS_ENV, BASE_URL_ENV, GENERIC_KEY_ENV, DATA_DIR_ENV)
"""What a developer's shell may set that would change what `aib` does in a test."""


def environment_without_user_variables() -> dict[str, str]:
    """This process's environment less `USER_VARIABLES`, for a child process."""
    return {k: v for k, v in os.environ.items() if k not in USER_VARIABLES}


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
