"""Tools described in the prompt, for a server that refuses the request's `tools` field.

vLLM started without `--enable-auto-tool-choice --tool-call-parser` and Ollama models whose
template has no tool support answer any request that carries `tools` with a 400 naming them
(llama.cpp's `llama-server` without `--jinja` answers a 500, which is no switch to this path).
For such an endpoint the client sends the same conversation with the tools written into the
system message (`data/prompts/tools_in_text.md`), earlier tool calls written as Qwen-style
`<tool_call>` blocks and tool results as user messages in `<tool_response>` tags: the format
`tool_text.py` reads back. The conversation layer then reads the call from the reply text and
records it as a protocol deviation. Pure functions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from independence_bench.clients.protocol import Message

TOOLS_IN_PROMPT = "tools_in_prompt"
"""`Completion.extra` key: set (to `instructions_digest()`) on a reply to tools in the prompt."""


@cache
def _instructions() -> str:
    path = resources.files("independence_bench").joinpath("data", "prompts", "tools_in_text.md")
    return path.read_text("utf-8").strip()


def instructions_digest() -> str:
    """The first 12 hex digits of the instructions' sha256, recorded with each reply to them."""
    return hashlib.sha256(_instructions().encode()).hexdigest()[:12]


def tools_section(tools: Sequence[Mapping[str, Any]]) -> str:
    """The system-message section that describes `tools` and how to call them in text."""
    functions = [dict(tool.get("function") or {}) for tool in tools]
    listed = "\n".join(json.dumps(f, ensure_ascii=False, sort_keys=True) for f in functions)
    return _instructions().replace("{tools}", listed)


def _written_call(call: Mapping[str, Any]) -> str:
    found = call.get("function")
    function: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    raw = function.get("arguments", "{}")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        arguments = raw  # kept as the text it was; the model sees what it wrote
    value = {"name": function.get("name"), "arguments": arguments}
    return f"<tool_call>\n{json.dumps(value, ensure_ascii=False)}\n</tool_call>"


def _as_text(message: Message) -> Message:
    role = message.get("role")
    if role == "assistant" and message.get("tool_calls"):
        calls = [_written_call(c) for c in message["tool_calls"] if isinstance(c, Mapping)]
        spoken = [message["content"]] if isinstance(message.get("content"), str) else []
        return {"role": "assistant", "content": "\n".join([*spoken, *calls])}
    if role == "tool":
        return {"role": "user", "content": f"<tool_response>\n{message.get('content') or ''}\n"
                "</tool_response>"}  # fmt: skip
    return message


def tools_in_text(
    messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
) -> tuple[Message, ...]:
    """`messages` for a server that takes no `tools`: the tools described in the system
    message (one is added when there is none), calls and results written as text, and
    neighbouring messages of one role joined, as templates without tool support expect."""
    section = tools_section(tools)
    converted = [_as_text(m) for m in messages]
    if converted and converted[0].get("role") == "system":
        head = converted[0]
        converted[0] = {
            **head,
            "content": f"{str(head.get('content') or '').rstrip()}\n\n{section}",
        }
    else:
        converted.insert(0, {"role": "system", "content": section})
    joined: list[Message] = []
    for message in converted:
        if joined and joined[-1].get("role") == message.get("role") != "system":
            previous = joined[-1]
            text = f"{previous.get('content') or ''}\n\n{message.get('content') or ''}"
            joined[-1] = {**previous, "content": text}
        else:
            joined.append(message)
    return tuple(joined)
