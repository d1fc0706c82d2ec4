"""The endpoint's HTTP path: what each kind of reply becomes, headers sent, proxy chosen, and
how the client adapts its requests to what a server accepts."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from independence_bench.clients.http import proxy_for
from independence_bench.clients.local.gguf_chat import STRING_MAX_LENGTH
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.protocol import ClientError, CompletionRequest, NotJsonReply

Handler = Callable[[dict[str, Any], web.Request], web.Response]
REPLY = {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
REQUEST = CompletionRequest(model="m", messages=({"role": "user", "content": "hello"},))


class Scripted:
    """A one-route server whose answer the test sets; it records bodies and headers."""

    def __init__(self) -> None:
        self.handler: Handler = lambda body, request: web.json_response(REPLY)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""
        self.models_delay_s = 0.0
        self.models: Callable[[web.Request], web.Response] = lambda request: web.json_response(
            {"data": [{"id": "m", "pricing": {"prompt": "0.000001"}}]}
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        return self.handler(body, request)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.headers.append(dict(request.headers))
        if self.models_delay_s:
            await asyncio.sleep(self.models_delay_s)
        return self.models(request)


@pytest.fixture()
async def scripted() -> AsyncIterator[Scripted]:
    server = Scripted()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server._chat)
    app.router.add_get("/v1/models", server._models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    server.base_url = f"http://127.0.0.1:{port}/v1"
    yield server
    await runner.cleanup()


def _client(base_url: str, *, key: str | None = "sk-test-0123456789", timeout: float = 5.0) -> Any:
    return OpenAICompatibleClient(
        base_url=base_url, api_key=key, is_openrouter=False, timeout_s=timeout
    )


async def test_a_reply_is_read_and_the_key_sent_as_bearer(scripted: Scripted) -> None:
    client = _client(scripted.base_url)
    completion = await client.complete(REQUEST)
    await client.aclose()
    assert completion.content == "hi" and completion.finish_reason == "stop"
    assert scripted.headers[0]["Authorization"] == "Bearer sk-test-0123456789"
    assert scripted.bodies[0]["messages"] == [{"role": "user", "content": "hello"}]


async def test_no_key_sends_no_authorization(scripted: Scripted) -> None:
    client = _client(scripted.base_url, key=None)
    await client.complete(REQUEST)
    await client.aclose()
    assert "Authorization" not in scripted.headers[0]


async def test_a_429_keeps_status_message_and_retry_after(scripted: Scripted) -> None:
    scripted.handler = lambda body, request: web.json_response(
        {"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "7"}
    )
    client = _client(scripted.base_url)
    with pytest.raises(ClientError) as caught:
        await client.complete(REQUEST)
    await client.aclose()
    error = caught.value
    assert (str(error), error.status, error.retryable, error.retry_after) == (
        "HTTP 429: slow down",
        429,
        True,
        7.0,
    )


async def test_a_404_is_not_retryable_and_an_echoed_key_is_redacted(scripted: Scripted) -> None:
    scripted.handler = lambda body, request: web.Response(
        text=f"no such model; you sent {request.headers['Authorization']}", status=404
    )
    client = _client(scripted.base_url)
    with pytest.raises(ClientError) as caught:
        await client.complete(REQUEST)
    await client.aclose()
    assert caught.value.status == 404 and not caught.value.retryable
    assert "sk-test-0123456789" not in str(caught.value)


JUDGED = CompletionRequest(model="j", messages=REQUEST.messages, response_schema={"type": "object"})


def _refusing(*refused: str, status: int, message: str) -> Handler:
    def handler(body: dict[str, Any], request: web.Request) -> web.Response:
        kind = body.get("response_format", {}).get("type", "prompt")
        if kind in refused:
            return web.json_response({"error": {"message": message}}, status=status)
        return web.json_response(REPLY)

    return handler


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "json_schema unsupported"),
        # llama-cpp-python's server, word for word (its validation error is an HTTP 500):
        (
            500,
            "1 validation error: ('body', 'response_format', 'type') Input should be "
            "'text' or 'json_object'",
        ),
    ],
)
async def test_json_schema_refused_then_json_object_is_sent_and_remembered(
    scripted: Scripted, status: int, message: str
) -> None:
    scripted.handler = _refusing("json_schema", status=status, message=message)
    client = _client(scripted.base_url)
    first = await client.complete(JUDGED)
    second = await client.complete(JUDGED)
    await client.aclose()
    assert first.content == second.content == "hi"
    kinds = [b["response_format"]["type"] for b in scripted.bodies]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert scripted.bodies[1]["response_format"]["schema"] == {"type": "object"}


async def test_json_object_carries_a_schema_llamacpp_can_build_a_grammar_from(
    scripted: Scripted,
) -> None:
    # Found on llama-cpp-python's server: a reasoning field of maxLength 2000 gives a grammar
    # it cannot parse, and the server process dies.
    scripted.handler = _refusing("json_schema", status=500, message="response_format")
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": 2000},
            "score": {"type": "integer", "minimum": 0, "maximum": 10},
        },
    }
    client = _client(scripted.base_url)
    await client.complete(
        CompletionRequest(model="j", messages=REQUEST.messages, response_schema=schema)
    )
    await client.aclose()
    sent = scripted.bodies[1]["response_format"]["schema"]["properties"]
    assert sent["reasoning"]["maxLength"] == STRING_MAX_LENGTH
    assert sent["score"]["enum"] == list(range(11))


async def test_a_server_refusing_both_formats_gets_the_schema_in_the_prompt_only(
    scripted: Scripted,
) -> None:
    scripted.handler = _refusing(
        "json_schema", "json_object", status=422, message="response_format is not supported"
    )
    client = _client(scripted.base_url)
    assert (await client.complete(JUDGED)).content == "hi"
    await client.complete(JUDGED)
    await client.aclose()
    kinds = [b.get("response_format", {}).get("type", "prompt") for b in scripted.bodies]
    assert kinds == ["json_schema", "json_object", "prompt", "prompt"]
    assert client.response_format == "prompt"


async def test_a_500_that_does_not_name_the_format_is_a_plain_retryable_error(
    scripted: Scripted,
) -> None:
    scripted.handler = _refusing("json_schema", status=500, message="out of memory")
    client = _client(scripted.base_url)
    with pytest.raises(ClientError, match="out of memory") as caught:
        await client.complete(JUDGED)
    await client.aclose()
    assert caught.value.retryable and client.response_format == "json_schema"
    assert len(scripted.bodies) == 1


async def test_a_tool_call_message_goes_out_without_null_content(scripted: Scripted) -> None:
    call = {"id": "abc123def", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = (
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "abc123def", "content": "ok"},
    )
    client = _client(scripted.base_url)
    await client.complete(CompletionRequest(model="m", messages=messages))
    await client.aclose()
    sent = scripted.bodies[0]["messages"]
    assert sent[1] == {"role": "assistant", "tool_calls": [call]}
    assert sent[0] == messages[0] and sent[2] == messages[2]


async def test_the_model_list_comes_over_the_same_session_with_the_key(
    scripted: Scripted,
) -> None:
    client = _client(scripted.base_url)
    entries = await client.list_models()
    await client.aclose()
    assert entries == [{"id": "m", "pricing": {"prompt": "0.000001"}}]
    assert scripted.headers[0]["Authorization"] == "Bearer sk-test-0123456789"


@pytest.mark.parametrize(
    ("status", "content_type", "text", "error", "fragment"),
    [
        (
            401,
            "application/json",
            '{"error": {"message": "bad key sk-test-0123456789"}}',
            ClientError,
            "HTTP 401: bad key [redacted]",
        ),
        (200, "text/html", "<html>login</html>", NotJsonReply, "non-JSON"),
        (403, "text/html", "<html>denied</html>", NotJsonReply, "HTTP 403"),
    ],
)
async def test_a_model_list_failure_keeps_its_meaning(
    scripted: Scripted, status: int, content_type: str, text: str, error: type, fragment: str
) -> None:
    scripted.models = lambda request: web.Response(
        text=text, status=status, content_type=content_type
    )
    client = _client(scripted.base_url)
    with pytest.raises(error) as caught:
        await client.list_models()
    await client.aclose()
    assert fragment in str(caught.value) and not caught.value.retryable
    assert caught.value.status == status


async def test_a_model_list_with_no_server_is_no_answer() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = _client(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ClientError, match="no answer") as caught:
        await client.list_models()
    await client.aclose()
    assert caught.value.status is None


async def test_a_plain_text_200_is_a_retryable_hiccup_not_a_web_page(scripted: Scripted) -> None:
    scripted.handler = lambda body, request: web.Response(
        text="upstream busy, try again", content_type="text/plain"
    )
    client = _client(scripted.base_url)
    with pytest.raises(ClientError, match="malformed") as caught:
        await client.complete(REQUEST)
    await client.aclose()
    assert caught.value.retryable and not isinstance(caught.value, NotJsonReply)


async def test_a_web_page_is_not_json(scripted: Scripted) -> None:
    scripted.handler = lambda body, request: web.Response(
        text="<html>login</html>", content_type="text/html"
    )
    client = _client(scripted.base_url)
    with pytest.raises(NotJsonReply):
        await client.complete(REQUEST)
    await client.aclose()


async def test_broken_json_is_a_retryable_malformed_reply(scripted: Scripted) -> None:
    scripted.handler = lambda body, request: web.Response(
        text='{"choices": [', content_type="application/json"
    )
    client = _client(scripted.base_url)
    with pytest.raises(ClientError, match="malformed") as caught:
        await client.complete(REQUEST)
    await client.aclose()
    assert caught.value.retryable


async def test_no_server_and_a_slow_server_are_retryable_without_status() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = _client(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ClientError, match="connection failed") as refused:
        await client.complete(REQUEST)
    await client.aclose()
    assert refused.value.retryable and refused.value.status is None

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = _client(f"http://127.0.0.1:{port}/v1", timeout=0.2)
    with pytest.raises(ClientError, match="timed out") as slow:
        await client.complete(REQUEST)
    await client.aclose()
    server.close()
    assert slow.value.retryable and slow.value.status is None


def test_the_proxy_comes_from_the_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://openrouter.ai/api/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert proxy_for("https://openrouter.ai/api/v1") == "http://proxy.internal:3128"
    assert proxy_for("http://127.0.0.1:8000/v1") is None


async def test_a_busy_server_gets_a_calls_timeout_to_list_its_models(scripted: Scripted) -> None:
    # llama-cpp-python's server answers GET /models only after the generation it is busy with.
    scripted.models_delay_s = 0.5
    patient = _client(scripted.base_url, timeout=5.0)
    hasty = _client(scripted.base_url, timeout=0.2)
    assert await patient.list_models() == [{"id": "m", "pricing": {"prompt": "0.000001"}}]
    with pytest.raises(ClientError, match="no answer"):
        await hasty.list_models()
    await patient.aclose()
    await hasty.aclose()


async def test_a_plain_text_200_on_the_model_list_is_asked_again(scripted: Scripted) -> None:
    answers = iter(
        [
            web.Response(text="upstream busy, try again", content_type="text/plain"),
            web.json_response({"data": [{"id": "m"}, {"id": "n"}]}),
        ]
    )
    scripted.models = lambda request: next(answers)
    client = _client(scripted.base_url)
    entries = await client.list_models()
    await client.aclose()
    assert [e["id"] for e in entries] == ["m", "n"]
    assert len(scripted.headers) == 2


async def test_a_model_list_that_stays_plain_text_is_a_retryable_error_not_a_web_page(
    scripted: Scripted,
) -> None:
    scripted.models = lambda request: web.Response(text="busy", content_type="text/plain")
    client = _client(scripted.base_url)
    with pytest.raises(ClientError, match="non-JSON body after 3 attempts") as caught:
        await client.list_models()
    await client.aclose()
    assert caught.value.retryable and not isinstance(caught.value, NotJsonReply)
    assert caught.value.status == 200 and len(scripted.headers) == 3
