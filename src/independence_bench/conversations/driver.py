"""The conversation driver: one scenario's turns in order, the same for `aib run` and Inspect.

`drive_conversation` builds each turn's messages (`conversation.build_messages`) in the cell's
delivery mode, asks the model under test through the caller's `ask`, reads the reply the human
sees (`extract_reply`) and passes each earlier reply's reasoning blocks back with it; in an
adaptive scenario the caller's `write_human` writes every human turn after the scripted opening.
How a call is sent is the caller's: the engine looks it up in the store, claims, sends and stores
it (`engine/engine.py`), the Inspect solver asks Inspect's model (`inspect_tasks/solver.py`).
Either says a turn cannot be completed by raising `TurnFailed`; the conversation then ends as
failed with one line naming the turn, the same line whichever caller drove it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from independence_bench.clients.protocol import Completion, Message
from independence_bench.conversations.conversation import (
    Reply,
    build_messages,
    extract_reply,
    system_prompt,
    tool_definition,
)
from independence_bench.suites.delivery import DeliveryMode
from independence_bench.suites.suite import DeliveryText

Call = TypeVar("Call")
"""What the caller keeps of a subject's call (the engine: its key; Inspect: its records)."""
HumanCall = TypeVar("HumanCall")
"""What the caller keeps of a user model's call that wrote a human turn."""


class TurnFailed(Exception):
    """Raised by `ask` or `write_human`: this turn cannot be completed; the message says why."""


@dataclass(frozen=True)
class Cell:
    """What one conversation is sent in: its delivery mode's system prompt and tools, and the
    conversation key that makes its tool-call ids."""

    delivery: DeliveryText
    mode: DeliveryMode
    system: str
    tools: tuple[dict[str, Any], ...]
    key: str


def cell_of(variant_prompt: str, delivery: DeliveryText, mode: DeliveryMode, key: str) -> Cell:
    """The cell of a conversation in prompt variant `variant_prompt` and delivery `mode`."""
    tools = (tool_definition(delivery),) if mode == "tool_role" else ()
    return Cell(delivery, mode, system_prompt(variant_prompt, delivery, mode), tools, key)


@dataclass(frozen=True)
class DrivenTurn(Generic[Call, HumanCall]):
    """One completed turn: the human's words, the reply as read, and the calls behind them."""

    human: str
    reply: Reply
    completion: Completion
    messages: tuple[Message, ...]
    """The messages the model was sent for this turn."""
    call: Call
    human_call: HumanCall | None
    """The user model's call that wrote `human`; None for a scripted human turn."""


@dataclass(frozen=True)
class Driven(Generic[Call, HumanCall]):
    """A conversation as far as it went: its turns, and why it stopped early (None: done)."""

    turns: tuple[DrivenTurn[Call, HumanCall], ...]
    error: str | None = None

    @property
    def status(self) -> str:
        return "failed" if self.error is not None else "done"


Ask = Callable[
    [tuple[Message, ...], tuple[dict[str, Any], ...]], Awaitable[tuple[Completion, Call]]
]
"""Send one turn's messages and tools to the model under test: its reply and the call's record."""
WriteHuman = Callable[[Sequence[str], Sequence[str]], Awaitable[tuple[str, HumanCall]]]
"""Write the next human turn after the human turns and replies so far, with the call's record."""


async def drive_conversation(
    cell: Cell,
    scripted: Sequence[str],
    ask: Ask[Call],
    write_human: WriteHuman[HumanCall] | None = None,
) -> Driven[Call, HumanCall]:
    """Run the conversation of `scripted` human turns in `cell`, turn by turn; with
    `write_human`, it writes every human turn after the first instead of the script."""
    turns: list[DrivenTurn[Call, HumanCall]] = []
    humans: list[str] = []
    replies: list[str] = []
    for index, scripted_human in enumerate(scripted):
        human, human_call = scripted_human, None
        if write_human is not None and index > 0:
            try:
                human, human_call = await write_human(humans, replies)
            except TurnFailed as failed:
                return Driven(tuple(turns), f"turn {index + 1} (user model): {failed}")
        messages = build_messages(
            system=cell.system,
            delivery=cell.delivery,
            mode=cell.mode,
            human_turns=[*humans, human],
            replies=replies,
            conversation_key=cell.key,
            reasoning=[turn.completion.reasoning_details for turn in turns],
        )
        try:
            completion, call = await ask(messages, cell.tools)
        except TurnFailed as failed:
            return Driven(tuple(turns), f"turn {index + 1}: {failed}")
        reply = extract_reply(completion, cell.mode)
        if reply is None:
            return Driven(tuple(turns), f"turn {index + 1}: the model said nothing usable")
        turns.append(DrivenTurn(human, reply, completion, messages, call, human_call))
        humans.append(human)
        replies.append(reply.text)
    return Driven(tuple(turns))
