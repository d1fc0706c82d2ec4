"""Shared fixtures: a scripted OpenAI-compatible server on 127.0.0.1 and a CLI runner."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from independence_bench.cli.main import main
from support.child_process import read_only_mounts_problem
from support.cli_home import clear_user_variables
from support.mock_server import MockConfig, MockServer


@pytest.fixture(scope="session")
def read_only_media(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skips the test where a folder cannot be made read-only to root (`child_process.py`)."""
    problem = read_only_mounts_problem(tmp_path_factory.mktemp("probe"))
    if problem is not None:
        pytest.skip(problem)


@pytest.fixture()
def server() -> Iterator[MockServer]:
    with MockServer(MockConfig()) as running:
        yield running


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


@pytest.fixture()
def aib(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Run the `aib` CLI in-process in an empty working directory with no API keys."""
    clear_user_variables(monkeypatch, tmp_path)

    def run(*args: str) -> CliResult:
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
