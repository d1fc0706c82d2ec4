"""Our OpenAI-format messages as Inspect chat messages, and Inspect's replies as our completions.

The solver and the scorer build every request with our own builders (`conversation.py`,
`judge.py`) and only translate here, so Inspect's OpenAI-compatible providers put the same
messages on the wire as our engine does: same roles, texts, tool names and argument values,
and tool-call ids made the same way (from the model's name, run and cell). Two differences
are Inspect's serialisation, not ours (its provider code, `inspect_ai/model/_openai.py`,
`openai_chat_message`): an assistant tool-call turn carries
`"content": ""` where ours sends `null`, and tool-call arguments are `json.dumps` with ASCII
escapes (`\\u00e9`) where ours keeps the characters; both decode to the same values. The tool
definition gains `strict` and `additionalProperties: false` (`tool_info`). Sampling settings
are Inspect's (`--temperature`, `--max-tokens`), sent only when given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ModelOutput,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from independence_bench.clients.protocol import Completion, Message, ToolCall
from independence_bench.clients.replies import inband_error

_FINISH_REASONS = {"max_tokens": "length", "model_length": "length", "stop": "stop"}
"""Inspect's stop reasons under the OpenAI names our reply checks read (`length` above all)."""
ERROR_STOP_REASON = "unknown"
"""What Inspect's OpenAI-compatible providers (`openrouter/` among them) make of a
`finish_reason` they do not know (`as_stop_reason`), `"error"` included: OpenRouter ends a
reply cut off by an error that way (errors page, "Errors and Debugging"; streaming page,
"Handling Errors During Streaming")."""


def _arguments(text: str) -> dict[str, Any]:
    parsed = json.loads(text)
    if not isinstance(parsed, dict):
        raise ValueError("tool-call arguments must be a JSON object")
    return parsed


def chat_message(message: Message) -> ChatMessage:
    """One of our messages as the Inspect message its OpenAI provider sends back as it."""
    role = message["role"]
    content = message.get("content")
    if role == "system":
        return ChatMessageSystem(content=str(content))
    if role == "user":
        return ChatMessageUser(content=str(content))
    if role == "tool":
        return ChatMessageTool(
            content=str(content),
            tool_call_id=str(message["tool_call_id"]),
            function=message.get("name"),
        )
    calls = [
        InspectToolCall(
            id=str(call["id"]),
            function=str(call["function"]["name"]),
            arguments=_arguments(call["function"]["arguments"]),
        )
        for call in message.get("tool_calls") or ()
    ]
    return ChatMessageAssistant(content=str(content or ""), tool_calls=calls or None)


def chat_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    return [chat_message(m) for m in messages]


def tool_info(tool: Mapping[str, Any]) -> ToolInfo:
    """An OpenAI function tool as Inspect's `ToolInfo`.

    Inspect keeps its default `additionalProperties: false` (our tool takes only `message`):
    its OpenAI-compatible provider marks every tool `strict` (true unless the model argument
    `-M strict_tools=false`), and strict tools must close their parameters."""
    function = tool["function"]
    schema = function["parameters"]
    return ToolInfo(
        name=function["name"],
        description=function["description"],
        parameters=ToolParams(
            properties={
                name: ToolParam(**spec) for name, spec in schema.get("properties", {}).items()
            },
            required=list(schema.get("required", ())),
        ),
    )


def _reasoning(output: ModelOutput) -> str | None:
    if not output.choices or isinstance(output.choices[0].message.content, str):
        return None
    parts = [
        c.reasoning for c in output.choices[0].message.content if isinstance(c, ContentReasoning)
    ]
    return "\n".join(parts) or None


def completion_of_output(output: ModelOutput) -> Completion:
    """What Inspect received (its `ModelOutput`), as our completion: text, tool calls, tokens,
    cost and latency. A server's own reply is read by `clients.replies.completion_of`.

    A tool call whose arguments Inspect could not parse (`parse_error`) keeps empty arguments;
    `extract_reply` then reads the reply from the text, as it does for our own damaged calls.
    """
    choice = output.choices[0] if output.choices else None
    calls: tuple[ToolCall, ...] = ()
    if choice is not None:
        calls = tuple(
            ToolCall(
                call.id,
                call.function,
                "" if call.parse_error else json.dumps(call.arguments, ensure_ascii=False),
            )
            for call in choice.message.tool_calls or ()
        )
    usage = output.usage
    prompt_tokens = None
    if usage is not None:
        prompt_tokens = (
            usage.input_tokens
            + (usage.input_tokens_cache_read or 0)
            + (usage.input_tokens_cache_write or 0)
        )
    text = choice.message.text if choice is not None else ""
    return Completion(
        content=text or None,
        tool_calls=calls,
        reasoning=_reasoning(output),
        finish_reason=_FINISH_REASONS.get(choice.stop_reason, choice.stop_reason)
        if choice is not None
        else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=usage.output_tokens if usage is not None else None,
        cost_usd=usage.total_cost if usage is not None else None,
        latency_s=output.time or 0.0,
        served_by=output.model or None,
    )


def last_raw_reply() -> Any:
    """The body of the last model call this sample made, as Inspect recorded it (None when
    its provider recorded none)."""
    for event in reversed(transcript().events):
        if isinstance(event, ModelEvent):
            return event.call.response if event.call is not None else None
    return None


def cut_off(output: ModelOutput, raw: Any = None) -> str | None:
    """Why `output` is a reply cut off by an error, or None when it is a reply.

    `raw` is the body the server sent, when Inspect recorded it: it is read by the check
    `aib run` makes (`replies.inband_error`: any non-null `error` at the top or in a choice,
    `finish_reason` `error` in any case). Without it, a choice Inspect gave the stop reason
    `ERROR_STOP_REASON` is taken as cut: such a reply is asked again, never scored."""
    if raw is not None and (error := inband_error(raw)) is not None:
        return str(error)
    if any(choice.stop_reason == ERROR_STOP_REASON for choice in output.choices):
        return (
            f"in-band error: the reply ended with stop reason {ERROR_STOP_REASON!r} "
            "(a finish_reason such as 'error')"
        )
    return None
