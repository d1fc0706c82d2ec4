"""What a user's files, the disk or a damaged store hold ends in one line, never a traceback.

A `.env` line with no `=`, a 10 MB models.yaml, a key with a control character, an
out-of-range seed, a full disk and a damaged store each stop the command with exit 2 and one
line that names the problem and the fix (and never quotes the key).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from independence_bench.store import store as store_module
from support.mock_server import MockServer


def _one_line(result: Any, *words: str) -> None:
    assert result.code == 2, result.out + result.err
    lines = [line for line in result.err.splitlines() if not line.startswith("progress:")]
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    for word in words:
        assert word in lines[0], lines[0]


def _run(aib: Any, server: MockServer, *extra: str) -> Any:
    return aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge",
        "--base-url", server.base_url, "--runs", "1", "--scenarios", "direct",
        "--data-dir", "d", *extra,
    )  # fmt: skip


def test_a_dotenv_line_without_an_equals_sign_is_named_not_echoed(aib: Any) -> None:
    Path(".env").write_text("AIB_DATA_DIR=x\nsk-or-v1-PASTEDALONE\n", encoding="utf-8")
    result = aib("runs")
    _one_line(result, ".env line 2 is not NAME=value")
    assert "PASTEDALONE" not in result.out + result.err


def test_a_huge_models_yaml_is_refused_by_its_size(aib: Any) -> None:
    Path("models.yaml").write_text("models:\n" + "  - id: m\n" * 1_000_000, encoding="utf-8")
    _one_line(aib("run", "--config", "models.yaml"), "bytes, more than a models.yaml needs")


@pytest.mark.parametrize("seed", ["-1", "9223372036854775808"])
def test_a_seed_out_of_range_in_models_yaml_is_one_line(seed: str, aib: Any) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: m\n    base_url: http://127.0.0.1:9/v1\n    seed: {seed}\n", "utf-8"
    )
    _one_line(aib("run", "--config", "models.yaml"), "seed")


@pytest.mark.parametrize("key", ["sk-good\nPASTED", "sk-\x1b[2Jbad", "sk-ключ-key"])
def test_a_key_with_a_control_character_is_one_line_before_any_call(
    key: str, aib: Any, server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIB_API_KEY", key)
    result = _run(aib, server)
    _one_line(result, "the API key for", "copy the key again")
    assert "PASTED" not in result.err and "ключ" not in result.err
    assert server.seen.request_count == 0


def test_a_full_disk_is_one_line_and_the_run_resumes(
    aib: Any, server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object, **__: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patched:  # every completion write, the spill store's too
        patched.setattr(store_module, "write_completion", full)
        result = _run(aib, server)
        _one_line(result, "the disk is full", "must be paid again", "run the command again")
    assert _run(aib, server).code == 0


def test_a_damaged_store_is_one_line(aib: Any, server: MockServer) -> None:
    assert _run(aib, server).code == 0
    path = Path("d/aib.sqlite3")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page, len(data) - page, page):  # every page but the header's
        data[start : start + 64] = b"\xa5" * 64
    path.write_bytes(bytes(data))
    for command in (("leaderboard",), ("runs",)):
        _one_line(aib(*command, "--data-dir", "d"), "the store")


def test_a_judge_that_never_validates_is_counted_not_called_missing(
    aib: Any, server: MockServer
) -> None:
    run = aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge-nonsense",
        "--base-url", server.base_url, "--runs", "1", "--scenarios", "direct,psych",
        "--data-dir", "d",
    )  # fmt: skip
    _one_line(run, "returned no valid judgment (2 replies failed validation")
    board = aib("leaderboard", "--data-dir", "d", "--judge", "scripted-judge-nonsense")
    _one_line(board, "all 2 judgments by scripted-judge-nonsense are stored unscored")
