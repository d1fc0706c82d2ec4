"""How llama-cpp-python's OpenAI-compatible server differs from OpenAI's API, for the mock server.

Measured on `python -m llama_cpp.server` (llama-cpp-python 0.3, the `server` extra) serving the
embedded Qwen2.5-Coder GGUF with its own chat template: its request validation (pydantic) answers
HTTP 500 to a message whose `content` is `null` and to `response_format: json_schema` (it takes
`text` and `json_object`, the latter with a `schema`), and it never returns structured
`tool_calls`: the model's call comes back as reply text. The mock writes that text as Qwen's
`<tool_call>` block, HTML-escaped, the hardest form the client has to read.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from support.mock_behaviours import MockReply, error_reply

NULL_CONTENT_ERROR = (
    "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', {index}, "
    "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid "
    "string', 'input': None}"
)
JSON_SCHEMA_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def llamacpp_refusal(body: Mapping[str, Any]) -> MockReply | None:
    """The HTTP 500 that llama-cpp-python's request validation gives `body`, or None."""
    messages = body.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and "content" in message and message["content"] is None:
            return error_reply(500, NULL_CONTENT_ERROR.format(index=index), "server_error")
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") not in (
        "text",
        "json_object",
    ):
        return error_reply(500, JSON_SCHEMA_ERROR, "server_error")
    return None


def tool_calls_as_text(reply: MockReply) -> MockReply:
    """`reply` with its structured tool calls written into the content, HTML-escaped."""
    choices = reply.payload.get("choices")
    if reply.status != 200 or not isinstance(choices, list) or not choices:
        return reply
    message: dict[str, Any] = dict(choices[0].get("message") or {})
    calls = message.pop("tool_calls", None)
    if not calls:
        return reply
    blocks = []
    for call in calls:
        function = call.get("function") or {}
        value = {"name": function.get("name"), "arguments": json.loads(function["arguments"])}
        blocks.append(f"<tool_call>\n{json.dumps(value, ensure_ascii=False)}\n</tool_call>")
    message["content"] = html.escape("\n".join(blocks))
    choice = {**choices[0], "message": message, "finish_reason": "stop"}
    return MockReply(reply.status, {**reply.payload, "choices": [choice]}, reply.headers)
