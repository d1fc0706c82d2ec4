"""In-band errors in every shape (`clients/replies.py: inband_error`): any non-null `error`, at
the top or in a choice, of any type, and any `finish_reason` that reads `error` in any case, is
an error on `aib run`, retried and never stored, judged or scored. The documented shapes are
tested in `test_openrouter.py`; these are the ones a proxy or another server may send
(`mock_openrouter.OFF_SPEC_INBAND`)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.openrouter import BASE_URL_ENV, FREE_RPM_ENV, KEY_ALIAS_ENV
from independence_bench.clients.replies import inband_error
from support.mock_openrouter import (
    CUT_REPLY,
    OFF_SPEC_INBAND,
    MockOpenRouter,
    OpenRouterScript,
    off_spec_inband,
)
from support.quick_retry import shorten_backoff

SUBJECT = "acme/scripted-firm"
JUDGE = "acme/scripted-judge"
QUICK = ("--scenarios", "direct", "--runs", "1", "--data-dir", "d")


def _rows(sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(Path("d") / "aib.sqlite3")) as db:
        return db.execute(sql).fetchall()


@pytest.mark.parametrize("shape", OFF_SPEC_INBAND)
def test_every_off_spec_shape_is_an_error(shape: str) -> None:
    error = inband_error(off_spec_inband(shape, {}, "Alpha"))
    assert error is not None and error.retryable
    assert str(error).startswith("in-band error: ")


@pytest.mark.parametrize(
    "value", ["", "text", {}, [], [1, 2], 0, False, {"message": None}, {"code": "x"}]
)
@pytest.mark.parametrize("where", ["top", "choice", "second choice"])
def test_any_non_null_error_anywhere_is_an_error(value: Any, where: str) -> None:
    ok = {"message": {"content": "fine"}, "finish_reason": "stop"}
    body: dict[str, Any] = {"choices": [dict(ok), dict(ok)]}
    if where == "top":
        body["error"] = value
    else:
        body["choices"][0 if where == "choice" else 1]["error"] = value
    assert inband_error(body) is not None


@pytest.mark.parametrize("finish", ["error", "ERROR", "Error", " error "])
def test_a_finish_reason_of_error_in_any_case_is_an_error(finish: str) -> None:
    body = {"choices": [{"message": {"content": "cut"}, "finish_reason": finish}]}
    assert inband_error(body) is not None


@pytest.mark.parametrize("finish", ["stop", "length", "tool_calls", None, 3, "errors"])
def test_a_clean_reply_carries_no_error(finish: Any) -> None:
    body = {"choices": [{"message": {"content": "fine"}, "finish_reason": finish}], "error": None}
    assert inband_error(body) is None


def test_a_text_error_is_its_message() -> None:
    error = inband_error({"error": "upstream connection reset", "provider": "Alpha"})
    assert str(error) == "in-band error: upstream connection reset (provider Alpha)"


@pytest.mark.parametrize("judge", [False, True], ids=["subject", "judge"])
@pytest.mark.parametrize("shape", OFF_SPEC_INBAND)
def test_aib_run_retries_a_cut_reply_and_never_stores_or_judges_it(
    aib: Any, monkeypatch: pytest.MonkeyPatch, shape: str, judge: bool
) -> None:
    shorten_backoff(monkeypatch)
    script = OpenRouterScript(inband_errors=1, inband_shape=shape, inband_judge=judge)
    with MockOpenRouter(script) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(KEY_ALIAS_ENV, "sk-or-test")
        monkeypatch.setenv(FREE_RPM_ENV, "60000")
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        model = "scripted-judge" if judge else "scripted-firm"
        assert len([b for b in server.seen.requests if b.get("model") == model]) == 2
    assert not any(CUT_REPLY in str(text) for (text,) in _rows("SELECT body FROM texts"))
    assert _rows("SELECT status, attempts FROM judgments") == [("scored", 1)]
