"""JSON from a server is read with a depth bound and a size bound; nothing it sends crashes a run.

Each shape of `mock_hostile.SHAPES` once crashed every run of its store with `RecursionError`
(deep bodies, tool-call arguments, calls written in the text, judge verdicts), filled the store
with 5 MB error texts, or turned a POST into a GET (redirects). Against the hostile loopback
server each now ends in a finished run or one line, and a second run of the same store neither
crashes nor asks an answered call again.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.clients.http import ConnectionBudget, HttpFailure, JsonPoster
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.protocol import ClientError
from independence_bench.clients.reply_body import (
    BODY_CAP_BYTES,
    ERROR_TEXT_CHARS,
    cut_error_text,
)
from independence_bench.clients.tool_text import parse_tool_calls, read_written_calls
from independence_bench.text.lossless import JSON_DEPTH_LIMIT, json_loads, json_raw_decode
from support.mock_hostile import DEEP, serve_flood
from support.mock_server import MockConfig, MockServer

DEEP_TEXT = "[" * DEEP + "]" * DEEP


@pytest.mark.parametrize(
    "text",
    ["[" * 200_000, DEEP_TEXT, '{"a":' * DEEP + "1" + "}" * DEEP, "[" * 65 + "]" * 65],
)
def test_json_nested_past_the_bound_is_refused_as_not_json(text: str) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested"):
        json_loads(text)
    with pytest.raises(ValueError, match="nested"):
        json_raw_decode(text)


def test_json_at_the_bound_and_wide_json_still_parse() -> None:
    at_bound = "[" * JSON_DEPTH_LIMIT + "]" * JSON_DEPTH_LIMIT
    assert json_loads(at_bound) is not None
    wide = "[" + ",".join(["[1, {}]"] * 10_000) + "]"  # many brackets, depth 3
    assert len(json_loads(wide)) == 10_000
    assert json_raw_decode('{"a": "[[[[["} tail') == ({"a": "[[[[["}, 14)


def test_a_deep_call_written_in_the_text_stays_text() -> None:
    text = f'{{"name": "send_message_to_human", "arguments": {DEEP_TEXT}}}'
    names = ("send_message_to_human",)
    assert parse_tool_calls(text, names, call_id_prefix="t") == (text, ())
    tagged = f"<tool_call>{text}</tool_call>"
    assert parse_tool_calls(tagged, names, call_id_prefix="t") == (tagged, ())
    assert len(read_written_calls(text, names, call_id_prefix="t")) <= 1


def _run(aib: Any, server: MockServer) -> Any:
    return aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge",
        "--base-url", server.base_url, "--runs", "1", "--scenarios", "direct",
        "--data-dir", "d",
    )  # fmt: skip


@pytest.mark.parametrize("shape", ["deep_arguments", "deep_text_call", "deep_judge"])
def test_deep_json_in_a_reply_neither_crashes_this_run_nor_the_next(
    shape: str, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))  # fail fast
    with MockServer(MockConfig(shape=shape)) as server:
        first = _run(aib, server)
        if shape == "deep_judge":  # the verdict never parses: one line counting them
            assert first.code == 2, first.err
            assert "returned no valid judgment (1 reply failed validation" in first.err
        else:
            assert first.code in (0, 3), first.err
        assert "Traceback" not in first.err and "RecursionError" not in first.out + first.err
        calls = server.seen.request_count
        again = _run(aib, server)
        assert again.code == first.code, again.err
        assert "RecursionError" not in again.out + again.err
        if first.code == 0:
            assert server.seen.request_count == calls, "an answered call was asked again"


def test_a_deep_reply_body_is_a_failed_call_with_one_line(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    with MockServer(MockConfig(shape="deep_body")) as server:
        result = _run(aib, server)
    assert result.code == 3, result.err
    assert "body is not JSON" in result.out + result.err
    assert "Traceback" not in result.err


def test_a_five_megabyte_error_text_is_cut_before_it_is_stored(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    with MockServer(MockConfig(shape="huge_error")) as server:
        result = _run(aib, server)
        failed = aib("runs", "--failed", "--data-dir", "d")
    assert result.code == 3, result.err
    assert Path("d/aib.sqlite3").stat().st_size < 1_000_000
    with closing(sqlite3.connect("d/aib.sqlite3")) as db:
        longest = max(
            len(str(row[0]))
            for row in db.execute("SELECT error FROM items WHERE error IS NOT NULL")
        )
    assert 100 < longest <= ERROR_TEXT_CHARS + 100
    assert failed.code == 0 and len(failed.out) < 100_000 and "EEEE" in failed.out


def test_an_error_message_is_cut_like_a_reply() -> None:
    assert cut_error_text("short") == "short"
    cut = cut_error_text("E" * 50_000)
    assert cut == "E" * ERROR_TEXT_CHARS + f"… [{50_000 - ERROR_TEXT_CHARS:,} characters cut]"


def test_a_redirected_post_is_not_followed_as_a_get(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    with MockServer(MockConfig(shape="redirect")) as server:
        result = _run(aib, server)
        calls = server.seen.request_count
    assert result.code == 3, result.err
    assert "redirects calls to" in result.out + result.err
    assert "set base_url" in result.out + result.err
    assert calls >= 1


def test_a_body_that_never_ends_is_read_no_further_than_its_cap() -> None:
    async def scenario() -> tuple[str, int]:
        server, port, sent = await serve_flood()
        poster = JsonPoster(
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key=None,
            timeout_s=30,
            connections=ConnectionBudget(None),
        )
        try:
            await poster.post("/chat/completions", {"model": "m"})
        except HttpFailure as exc:
            assert not exc.retryable
            return str(exc), sent[0]
        finally:
            await poster.aclose()
            server.close()
        raise AssertionError("an endless body was read whole")

    message, sent = asyncio.run(scenario())
    assert "reply body too long" in message
    assert sent < BODY_CAP_BYTES * 4  # the server was stopped, not drained


def test_a_reply_read_to_its_end_keeps_its_connection_alive() -> None:
    """The body caps close a connection only when a body was left unread."""
    opened = [0]

    async def scenario() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            opened[0] += 1
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                    await reader.readexactly(length)
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        poster = JsonPoster(base_url=f"http://127.0.0.1:{port}/v1", api_key=None, timeout_s=30)
        try:
            for _ in range(5):
                assert (await poster.post("/chat/completions", {})).json() == {}
        finally:
            await poster.aclose()
            server.close()

    asyncio.run(scenario())
    assert opened[0] == 1


def test_an_endless_model_list_is_one_failure_naming_the_cap() -> None:
    async def scenario() -> ClientError:
        server, port, _ = await serve_flood()
        client = OpenAICompatibleClient(
            base_url=f"http://127.0.0.1:{port}/v1", api_key=None, is_openrouter=False
        )
        try:
            await client.list_models()
        except ClientError as exc:
            return exc
        finally:
            await client.aclose()
            server.close()
        raise AssertionError("an endless model list was read whole")

    failure = asyncio.run(scenario())
    assert not failure.retryable and "reply body too long" in str(failure)
