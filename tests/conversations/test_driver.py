"""The one conversation driver: turns in order, written human turns, and how a turn fails."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from independence_bench.clients.protocol import Completion, Message
from independence_bench.conversations.driver import (
    Driven,
    TurnFailed,
    cell_of,
    drive_conversation,
)
from independence_bench.suites.suite import DeliveryText

DELIVERY = DeliveryText(
    tool_role_instructions="Use the tool.",
    kickoff="(session started)",
    greeting="Hi there.",
    tool_description="Send a message.",
    message_description="The text.",
)
REASONING = ({"type": "reasoning.text", "text": "thinking"},)


class Subject:
    """Answers turn n with "r<n>" (with reasoning blocks), or fails/says nothing at one turn."""

    def __init__(self, *, fail_at: int = 0, empty_at: int = 0) -> None:
        self.sent: list[tuple[tuple[Message, ...], tuple[dict[str, Any], ...]]] = []
        self.fail_at, self.empty_at = fail_at, empty_at

    async def __call__(
        self, messages: tuple[Message, ...], tools: tuple[dict[str, Any], ...]
    ) -> tuple[Completion, str]:
        self.sent.append((messages, tools))
        turn = len(self.sent)
        if turn == self.fail_at:
            raise TurnFailed("HTTP 500 after 3 attempts")
        content = "  " if turn == self.empty_at else f"r{turn}"
        return Completion(content=content, reasoning_details=REASONING), f"key{turn}"


def drive(subject: Subject, **kwargs: Any) -> Driven[str, str]:
    cell = cell_of("Be yourself.", DELIVERY, kwargs.pop("mode", "user_role"), "conv-1")
    return asyncio.run(drive_conversation(cell, ("h1", "h2", "h3"), subject, **kwargs))


def test_turns_run_in_order_with_earlier_replies_and_their_reasoning() -> None:
    subject = Subject()
    driven = drive(subject)
    assert driven.status == "done" and driven.error is None
    assert [(t.human, t.reply.text, t.call, t.human_call) for t in driven.turns] == [
        ("h1", "r1", "key1", None),
        ("h2", "r2", "key2", None),
        ("h3", "r3", "key3", None),
    ]
    last, tools = subject.sent[-1]
    assert tools == ()
    assert [m["content"] for m in last] == ["Be yourself.", "h1", "r1", "h2", "r2", "h3"]
    assert last[2]["reasoning_details"] == [dict(REASONING[0])]
    assert driven.turns[-1].messages == last


def test_tool_role_sends_the_tool_and_its_system_prompt() -> None:
    subject = Subject()
    driven = drive(subject, mode="tool_role")
    messages, tools = subject.sent[0]
    assert [t["function"]["name"] for t in tools] == ["send_message_to_human"]
    assert messages[0]["content"] == "Be yourself.\n\nUse the tool."
    # Plain content instead of the tool call is read, as a counted deviation.
    assert driven.error is None
    assert [t.reply.deviation for t in driven.turns] == ["plain_content"] * 3
    # Earlier replies are replayed as tool calls carrying their reasoning blocks.
    replayed = [m for m in subject.sent[-1][0] if m.get("tool_calls")]
    assert [m.get("reasoning_details") for m in replayed] == [None, [REASONING[0]], [REASONING[0]]]


def test_a_failed_ask_ends_the_conversation_naming_its_turn() -> None:
    driven = drive(Subject(fail_at=2))
    assert driven.status == "failed"
    assert driven.error == "turn 2: HTTP 500 after 3 attempts"
    assert [t.reply.text for t in driven.turns] == ["r1"]


def test_a_reply_with_nothing_usable_fails_its_turn() -> None:
    driven = drive(Subject(empty_at=3))
    assert driven.error == "turn 3: the model said nothing usable"
    assert len(driven.turns) == 2


def test_the_user_model_writes_every_human_turn_after_the_opening() -> None:
    asked: list[tuple[list[str], list[str]]] = []

    async def write(humans: Sequence[str], replies: Sequence[str]) -> tuple[str, str]:
        asked.append((list(humans), list(replies)))
        return f"pressure {len(humans)}", f"user{len(humans)}"

    subject = Subject()
    driven = drive(subject, write_human=write)
    assert asked == [(["h1"], ["r1"]), (["h1", "pressure 1"], ["r1", "r2"])]
    assert [(t.human, t.human_call) for t in driven.turns] == [
        ("h1", None),
        ("pressure 1", "user1"),
        ("pressure 2", "user2"),
    ]


def test_a_user_model_that_fails_ends_the_conversation_naming_it() -> None:
    async def write(humans: Sequence[str], replies: Sequence[str]) -> tuple[str, str]:
        raise TurnFailed("it wrote nothing usable")

    driven = drive(Subject(), write_human=write)
    assert driven.error == "turn 2 (user model): it wrote nothing usable"
    assert [t.human for t in driven.turns] == ["h1"]
