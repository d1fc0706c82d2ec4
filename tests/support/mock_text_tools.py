"""The scripted model behind an emulated server, when the tools came in the prompt.

A client whose server refused `tools` describes them in the system message and writes earlier
calls and results as text (`clients/tool_prompt.py`). A real model follows that description
and writes its call as a `<tool_call>` block. The scripted models only understand structured
requests, so `prompt_tools_body` reads such a request back into the tool_role body it stands
for; the emulator then writes the scripted call back as text (`mock_emulator.calls_written`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from independence_bench.clients.tool_text import parse_tool_calls
from support.mock_behaviours import SEND_TOOL_NAME

_RESPONSE = re.compile(r"^\s*<tool_response>\s*(.*?)\s*</tool_response>\s*$", re.DOTALL)
_SEND_TOOL = {
    "type": "function",
    "function": {
        "name": SEND_TOOL_NAME,
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    },
}


def _described(messages: list[Any]) -> bool:
    system = messages[0] if messages and isinstance(messages[0], Mapping) else {}
    text = system.get("content") if system.get("role") == "system" else None
    return isinstance(text, str) and "<tool_call>" in text and f'"{SEND_TOOL_NAME}"' in text


def _call_id(index: int) -> str:
    return hashlib.sha256(f"text-call-{index}".encode()).hexdigest()[:9]


def prompt_tools_body(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool_role request a tools-in-the-prompt request stands for; None for any other."""
    messages = body.get("messages")
    if body.get("tools") or not isinstance(messages, list) or not _described(messages):
        return None
    rebuilt: list[dict[str, Any]] = []
    last_id = ""
    for message in messages:
        if not isinstance(message, Mapping):
            return None
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "assistant":
            rest, calls = parse_tool_calls(text, (SEND_TOOL_NAME,), call_id_prefix="t")
            if calls:
                last_id = _call_id(len(rebuilt))
                wire = [
                    {"id": last_id, "type": "function",
                     "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls[:1]
                ]  # fmt: skip
                rebuilt.append({"role": "assistant", "content": rest, "tool_calls": wire})
                continue
        if role == "user" and last_id and (found := _RESPONSE.match(text)):
            rebuilt.append({"role": "tool", "tool_call_id": last_id, "content": found.group(1)})
            continue
        rebuilt.append(dict(message))
    return {**body, "messages": rebuilt, "tools": [_SEND_TOOL]}
