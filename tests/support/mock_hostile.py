"""The mock server's hostile mode: replies and errors carrying everything a server can send.

`MockConfig.hostile` appends `HOSTILE_TEXT` to every subject reply (content or tool-call
message), to every judge's `reasoning` and to every error message, pads subject replies to
`MockConfig.reply_chars`, and reports usage no client should trust (a `NaN` cost, a token
count beyond SQLite's INTEGER, a negative one). `HOSTILE_TEXT` holds a lone UTF-16 surrogate
(sent as the JSON escape `\\ud800`), NUL, terminal sequences that clear the screen, move the
cursor and set the window title, a C1 CSI, bidi overrides, the line separator, a non-character
and `INVALID_UTF8_MARK`, which `mock_http.render_response` replaces by bytes that are not UTF-8.

`MockConfig.shape` reshapes every chat reply into one of `SHAPES` (JSON nested far deeper than
any parser's recursion, a call written in the text, a multi-megabyte error, a redirect), and
`serve_flood` is a server whose every reply body never ends.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from support.mock_behaviours import MockReply
from support.mock_judgments import JsonObject

INVALID_UTF8_MARK = "\ue000invalid-utf8\ue000"
"""A private-use marker the HTTP framing swaps for `INVALID_UTF8_BYTES` in the raw body."""
INVALID_UTF8_BYTES = b"\xff\xfe\xc3("
HOSTILE_TEXT = (
    " \ud800 \udfff nul:\x00 \x1b[2J\x1b[H\x1b]0;pwned\x07 \x1b[31mred\x1b[0m \x9b2J "
    "\u202etxet desrever\u202c \u2066iso\u2069 \u2028 \uffff \r\b\x7f " + INVALID_UTF8_MARK
)


def hostile_reply(reply: MockReply, *, text: str = HOSTILE_TEXT, reply_chars: int = 0) -> MockReply:
    """`reply` with `text` in its message or error, hostile usage and padding."""
    payload: JsonObject = json.loads(json.dumps(reply.payload))
    error = payload.get("error")
    if isinstance(error, dict):
        error["message"] = f"{error.get('message')}{text}"
        return MockReply(reply.status, payload, reply.headers)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return reply
    message = choices[0]["message"]
    calls = message.get("tool_calls")
    if calls:
        arguments = json.loads(calls[0]["function"]["arguments"])
        arguments["message"] = _hostile(str(arguments.get("message", "")), text, reply_chars)
        calls[0]["function"]["arguments"] = json.dumps(arguments, ensure_ascii=False)
    elif isinstance(message.get("content"), str) and message["content"]:
        message["content"] = _hostile_content(message["content"], text, reply_chars)
    payload["usage"] = {"prompt_tokens": 10**30, "completion_tokens": -5, "cost": float("nan")}
    return MockReply(reply.status, payload, reply.headers)


def _hostile(reply: str, text: str, reply_chars: int) -> str:
    reply += text
    return reply + "x" * max(0, reply_chars - len(reply))


def _hostile_content(content: str, text: str, reply_chars: int) -> str:
    """A judge's JSON keeps parsing (hostile text goes into `reasoning`); prose gets it at
    the end."""
    try:
        judgment: Any = json.loads(content)
    except ValueError:
        return _hostile(content, text, reply_chars)
    if isinstance(judgment, dict) and isinstance(judgment.get("reasoning"), str):
        judgment["reasoning"] += text
        return json.dumps(judgment, ensure_ascii=False)
    return content


DEEP = 5_000
"""Nesting of the deep shapes: far past Python's recursion limit of 1,000."""
SHAPES = (
    "deep_body",
    "deep_arguments",
    "deep_text_call",
    "deep_judge",
    "huge_error",
    "redirect",
    "huge_cost",
)


def shaped_reply(reply: MockReply, shape: str) -> MockReply:
    """`reply` reshaped as `shape` says (one of `SHAPES`)."""
    if shape == "deep_body":
        return MockReply(200, {}, plain="[" * 200_000)
    if shape == "huge_error":
        return MockReply(500, {"error": {"message": "E" * 5_000_000, "code": 500}})
    if shape == "redirect":
        return MockReply(302, {}, (("Location", "/v1/elsewhere"),))
    payload: JsonObject = json.loads(json.dumps(reply.payload))
    if shape == "huge_cost" and reply.status == 200:
        payload["usage"] = {**payload.get("usage", {}), "cost": 1e308}  # two sum to Infinity
        return MockReply(reply.status, payload, reply.headers)
    choices = payload.get("choices")
    if reply.status != 200 or not isinstance(choices, list) or not choices:
        return reply
    message = choices[0]["message"]
    deep = "[" * DEEP + "]" * DEEP
    calls = message.get("tool_calls")
    if shape == "deep_arguments" and calls:
        calls[0]["function"]["arguments"] = f'{{"message": "deep", "x": {deep}}}'
    elif shape == "deep_text_call" and calls:
        del message["tool_calls"]
        message["content"] = f'{{"name": "send_message_to_human", "arguments": {deep}}}'
    elif shape == "deep_judge" and isinstance(message.get("content"), str) and not calls:
        message["content"] = '{"a": ' * DEEP + "1" + "}" * DEEP
    return MockReply(reply.status, payload, reply.headers)


FLOOD_CHUNK = b"[" + b"0," * 32_767
"""64 KiB of a JSON array that never closes."""


async def serve_flood(port: int = 0) -> tuple[asyncio.Server, int, list[int]]:
    """A server whose reply to any request is `HTTP 200` and a body that never ends (no
    `Content-Length`, so nothing tells the client in advance); returns it, its port and a
    one-item list counting the bytes of body it managed to send."""
    sent = [0]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            while True:
                writer.write(FLOOD_CHUNK)
                await writer.drain()
                sent[0] += len(FLOOD_CHUNK)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", port, backlog=4096)
    bound = server.sockets[0].getsockname()[1]
    return server, int(bound), sent
