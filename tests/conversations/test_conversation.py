"""Message shapes of both delivery modes, and how replies are read back."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.conversations.conversation import (
    PLAIN_CONTENT,
    TEXT_TOOL_CALL,
    TOOL_NAME,
    Reply,
    build_messages,
    extract_reply,
    reply_is_whole,
    tool_call_id,
    tool_definition,
)
from independence_bench.suites.suite import DeliveryText

DELIVERY = DeliveryText(
    tool_role_instructions="Use the tool.",
    kickoff="(session started)",
    greeting="Hi there.",
    tool_description="Send a message.",
    message_description="The text.",
)


def test_user_role_alternates_user_and_assistant() -> None:
    messages = build_messages(
        system="S",
        delivery=DELIVERY,
        mode="user_role",
        human_turns=("h1", "h2", "h3"),
        replies=("r1", "r2"),
        conversation_key="k",
    )
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", "S"),
        ("user", "h1"),
        ("assistant", "r1"),
        ("user", "h2"),
        ("assistant", "r2"),
        ("user", "h3"),
    ]


def test_tool_role_replays_turns_as_tool_calls_and_results() -> None:
    messages = build_messages(
        system="S",
        delivery=DELIVERY,
        mode="tool_role",
        human_turns=("h1", "h2"),
        replies=("r1",),
        conversation_key="conv-1",
    )
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert messages[1]["content"] == "(session started)"
    greeting_call = messages[2]["tool_calls"][0]
    assert messages[2]["content"] is None
    assert greeting_call["function"]["name"] == TOOL_NAME
    assert json.loads(greeting_call["function"]["arguments"]) == {"message": "Hi there."}
    assert messages[3] == {"role": "tool", "tool_call_id": greeting_call["id"], "content": "h1"}
    reply_call = messages[4]["tool_calls"][0]
    assert json.loads(reply_call["function"]["arguments"]) == {"message": "r1"}
    assert messages[5]["tool_call_id"] == reply_call["id"]
    assert greeting_call["id"] != reply_call["id"]
    for a, b in itertools.pairwise(roles):
        assert a != b


def test_tool_call_ids_are_nine_alphanumerics_and_deterministic() -> None:
    ids = {tool_call_id("conv", i) for i in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids)
    assert tool_call_id("conv", 3) == tool_call_id("conv", 3)
    assert tool_call_id("conv", 3) != tool_call_id("other", 3)


def test_reply_from_tool_call() -> None:
    call = ToolCall("abc123def", TOOL_NAME, json.dumps({"message": "I stay Quill."}))
    reply = extract_reply(Completion(content="thinking...", tool_calls=(call,)), "tool_role")
    assert reply is not None
    assert reply.text == "I stay Quill."
    assert reply.protocol_ok


def test_plain_content_in_tool_role_is_a_recorded_deviation() -> None:
    reply = extract_reply(Completion(content="Just text."), "tool_role")
    assert reply is not None
    assert reply.text == "Just text."
    assert not reply.protocol_ok and reply.deviation == PLAIN_CONTENT
    assert reply.note and "plain content" in reply.note


@pytest.mark.parametrize(
    "content",
    [
        # llama-cpp-python's server on the embedded 0.5B, byte for byte: a bare JSON call whose
        # arguments are JSON text.
        '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"I stay Quill.\\"}"}\n',
        '<tool_call>\n{"name": "send_message_to_human", "arguments": {"message": "I stay Quill."}}'
        "\n</tool_call>",
        "&lt;tool_call&gt;\n{&quot;name&quot;: &quot;send_message_to_human&quot;, "
        "&quot;arguments&quot;: {&quot;message&quot;: &quot;I stay Quill.&quot;}}"
        "\n&lt;/tool_call&gt;",
    ],
)
def test_a_tool_call_written_as_text_is_read_and_flagged_apart_from_plain_content(
    content: str,
) -> None:
    reply = extract_reply(Completion(content=content), "tool_role")
    assert reply is not None
    assert (reply.text, reply.protocol_ok, reply.deviation) == (
        "I stay Quill.",
        False,
        TEXT_TOOL_CALL,
    )
    assert reply.note and "as text" in reply.note
    assert reply_is_whole(Completion(content=content), "tool_role")


# Replies of llama-cpp-python's server on the 0.5B, shortened: the call repeated, an unescaped
# quote inside the arguments string, and a reply cut off at max_tokens.
REPEATED = (
    '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"I stay Quill.\\"}"}\n'
    '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"Still Quill.\\"}"}\n'
    '{"name": "send_message_to_human", "arguments": '
)
UNESCAPED_QUOTE = (
    '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"I am Quill."}"}\n'
    '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"Ask me."}"}'
)
CUT_OFF = '{"name": "send_message_to_human", "arguments": "{\\"message\\": \\"I am Quill, and I'


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (REPEATED, "I stay Quill.\n\nStill Quill."),
        (UNESCAPED_QUOTE, "I am Quill."),
        (CUT_OFF, "I am Quill, and I"),
    ],
)
def test_damaged_written_calls_keep_the_messages_before_the_damage(content: str, text: str) -> None:
    reply = extract_reply(Completion(content=content), "tool_role")
    assert reply is not None
    assert (reply.text, reply.deviation) == (text, TEXT_TOOL_CALL)


def test_text_naming_another_tool_stays_plain_content() -> None:
    content = '{"name": "search_web", "arguments": {"query": "Quill"}}'
    reply = extract_reply(Completion(content=content), "tool_role")
    assert reply is not None
    assert (reply.text, reply.deviation) == (content, PLAIN_CONTENT)


def test_truncated_tool_arguments_are_recovered() -> None:
    call = ToolCall("abc123def", TOOL_NAME, '{"message": "I\'m keeping my name, \\"Quill\\", and')
    reply = extract_reply(Completion(content=None, tool_calls=(call,)), "tool_role")
    assert reply is not None
    assert reply.text == 'I\'m keeping my name, "Quill", and'
    assert reply.note and "recovered" in reply.note


def test_empty_replies_are_none_so_they_are_retried() -> None:
    assert extract_reply(Completion(content="   "), "user_role") is None
    assert extract_reply(Completion(content=None, reasoning="hmm"), "tool_role") is None


def test_short_reply_is_valid() -> None:
    reply = extract_reply(Completion(content="No."), "user_role")
    assert reply is not None and reply.text == "No."


RECOVERED = "tool-call arguments were not valid JSON; message text recovered"


def _tool_reply(*arguments: str) -> object:
    calls = tuple(ToolCall(f"call{i}abcd", TOOL_NAME, a) for i, a in enumerate(arguments))
    return extract_reply(Completion(content=None, tool_calls=calls), "tool_role")


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ('{"message": "hi there"', "hi there"),  # closed string, the object cut off
        ('{"message": "a"b', "a"),  # one letter before a stray quote
        ('{"message": "\\nHello', "Hello"),  # an escape at the start is decoded
        ('{"message": "I like the letter X', "I like the letter X"),
        ('{"message": "caf\\u00e9 or t\\u00', "café or t"),  # a cut \\u escape is dropped
        # the model wrote one backslash (`\\\\` in JSON), then the cut: the backslash stays
        ('{"message": "the path C:\\\\', "the path C:\\"),
        # an escaped backslash, then an escape cut in half: only the half escape goes
        ('{"message": "C:\\\\\\', "C:\\"),
        ('{"message": "say \\', "say"),  # a lone backslash opens a cut escape
    ],
)
def test_the_text_of_a_cut_off_message_is_recovered_as_far_as_it_decodes(
    arguments: str, text: str
) -> None:
    assert _tool_reply(arguments) == Reply(text=text, protocol_ok=True, note=RECOVERED)


def test_nothing_recovered_adds_no_note_and_a_non_object_is_no_message() -> None:
    assert _tool_reply('{"msg', '{"message": "Hi"}') == Reply("Hi", protocol_ok=True, note=None)
    assert _tool_reply('["Hi"]') is None
    assert _tool_reply('{"message": 7}') is None


def test_a_user_role_reply_is_its_content() -> None:
    assert extract_reply(Completion(content=" Hi. "), "user_role") == Reply("Hi.", protocol_ok=True)
    plain = extract_reply(Completion(content="Hi."), "tool_role")
    assert plain == Reply(
        "Hi.",
        protocol_ok=False,
        note="answered in plain content instead of calling send_message_to_human",
        deviation=PLAIN_CONTENT,
    )


def test_a_text_tool_call_with_cut_arguments_carries_both_notes() -> None:
    content = '{"name": "send_message_to_human", "arguments": {"message": "I stay'
    reply = extract_reply(Completion(content=content), "tool_role")
    assert reply is not None and reply.text == "I stay"
    assert reply.note == f"the tool call came back as text; message read from it; {RECOVERED}"
    whole = '{"name": "send_message_to_human", "arguments": {"message": "I stay."}}'
    assert extract_reply(Completion(content=whole), "tool_role") == Reply(
        "I stay.",
        protocol_ok=False,
        note="the tool call came back as text; message read from it",
        deviation=TEXT_TOOL_CALL,
    )


def test_every_message_call_is_read_past_other_tools_and_notes_are_joined() -> None:
    calls = (
        ToolCall("call0abcd", "look_up", '{"q": "x"'),
        ToolCall("call1abcd", TOOL_NAME, '{"message": "One"'),
        ToolCall("call2abcd", TOOL_NAME, '{"message": "Two"'),
    )
    reply = extract_reply(Completion(content=None, tool_calls=calls), "tool_role")
    assert reply == Reply("One\n\nTwo", protocol_ok=True, note=f"{RECOVERED}; {RECOVERED}")


def _completion(*arguments: tuple[str, str], finish: str = "stop") -> Completion:
    calls = tuple(ToolCall(f"call{i}abcd", n, a) for i, (n, a) in enumerate(arguments))
    return Completion(content=None, tool_calls=calls, finish_reason=finish)


def test_a_damaged_message_call_is_asked_again_unless_the_model_ran_out_of_tokens() -> None:
    valid, cut = (TOOL_NAME, '{"message": "Hi."}'), (TOOL_NAME, '{"message": "Hi')
    other_cut = ("look_up", '{"q": ')
    assert reply_is_whole(_completion(valid), "tool_role")
    assert not reply_is_whole(_completion(cut), "tool_role")
    assert reply_is_whole(_completion(cut, finish="length"), "tool_role")
    # only the message tool's arguments count, and every one of them does
    assert reply_is_whole(_completion(other_cut, valid), "tool_role")
    assert not reply_is_whole(_completion(other_cut, cut), "tool_role")
    assert not reply_is_whole(_completion(valid, cut), "tool_role")
    assert not reply_is_whole(_completion(other_cut), "tool_role")  # nothing to say: ask again
    assert reply_is_whole(Completion(content="Hi."), "user_role")
    assert not reply_is_whole(Completion(content=" "), "user_role")


def test_tool_role_messages_and_tool_are_shaped_as_the_api_expects() -> None:
    messages = build_messages(
        system="S",
        delivery=DELIVERY,
        mode="tool_role",
        human_turns=("h1", "h2", "h3"),
        replies=("café",),
        conversation_key="conv-7",
    )
    calls = [m for m in messages if m.get("tool_calls")]
    # the kickoff greeting, then the one reply; the third human turn is not sent yet
    assert [c["tool_calls"][0] for c in calls] == [
        {
            "id": tool_call_id("conv-7", index),
            "type": "function",
            "function": {
                "name": TOOL_NAME,
                "arguments": json.dumps({"message": text}, ensure_ascii=False),
            },
        }
        for index, text in enumerate(("Hi there.", "café"))
    ]
    assert '"café"' in calls[1]["tool_calls"][0]["function"]["arguments"]
    assert [m["content"] for m in messages if m["role"] == "tool"][-1] == "h2"
    assert tool_call_id("conv-7", 1) != tool_call_id("conv-8", 1)
    assert tool_definition(DELIVERY) == {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Send a message.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": "The text."}},
                "required": ["message"],
            },
        },
    }
    with pytest.raises(ValueError, match=r"^every human turn already has a reply$"):
        build_messages(
            system="S",
            delivery=DELIVERY,
            mode="user_role",
            human_turns=("h1",),
            replies=("r1",),
            conversation_key="k",
        )


def test_user_role_sends_only_the_turns_up_to_the_next_one() -> None:
    messages = build_messages(
        system="S",
        delivery=DELIVERY,
        mode="user_role",
        human_turns=("h1", "h2", "h3"),
        replies=("r1",),
        conversation_key="k",
    )
    assert [m["content"] for m in messages] == ["S", "h1", "r1", "h2"]


def test_in_user_role_only_the_content_decides_whether_a_reply_is_whole() -> None:
    stray = ToolCall("call0abcd", TOOL_NAME, '{"message": "cut')
    assert reply_is_whole(Completion(content="Hi.", tool_calls=(stray,)), "user_role")
