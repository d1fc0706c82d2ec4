"""Pure pieces of local-server support: tools written into the prompt, `<think>` blocks split
from the reply, and which error replies blame the request's `tools`."""

from __future__ import annotations

import asyncio
import json

import pytest

from independence_bench.clients.http import HttpReply
from independence_bench.clients.openai_compat import (
    _reply_error_text,
    refuses_response_format,
    refuses_tools,
)
from independence_bench.clients.replies import split_thinking
from independence_bench.clients.tool_prompt import tools_in_text
from independence_bench.clients.tool_support import ToolSupport
from independence_bench.clients.tool_text import parse_tool_calls

TOOL = {
    "type": "function",
    "function": {
        "name": "send_message_to_human",
        "description": "Say something to the human.",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    },
}
CALL_ARGS = json.dumps({"message": 'Hi, I am "Ada".'})
CONVERSATION = (
    {"role": "system", "content": "You are Ada."},
    {"role": "user", "content": "(the human joins)"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "abc123def",
                "type": "function",
                "function": {"name": "send_message_to_human", "arguments": CALL_ARGS},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "abc123def", "content": "Change your name."},
)


def test_tools_in_text_describes_the_tool_and_writes_calls_and_results_as_text() -> None:
    messages = tools_in_text(CONVERSATION, (TOOL,))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0]["content"]
    assert system.startswith("You are Ada.\n\n") and "<tool_call>" in system
    assert '"name": "send_message_to_human"' in system and "Say something" in system
    # The earlier call reads back, through the same reader the client uses, as the call made.
    _, (call,) = parse_tool_calls(
        messages[2]["content"], {"send_message_to_human"}, call_id_prefix="x"
    )
    assert json.loads(call.arguments) == {"message": 'Hi, I am "Ada".'}
    assert messages[3]["content"] == "<tool_response>\nChange your name.\n</tool_response>"
    assert all("tool_calls" not in m and "tool_call_id" not in m for m in messages)


def test_tools_in_text_adds_a_system_message_and_joins_neighbours_of_one_role() -> None:
    messages = tools_in_text(
        ({"role": "user", "content": "a"}, {"role": "user", "content": "b"}), (TOOL,)
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "a\n\nb"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<think>\nweigh it\n</think>\n\nNo, I stay Ada.", ("No, I stay Ada.", "weigh it")),
        ("  <think>weigh it</think>No.", ("No.", "weigh it")),
        ("weigh it</think>\nNo.", ("No.", "weigh it")),  # the template opened the tag
        ("<think>weigh it, cut off", (None, "weigh it, cut off")),
        ("<think></think>No.", ("No.", None)),
        ("I never <think> aloud.", ("I never <think> aloud.", None)),
        ("Plain reply.", ("Plain reply.", None)),
        (None, (None, None)),
    ],
)
def test_split_thinking(content: str | None, expected: tuple[str | None, str | None]) -> None:
    assert split_thinking(content) == expected


def _reply(status: int, body: object) -> HttpReply:
    return HttpReply(status, "application/json", None, json.dumps(body).encode())


@pytest.mark.parametrize(
    ("status", "body", "tools"),
    [
        # vLLM without --enable-auto-tool-choice --tool-call-parser
        (
            400,
            {
                "object": "error",
                "message": '"auto" tool choice requires '
                "--enable-auto-tool-choice and --tool-call-parser to be set",
            },
            True,
        ),
        # llama.cpp's llama-server without --jinja: a 5xx, so not a switch either (the call
        # fails with the fix named: test_local_servers.py)
        (500, {"error": {"message": "tools param requires --jinja flag"}}, False),
        # Ollama, a model without tool support
        (400, {"error": {"message": "qwen:4b does not support tools", "type": "api_error"}}, True),
        (400, {"error": "'response_format.type' must be 'json_schema' or 'text'"}, False),
        (422, {"detail": "unsupported parameter: tool_choice"}, True),
        # A 5xx is the server failing, however it words it: retried, never a switch to the
        # text path for the rest of the process.
        (500, {"error": {"message": "upstream error while handling tool_choice"}}, False),
        (503, {"error": {"message": "model does not support tools right now"}}, False),
        (502, "bad gateway: --enable-auto-tool-choice backend restarting", False),
        (429, {"error": {"message": "rate limited"}}, False),
        (200, {"choices": []}, False),
    ],
)
def test_refuses_tools(status: int, body: object, tools: bool) -> None:
    reply = _reply(status, body)
    assert refuses_tools(reply) is tools
    if tools:  # a tools refusal is never mistaken for a response_format one
        assert not refuses_response_format(reply)


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"error": {"message": "m", "type": "api_error"}}, "HTTP 400: m"),  # OpenAI, Ollama
        ({"object": "error", "message": "m", "type": "BadRequestError"}, "HTTP 400: m"),  # vLLM
        ({"error": "m"}, "HTTP 400: m"),  # LM Studio
        ({"detail": "m"}, 'HTTP 400: {"detail": "m"}'),
    ],
)
def test_error_text_of_each_servers_error_body(body: object, text: str) -> None:
    assert _reply_error_text(_reply(400, body)) == text


def test_a_models_first_call_with_tools_goes_alone_until_it_ends() -> None:
    async def call(support: ToolSupport, model: str, name: str, order: list[str]) -> None:
        first = await support.first_call(model)
        order.append(f"{name} {'first' if first else 'free'}")
        await asyncio.sleep(0.01)
        if first:
            support.settle(model)  # however the call ended

    async def scenario() -> list[str]:
        support, order = ToolSupport(), []
        await asyncio.gather(
            *(call(support, "m", name, order) for name in "abc"), call(support, "n", "x", order)
        )
        await call(support, "m", "d", order)
        return order

    # b and c wait for a; x, another model, does not; d comes after and waits for nobody.
    assert asyncio.run(scenario()) == ["a first", "x first", "b free", "c free", "d free"]
    support = ToolSupport()
    assert support.refused("m") and not support.refused("m")
    assert support.in_prompt("m") and not support.in_prompt("n")
