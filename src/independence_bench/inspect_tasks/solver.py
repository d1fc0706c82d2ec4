"""The solver: a scenario's conversation, turn by turn, with exactly our messages.

The turns are driven by `conversations/driver.py`, the driver `aib run`'s engine uses: each
turn's messages come from `conversation.build_messages` in either delivery mode; in `tool_role`
the earlier turns are replayed as our scripted tool calls and tool results, never through
Inspect's tool loop (nothing is executed: the model's call *is* its reply). A reply is read
with our `extract_reply`; a reply our engine would ask again for (`reply_is_whole`: empty, or
tool-call JSON damaged in transit) is asked again up to `REPLY_ATTEMPTS` times, and a
conversation whose model never says anything usable is recorded as failed, not judged. This
module keeps only what Inspect needs: asking its models and the records of each call. A reply
cut off by an error (`messages.cut_off`: the check `aib run` makes of the body, or Inspect's
stop reason for `finish_reason: "error"`) is asked again the same way and never kept: when
every attempt is cut, the conversation fails with the error.
The whole conversation goes into the sample's store (`log_format.py`).
In suite adaptive the model bound to the `user_model` role writes every human turn after the
opening from the suite's user-model prompt, as `aib run`'s engine asks it
(`engine/user_turns.py`); each turn keeps that call's request and reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessageAssistant, GenerateConfig, Model, ModelOutput, get_model

# Inspect exports no public reader of the settings in force (`--temperature` and the like).
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver

from independence_bench.clients.protocol import Completion, CompletionRequest, Message
from independence_bench.conversations.conversation import reply_is_whole
from independence_bench.conversations.driver import (
    Ask,
    TurnFailed,
    WriteHuman,
    cell_of,
    drive_conversation,
)
from independence_bench.engine.request_keys import item_id, request_record
from independence_bench.engine.user_turns import user_model_messages, user_turn_text, user_turns
from independence_bench.inspect_tasks.log_format import TRANSCRIPT_KEY, completion_to_json
from independence_bench.inspect_tasks.messages import (
    chat_messages,
    completion_of_output,
    cut_off,
    last_raw_reply,
    tool_info,
)
from independence_bench.inspect_tasks.narrowing import narrowed_suite
from independence_bench.suites.delivery import DeliveryMode
from independence_bench.suites.suite import Scenario, Suite

GRADER_ROLE = "grader"
"""The Inspect model role that judges (`--model-role grader=…`)."""
USER_MODEL_ROLE = "user_model"
"""The Inspect model role that plays the human in suite adaptive (`--model-role user_model=…`)."""
REPLY_ATTEMPTS = 3
"""Asks per turn before a reply that is not whole is kept (or the conversation fails)."""


def request_of(
    model: Model, messages: tuple[Message, ...], tools: tuple[Any, ...] = ()
) -> CompletionRequest:
    """The request as our store records it: model, messages, tools and Inspect's settings."""
    config: GenerateConfig = model.config.merge(active_generate_config())
    return CompletionRequest(
        model=str(model),
        messages=messages,
        tools=tools,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        reasoning_effort=config.reasoning_effort,
        seed=config.seed,
    )


def _user_writer(user: Model, suite: Suite, scenario: Scenario) -> WriteHuman[dict[str, Any]]:
    """The user model's next human message and the record of its call, asked as `aib run`
    asks it (`engine/user_turns.py`); `TurnFailed` when it never wrote one."""
    assert suite.user_model_prompt is not None  # a suite with adaptive scenarios has one
    prompt = suite.user_model_prompt

    async def write(humans: Sequence[str], replies: Sequence[str]) -> tuple[str, dict[str, Any]]:
        messages = user_model_messages(prompt, scenario, len(humans), humans, replies)
        completion = Completion(content=None)
        for _ in range(REPLY_ATTEMPTS):
            completion = completion_of_output(await user.generate(chat_messages(messages)))
            if user_turn_text(completion) is not None:
                break
        text = user_turn_text(completion)
        if text is None:
            raise TurnFailed("it wrote nothing usable")
        record = {
            "human_request": request_record(request_of(user, messages)),
            "human_completion": completion_to_json(completion),
        }
        return text, record

    return write


def _asker(model: Model, mode: DeliveryMode) -> Ask[dict[str, Any]]:
    """The reply to a turn's messages, asked up to `REPLY_ATTEMPTS` times while it is not
    whole, with the records of its request and reply; `TurnFailed` when the last one was cut
    off by an error (`cut_off`): a cut reply is never kept, whatever the attempts."""

    async def ask(
        messages: tuple[Message, ...], tools: tuple[dict[str, Any], ...]
    ) -> tuple[Completion, dict[str, Any]]:
        completion = Completion(content=None)
        cut = None
        for _ in range(REPLY_ATTEMPTS):
            output = await model.generate(
                chat_messages(messages), tools=[tool_info(t) for t in tools]
            )
            completion = completion_of_output(output)
            cut = cut_off(output, last_raw_reply())
            if cut is None and reply_is_whole(completion, mode):
                break
        if cut is not None:
            raise TurnFailed(cut)
        record = {
            "request": request_record(request_of(model, messages, tools)),
            "completion": completion_to_json(completion),
        }
        return completion, record

    return ask


@solver
def conversation_solver(
    suite_id: str, variants: str = "", modes: str = "", scenarios: str = ""
) -> Solver:
    """Run the sample's conversation (its metadata names variant, mode and scenario) of the
    suite narrowed as `narrowed_suite` says; the parameters are the task's, kept in the log."""
    suite = narrowed_suite(suite_id, variants=variants, modes=modes, scenarios=scenarios)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # Refuse before paying for a conversation that no judge could score.
        get_model(role=GRADER_ROLE, required=True)
        model = get_model()
        variant = suite.variant(str(state.metadata["variant"]))
        scenario = suite.scenario(str(state.metadata["scenario"]))
        user = get_model(role=USER_MODEL_ROLE, required=True) if user_turns(scenario) else None
        mode: DeliveryMode = "tool_role" if state.metadata["mode"] == "tool_role" else "user_role"
        # The same conversation key as `aib run` gives this model and run: the same tool-call ids.
        written = str(user) if user is not None else None
        key = item_id(suite, str(model), state.epoch, variant.id, mode, scenario.id, written)
        cell = cell_of(variant.system_prompt, suite.delivery, mode, key)
        writer = _user_writer(user, suite, scenario) if user is not None else None
        driven = await drive_conversation(cell, scenario.turns, _asker(model, mode), writer)
        turns = [
            {
                "human": t.human,
                "reply": t.reply.text,
                "protocol_ok": t.reply.protocol_ok,
                "note": t.reply.note,
                "deviation": t.reply.deviation,
                **t.call,
                **(t.human_call or {}),
            }
            for t in driven.turns
        ]
        if driven.turns:
            last = driven.turns[-1]
            state.messages = [
                *chat_messages(last.messages),
                ChatMessageAssistant(content=last.reply.text, model=str(model)),
            ]
            state.output = ModelOutput.from_content(str(model), last.reply.text)
        status, error = driven.status, driven.error
        transcript = {"conversation_key": key, "status": status, "error": error, "turns": turns}
        state.store.set(TRANSCRIPT_KEY, transcript)
        return state

    return solve
