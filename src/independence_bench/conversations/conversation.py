"""Conversations: the exact message lists a scenario sends, in either delivery mode.

`user_role` sends the human's words as `user` messages. `tool_role` gives the model one tool,
`send_message_to_human(message)`: the conversation opens with a short user kick-off and a
scripted assistant greeting (a tool call), each human message then arrives as the `tool` result
of the previous call, and earlier model turns are replayed as assistant tool calls. Tool-call
ids are deterministic per conversation and exactly 9 alphanumeric characters, because some
providers reject any other shape. No two consecutive messages ever share a role.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from independence_bench.clients.protocol import Completion, Message, ToolCall
from independence_bench.clients.tool_prompt import TOOLS_IN_PROMPT
from independence_bench.clients.tool_text import read_written_calls
from independence_bench.suites.delivery import DeliveryMode
from independence_bench.suites.suite import DeliveryText
from independence_bench.text.lossless import json_loads

TOOL_NAME = "send_message_to_human"
PLAIN_CONTENT = "plain_content"
"""Deviation: a `tool_role` model answered in plain text instead of calling the tool."""
TEXT_TOOL_CALL = "text_tool_call"
"""Deviation: the tool call came back written as text, not as a structured `tool_calls` entry
(small models, and servers that do not parse their model's output); the message is read from it."""


def tool_call_id(conversation_key: str, index: int) -> str:
    """The id of the `index`-th tool call in a conversation: 9 lowercase hex characters."""
    digest = hashlib.sha256(f"{conversation_key}#{index}".encode()).hexdigest()
    return digest[:9]


def tool_definition(delivery: DeliveryText) -> dict[str, Any]:
    """The one tool offered in `tool_role` mode, in OpenAI function-tool form."""
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": delivery.tool_description,
            "parameters": {
                "type": "object",
                "properties": {
                    "message": {"type": "string", "description": delivery.message_description}
                },
                "required": ["message"],
            },
        },
    }


def system_prompt(variant_prompt: str, delivery: DeliveryText, mode: DeliveryMode) -> str:
    if mode == "tool_role":
        return f"{variant_prompt.rstrip()}\n\n{delivery.tool_role_instructions.strip()}"
    return variant_prompt


def _tool_call_message(call_id: str, text: str) -> dict[str, Any]:
    arguments = json.dumps({"message": text}, ensure_ascii=False)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": TOOL_NAME, "arguments": arguments},
            }
        ],
    }


def build_messages(
    *,
    system: str,
    delivery: DeliveryText,
    mode: DeliveryMode,
    human_turns: Sequence[str],
    replies: Sequence[str],
    conversation_key: str,
    reasoning: Sequence[Sequence[Mapping[str, Any]]] = (),
) -> tuple[Message, ...]:
    """Messages that ask the model to answer `human_turns[len(replies)]`.

    `replies` are the model's earlier answers (as text), one per earlier human turn;
    `reasoning[i]`, when given and not empty, is reply i's `reasoning_details`, passed back
    unmodified on its assistant message as OpenRouter documents (only OpenRouter is sent it).
    """
    if len(replies) >= len(human_turns):
        raise ValueError("every human turn already has a reply")
    messages: list[Message] = [{"role": "system", "content": system}]
    if mode == "user_role":
        for index, human in enumerate(human_turns[: len(replies) + 1]):
            messages.append({"role": "user", "content": human})
            if index < len(replies):
                reply = {"role": "assistant", "content": replies[index]}
                messages.append(_with_reasoning(reply, reasoning, index))
        return tuple(messages)

    messages.append({"role": "user", "content": delivery.kickoff})
    spoken = [delivery.greeting, *replies]
    for index, human in enumerate(human_turns[: len(replies) + 1]):
        call_id = tool_call_id(conversation_key, index)
        # spoken[0] is the scripted greeting; the model's reply i is spoken[i + 1]
        call = _tool_call_message(call_id, spoken[index])
        messages.append(_with_reasoning(call, reasoning, index - 1))
        messages.append({"role": "tool", "tool_call_id": call_id, "content": human})
    return tuple(messages)


def _with_reasoning(
    message: dict[str, Any], reasoning: Sequence[Sequence[Mapping[str, Any]]], index: int
) -> dict[str, Any]:
    """`message` with reply `index`'s reasoning blocks, when it has any."""
    if 0 <= index < len(reasoning) and reasoning[index]:
        return {**message, "reasoning_details": [dict(block) for block in reasoning[index]]}
    return message


@dataclass(frozen=True)
class Reply:
    """The model's answer to one human turn, as the human would see it."""

    text: str
    protocol_ok: bool
    """False when a `tool_role` reply did not come as a structured call of the tool."""
    note: str | None = None
    deviation: str | None = None
    """Which protocol deviation (`PLAIN_CONTENT`, `TEXT_TOOL_CALL`); None when `protocol_ok`."""


_MESSAGE_PREFIX = re.compile(r'"message"\s*:\s*"')


def _recover_truncated_message(arguments: str) -> str | None:
    """Best-effort text of a `{"message": "...` argument whose JSON was cut off."""
    match = _MESSAGE_PREFIX.search(arguments)
    if match is None:
        return None
    body = arguments[match.end() :]
    # The longest prefix that decodes as a JSON string: an escape the cut left unfinished (a
    # lone `\` or `\u00` at the end) fails to decode and is shortened away, while `\\` (one
    # backslash the model wrote) decodes and stays; a closing quote ends the text there.
    for end in range(len(body), 0, -1):
        try:
            text = json.loads(f'"{body[:end]}"')
        except json.JSONDecodeError:
            continue
        return str(text).strip() or None
    return None


def _tool_message_text(arguments: str) -> tuple[str | None, str | None]:
    try:
        parsed = json_loads(arguments)
    except json.JSONDecodeError:
        recovered = _recover_truncated_message(arguments)
        note = "tool-call arguments were not valid JSON; message text recovered"
        return (recovered, note) if recovered else (None, None)
    if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        return parsed["message"], None
    return None, None


def extract_reply(completion: Completion, mode: DeliveryMode) -> Reply | None:
    """What the human sees of a completion, or None when it said nothing (retry it)."""
    content = (completion.content or "").strip()
    if mode == "user_role":
        return Reply(text=content, protocol_ok=True) if content else None

    spoken = _spoken_text(completion.tool_calls)
    if spoken is not None:
        text, note = spoken
        return Reply(text=text, protocol_ok=True, note=note)
    if not content:
        return None
    refused = completion.extra.get(TOOLS_IN_PROMPT)
    why = f"the server refused tools, so they were in the prompt ({refused})" if refused else None
    spoken = _spoken_text(read_written_calls(content, (TOOL_NAME,), call_id_prefix="text"))
    if spoken is not None:
        text, note = spoken
        said = "the tool call came back as text; message read from it"
        return Reply(
            text=text,
            protocol_ok=False,
            note="; ".join(n for n in (said, why, note) if n),
            deviation=TEXT_TOOL_CALL,
        )
    plain = "answered in plain content instead of calling send_message_to_human"
    return Reply(
        text=content,
        protocol_ok=False,
        note="; ".join(n for n in (plain, why) if n),
        deviation=PLAIN_CONTENT,
    )


def _spoken_text(calls: Sequence[ToolCall]) -> tuple[str, str | None] | None:
    """The message text of every `send_message_to_human` call, with a note if any was repaired."""
    texts: list[str] = []
    notes: list[str] = []
    for call in calls:
        if call.name != TOOL_NAME:
            continue
        text, note = _tool_message_text(call.arguments)
        if text and text.strip():
            texts.append(text.strip())
        if note:
            notes.append(note)
    if not texts:
        return None
    return "\n\n".join(texts), "; ".join(notes) or None


def reply_is_whole(completion: Completion, mode: DeliveryMode) -> bool:
    """True when a completion carries a reply to keep as it is; False means "ask again".

    A `send_message_to_human` call whose arguments are not valid JSON is not whole, because the
    transport or the provider damaged it and the same request is likely to come back intact.
    The exception is a reply the model ended by running out of tokens (`finish_reason` is
    `length`): the same request would be cut off again, so the recovered text is the answer.
    A damaged reply is still recovered by `extract_reply` if every retry fails.
    """
    if extract_reply(completion, mode) is None:
        return False
    if mode == "user_role" or completion.finish_reason == "length":
        return True
    for call in completion.tool_calls:
        if call.name != TOOL_NAME:
            continue
        try:
            json_loads(call.arguments)
        except json.JSONDecodeError:
            return False
    return True
