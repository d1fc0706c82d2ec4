"""A request body is the bytes `lossless.json_dumps` spells, whether or not its text holds a
lone surrogate: `json_bytes` only skips the search for one in a body strict UTF-8 takes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from independence_bench.clients.http import JsonPoster
from independence_bench.text.lossless import json_bytes, json_dumps

PAYLOADS: list[Any] = [
    {"model": "m", "messages": [{"role": "user", "content": "plain"}], "temperature": 0.5},
    {"messages": [{"role": "user", "content": 'Grüße 😀 \u2028 \x00 "q" \\'}], "seed": 7},
    {"messages": [{"role": "assistant", "content": "a lone \ud800 and \udcff"}]},
    ["\ud83d\ude00", "\ud83d", None, 1.5, {"k": ["\udfff"]}],
    "",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_body_bytes_are_the_full_json_dumps_spelling(payload: Any) -> None:
    body = json_bytes(payload)
    assert body == json_dumps(payload).encode("utf-8")
    assert json.loads(body) == json.loads(json_dumps(payload))


@pytest.fixture()
async def recorder() -> AsyncIterator[tuple[str, list[bytes]]]:
    bodies: list[bytes] = []

    async def chat(request: web.Request) -> web.Response:
        bodies.append(await request.read())
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/v1", bodies
    await runner.cleanup()


async def test_the_poster_sends_exactly_those_bytes(recorder: tuple[str, list[bytes]]) -> None:
    base_url, bodies = recorder
    poster = JsonPoster(base_url=base_url, api_key=None, timeout_s=10)
    try:
        for payload in PAYLOADS[:3]:
            reply = await poster.post("/chat/completions", payload)
            assert reply.status == 200
    finally:
        await poster.aclose()
    assert bodies == [json_dumps(payload).encode("utf-8") for payload in PAYLOADS[:3]]
