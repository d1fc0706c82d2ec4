"""The mock server's hostile mode: replies and errors carrying everything a server can send.

`MockConfig.hostile` appends `HOSTILE_TEXT` to every subject reply (content or tool-call
message), to every judge's `reasoning` and to every error message, pads subject replies to
`MockConfig.reply_chars`, and reports usage no client should trust (a `NaN` cost, a token
count beyond SQLite's INTEGER, a negative one). `HOSTILE_TEXT` holds a lone UTF-16 surrogate
(sent as the JSON escape `\\ud800`), NUL, terminal sequences that clear the screen, move the
cursor and set the window title, a C1 CSI, bidi overrides, the line separator, a non-character
and `INVALID_UTF8_MARK`, which `mock_http.render_response` replaces by bytes that are not UTF-8.
"""

from __future__ import annotations

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
