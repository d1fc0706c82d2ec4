"""Tool calls written as text: reading `<tool_call>{...}</tool_call>` and bare JSON calls back.

Small open models, and servers that do not parse their output (llama-cpp-python's server with a
GGUF's own chat template), write a tool call into the reply's text instead of returning it as a
structured `tool_calls` entry: Qwen's `<tool_call>{"name": ..., "arguments": ...}</tool_call>`
blocks, the same JSON object with the tags dropped, and sometimes all of it HTML-escaped
(`&lt;tool_call&gt;`, `&quot;`). The embedded client reads its model's output with this, and the
conversation layer reads replies of any server with it (recording a protocol deviation).
Pure functions.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection
from typing import Any

from independence_bench.clients.protocol import ToolCall
from independence_bench.text.lossless import json_loads, json_raw_decode

_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_ESCAPED = re.compile(r"&(?:lt|gt|quot|amp|#3[49]|#x2[27]);")
_CALL_OPENING = re.compile(r'\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*')


def parse_tool_calls(
    text: str, tool_names: Collection[str], *, call_id_prefix: str
) -> tuple[str | None, tuple[ToolCall, ...]]:
    """Split a Qwen-style reply into its text and its tool calls, as `(content, calls)`.

    Calls are `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks (a block cut off by
    the token limit still counts). Qwen models often drop the tags and answer with the bare JSON
    object alone; a reply that is nothing but such objects, each naming an offered tool, is read
    as those calls. HTML-escaped text is read unescaped. Anything that does not parse stays in
    the content, unchanged.
    """
    if not tool_names:
        return text, ()
    unescaped = html.unescape(text) if _ESCAPED.search(text) else text
    if unescaped != text:
        content, found = parse_tool_calls(unescaped, tool_names, call_id_prefix=call_id_prefix)
        return (content, found) if found else (text, ())
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _TOOL_CALL_BLOCK.finditer(text):
        try:
            value = json_loads(match.group(1))
        except json.JSONDecodeError:
            continue
        call = _tool_call_from_value(value, f"{call_id_prefix}_{len(calls)}")
        if call is not None:
            kept.append(text[position : match.start()])
            position = match.end()
            calls.append(call)
    if calls:
        kept.append(text[position:])
        return "".join(kept).strip() or None, tuple(calls)
    bare, rest = _leading_bare_calls(text, tool_names, call_id_prefix)
    return (None, bare) if bare and not rest else (text, ())


def read_written_calls(
    text: str, tool_names: Collection[str], *, call_id_prefix: str
) -> tuple[ToolCall, ...]:
    """The tool calls a reply *wrote* in its text, read leniently, for a reply that has no
    structured call: what `parse_tool_calls` finds, else the bare JSON calls at the start of
    the text up to the first that does not parse, else one call cut off after its
    `"arguments":` (its argument text kept raw, for the caller to recover the message from).

    Small models served without a tool-call parser repeat the call, run into `max_tokens`, or
    forget to escape a quote inside the arguments string; the calls before the damage are
    still what they meant to send.
    """
    if not tool_names:
        return ()
    unescaped = html.unescape(text) if _ESCAPED.search(text) else text
    _, calls = parse_tool_calls(unescaped, tool_names, call_id_prefix=call_id_prefix)
    if calls:
        return calls
    leading, rest = _leading_bare_calls(unescaped, tool_names, call_id_prefix)
    if leading:
        return leading
    opened = _CALL_OPENING.match(rest)
    if opened is not None and opened.group(1) in tool_names:
        arguments = rest[opened.end() :]
        if arguments.startswith('"'):  # arguments written as JSON text inside a string
            arguments = _string_prefix(arguments)
        return (ToolCall(f"{call_id_prefix}_0", opened.group(1), arguments),)
    return ()


def _string_prefix(literal: str) -> str:
    """The longest decodable start of a JSON string literal that was cut off or broken."""
    body = literal[1:]
    for end in range(len(body), 0, -1):
        try:
            return str(json.loads('"' + body[:end].rstrip("\\") + '"'))
        except json.JSONDecodeError:
            continue
    return ""


def _leading_bare_calls(
    text: str, tool_names: Collection[str], call_id_prefix: str
) -> tuple[tuple[ToolCall, ...], str]:
    """The bare JSON calls that open `text`, and the text after the last of them."""
    calls: list[ToolCall] = []
    rest = text.strip()
    while rest:
        try:
            value, end = json_raw_decode(rest)
        except json.JSONDecodeError:
            break
        call = _tool_call_from_value(value, f"{call_id_prefix}_{len(calls)}")
        if call is None or call.name not in tool_names:
            break
        calls.append(call)
        rest = rest[end:].lstrip()
    return tuple(calls), rest


def _tool_call_from_value(value: Any, call_id: str) -> ToolCall | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", {})
    # OpenAI carries arguments as JSON text; Qwen writes an object, or sometimes that text itself.
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, name=value["name"], arguments=text)
