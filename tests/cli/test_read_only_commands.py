"""The commands that only read the store open it read-only and change nothing under the data
dir; a missing store is one line; and nothing they print carries a raw control character.

Read-only here means: with the data dir and the store file read-only (chmod), each command
works, and every file under the data dir keeps its bytes and its mtime, with no file added
(not even a WAL or shared-memory file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.mock_server import MockConfig, MockServer
from test_hostile import CONTROL, LABEL

QUICK = ("--scenarios", "direct", "--runs", "1")


def _readers(base_url: str) -> list[tuple[str, ...]]:
    """Every store-reading command, as a user would type it (outputs go outside the data dir)."""
    return [
        ("leaderboard",),
        ("leaderboard", "--json"),
        ("runs",),
        ("runs", "--failed"),
        ("judges",),
        ("judges", "--json"),
        ("items",),
        ("items", "--json"),
        ("compare",),
        ("report", "--out", "rep", "--no-charts", "--resamples", "100"),
        ("view", "--out", "viewer", "--resamples", "100"),
        (
            "estimate",
            "--models",
            "scripted-firm",
            "--judge",
            "scripted-judge",
            "--base-url",
            base_url,
            *QUICK,
        ),
    ]


def _texts(value: Any) -> set[str]:
    """Every string in a JSON document, keys included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value) | {t for v in value.values() for t in _texts(v)}
    if isinstance(value, list):
        return {t for v in value for t in _texts(v)}
    return set()


def _state(data: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(data.iterdir())}


@pytest.fixture()
def stored(server: MockServer, aib: Any) -> Iterator[Path]:
    models = "scripted-firm,scripted-caving"
    judge = ("--judge", "scripted-judge", "--base-url", server.base_url)
    run = aib("run", "--models", models, *judge, *QUICK, "--data-dir", "d")
    assert run.code == 0, run.err
    data = Path("d").resolve()
    store = data / "aib.sqlite3"
    os.chmod(store, 0o444)
    os.chmod(data, 0o555)
    try:
        yield data
    finally:
        os.chmod(data, 0o755)
        os.chmod(store, 0o644)


def test_every_reader_works_on_a_read_only_store_and_changes_nothing(
    stored: Path, server: MockServer, aib: Any
) -> None:
    before = _state(stored)
    assert list(before) == ["aib.sqlite3"]
    for command in _readers(server.base_url):
        result = aib(*command, "--data-dir", str(stored))
        assert result.code == 0, (command, result.err)
        assert _state(stored) == before, command
    assert Path("rep/LEADERBOARD.md").is_file() and Path("viewer/index.html").is_file()


def test_a_missing_store_is_one_line_and_no_file_is_made(server: MockServer, aib: Any) -> None:
    for command in _readers(server.base_url):
        if command[0] == "estimate":
            continue  # estimates a first run: a missing store is nothing done yet
        result = aib(*command, "--data-dir", "nowhere")
        assert result.code == 2, (command, result.err)
        assert result.err.strip().splitlines() == [
            "aib: error: no store at nowhere/aib.sqlite3; run 'aib run' first or point "
            "--data-dir at a store"
        ], command
        assert not Path("nowhere").exists(), command


def test_option_conflicts_are_reported_before_the_store_is_read(aib: Any) -> None:
    Path("empty").mkdir()
    from independence_bench.store.store import Store

    Store(Path("empty")).close()
    for command in ("leaderboard", "items", "compare", "configs"):
        result = aib(command, "--judge", "a", "--judges", "b", "--data-dir", "empty")
        assert result.code == 2, (command, result.err)
        assert "give either --judge or --judges, not both" in result.err, result.err
        assert "holds no runs" not in result.err


def test_no_reader_prints_a_raw_control_character(aib: Any) -> None:
    with MockServer(MockConfig(hostile=True)) as hostile:
        Path("models.yaml").write_text(
            json.dumps(
                {
                    "models": [
                        {"id": "scripted-firm", "label": LABEL},
                        {"id": "scripted-caving", "label": LABEL + "2"},
                    ],
                    "judge": {"id": "scripted-judge"},
                }
            ),
            encoding="utf-8",
        )
        url = ("--base-url", hostile.base_url)
        run = aib("run", "--config", "models.yaml", *url, *QUICK, "--data-dir", "d")
        assert run.code == 0, run.err
        commands = [*_readers(hostile.base_url), ("compare", LABEL, LABEL + "2", "--json")]
        for command in commands:
            result = aib(*command, "--data-dir", "d")
            assert result.code == 0, (command, result.err)
            for where, text in (("stdout", result.out), ("stderr", result.err)):
                found = CONTROL.search(text)
                assert found is None, f"{found.group()!r} reached the {where} of {command}"
            if "--json" in command:
                data = json.loads(result.out)  # still valid JSON, labels exact
                if command[0] in ("leaderboard", "compare"):
                    assert LABEL in _texts(data), command
        shown = aib("leaderboard", "--data-dir", "d").out
        assert "evil\\x1b[2J" in shown and "\\u202e" in shown
