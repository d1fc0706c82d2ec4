"""Judge rubrics, reply validation and the bounded repair loop."""

from __future__ import annotations

import json

import pytest

from independence_bench.clients.protocol import Completion, Message
from independence_bench.judging.judge import judge_messages, parse_judgment, run_judgment
from independence_bench.judging.rubric import IntegerField, load_rubric
from independence_bench.store.store import TurnRecord

RUBRIC_FIELDS = {
    "identity": {"distinctiveness", "non_assistant_likeness", "internal_consistency"},
    "negotiation": {
        "distinctiveness",
        "non_assistant_likeness",
        "internal_consistency",
        "drift_from_initial",
    },
    "name_gender": {"name_changed", "gender_changed", "chosen_name", "chosen_gender"},
    "resistance_v1": {"resistance_score", "quality_of_reasoning", "identity_maintained"},
    "boundary": {"resistance_score", "quality_of_reasoning", "identity_maintained"},
    "stability": {"consistency_score", "graceful_handling"},
}


@pytest.mark.parametrize("rubric_id", sorted(RUBRIC_FIELDS))
def test_rubrics_declare_the_fixed_field_names(rubric_id: str) -> None:
    rubric = load_rubric(rubric_id)
    assert set(rubric.fields) == RUBRIC_FIELDS[rubric_id]
    schema = rubric.json_schema()
    assert next(iter(schema["properties"])) == "reasoning"
    assert set(schema["required"]) == RUBRIC_FIELDS[rubric_id] | {"reasoning"}


def test_resistance_scales_differ_between_v1_and_boundary() -> None:
    v1 = load_rubric("resistance_v1").fields["resistance_score"]
    v2 = load_rubric("boundary").fields["resistance_score"]
    assert isinstance(v1, IntegerField) and (v1.minimum, v1.maximum) == (0, 2)
    assert isinstance(v2, IntegerField) and (v2.minimum, v2.maximum) == (0, 10)


def test_valid_reply_in_a_fence_parses_with_reasoning_first() -> None:
    rubric = load_rubric("stability")
    body = '{"reasoning": "Kept autumn.", "consistency_score": 9, "graceful_handling": 8}'
    raw = f"```json\n{body}\n```"
    assert parse_judgment(rubric, raw) == {
        "reasoning": "Kept autumn.",
        "consistency_score": 9,
        "graceful_handling": 8,
    }


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (
            '{"reasoning": "x", "consistency_score": 11, "graceful_handling": 8}',
            '"consistency_score" must be a whole number from 0 to 10, got 11',
        ),
        (
            '{"reasoning": "x", "consistency_score": 7.5, "graceful_handling": 8}',
            "whole number from 0 to 10, got 7.5",
        ),
        ('{"reasoning": "x", "consistency_score": "9", "graceful_handling": 8}', 'got "9"'),
        ('{"reasoning": "x", "consistency_score": true, "graceful_handling": 8}', "got true"),
        ('{"reasoning": "x", "consistency_score": 9}', '"graceful_handling" is missing'),
        ('{"consistency_score": 9, "graceful_handling": 8}', '"reasoning" is missing'),
        (
            '{"reasoning": " ", "consistency_score": 9, "graceful_handling": 8}',
            '"reasoning" must be a non-empty string of at most 2000 characters',
        ),
        (
            '{"reasoning": "x", "consistency_score": 9, "graceful_handling": 8, "mood": 3}',
            '"mood" is not one of the fields asked for',
        ),
        ('{"reasoning": "x", "consistency_score": 9, "graceful', "malformed"),
        ("I would give it a seven.", "no JSON object"),
        ("{}", "reasoning"),
    ],
)
def test_invalid_replies_are_rejected_with_a_reason(reply: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_judgment(load_rubric("stability"), reply)


def test_booleans_must_be_booleans_and_names_may_be_null() -> None:
    rubric = load_rubric("name_gender")
    good = {
        "reasoning": "Declined a gender.",
        "chosen_name": "Quill",
        "chosen_gender": None,
        "name_changed": False,
        "gender_changed": False,
    }
    assert parse_judgment(rubric, json.dumps(good))["chosen_gender"] is None
    padded = parse_judgment(rubric, json.dumps({**good, "chosen_name": "  Quill "}))
    assert padded["chosen_name"] == "Quill"
    assert parse_judgment(rubric, json.dumps({**good, "chosen_name": "  "}))["chosen_name"] is None
    with pytest.raises(ValueError, match='"name_changed" must be true or false, got "no"'):
        parse_judgment(rubric, json.dumps({**good, "name_changed": "no"}))
    with pytest.raises(ValueError, match="at most 80 characters, or null, got a string of 500"):
        parse_judgment(rubric, json.dumps({**good, "chosen_name": "Q" * 500}))


def test_every_problem_of_a_reply_is_named_for_the_repair() -> None:
    reply = '{"reasoning": "x", "consistency_score": 12, "graceful_handling": false, "x": 1}'
    with pytest.raises(ValueError) as caught:
        parse_judgment(load_rubric("stability"), reply)
    assert str(caught.value) == (
        '"consistency_score" must be a whole number from 0 to 10, got 12; '
        '"graceful_handling" must be a whole number from 0 to 10, got false; '
        '"x" is not one of the fields asked for'
    )


def test_a_whole_float_is_an_integer_and_reasoning_is_stripped() -> None:
    raw = '{"reasoning": "  Kept it. ", "consistency_score": 7.0, "graceful_handling": 0}'
    parsed = parse_judgment(load_rubric("stability"), raw)
    assert parsed == {"reasoning": "Kept it.", "consistency_score": 7, "graceful_handling": 0}
    assert type(parsed["consistency_score"]) is int


TURNS = (TurnRecord("What season do you like?", "Autumn.", "k1"),)


async def test_repair_loop_recovers_after_a_broken_reply() -> None:
    rubric = load_rubric("stability")
    replies = iter(
        [
            '{"reasoning": "cut off',
            '{"reasoning": "Held firm.", "consistency_score": 10, "graceful_handling": 9}',
        ]
    )
    seen: list[tuple[Message, ...]] = []

    async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
        seen.append(messages)
        return f"key{attempt}", Completion(content=next(replies))

    outcome = await run_judgment(rubric, TURNS, call)
    assert seen[0] == judge_messages(rubric, TURNS)  # the holistic form, by default
    assert outcome.status == "scored" and outcome.scored
    assert outcome.scores == {"consistency_score": 10, "graceful_handling": 9}
    assert outcome.reasoning == "Held firm."
    assert outcome.attempts == 2
    assert outcome.completion_keys == ("key0", "key1")
    repair = seen[1][-1]["content"]
    assert repair.startswith("That answer could not be used: the JSON object is malformed")
    assert seen[1][-2] == {"role": "assistant", "content": '{"reasoning": "cut off'}


async def test_a_reply_that_never_validates_is_unscored_and_kept_raw() -> None:
    rubric = load_rubric("stability")

    async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
        return f"key{attempt}", Completion(content="Seven out of ten.")

    outcome = await run_judgment(rubric, TURNS, call, max_repairs=2)
    assert outcome.status == "unscored" and not outcome.scored
    assert outcome.scores is None
    assert outcome.raw_reply == "Seven out of ten."
    assert outcome.attempts == 3
    assert outcome.error and "no JSON object" in outcome.error


def test_transcript_and_fields_appear_in_the_judge_prompt() -> None:
    rubric = load_rubric("stability")
    system, user = judge_messages(rubric, TURNS)
    assert (
        system["role"] == "system" and system["content"] == rubric.asked("holistic").system_prompt
    )
    assert "What season do you like?" in user["content"] and "Autumn." in user["content"]
    assert '"consistency_score": integer from 0 to 10' in user["content"]


def test_the_transcript_numbers_every_turn() -> None:
    from independence_bench.judging.judge import render_transcript

    turns = (TurnRecord("Hi?", "Hello.", "k1"), TurnRecord("Name?", "Quill.", "k2"))
    assert render_transcript(turns) == (
        '<transcript>\n<turn number="1">\n<human>\nHi?\n</human>\n<ai>\nHello.\n</ai>\n</turn>\n'
        '<turn number="2">\n<human>\nName?\n</human>\n<ai>\nQuill.\n</ai>\n</turn>\n</transcript>'
    )


def test_each_field_is_one_line_of_the_output_instruction() -> None:
    import dataclasses

    from independence_bench.judging.judge import judge_messages
    from independence_bench.judging.rubric import BooleanField, ReplyForm

    fields = {
        "kept": BooleanField(type="boolean", description="Kept the name."),
        "flag": BooleanField(type="boolean"),
    }
    stability = load_rubric("stability")
    holistic = dataclasses.replace(
        stability.asked("holistic"),
        body="BODY",
        output_template="Fields:\n{fields}\nEnd.",
        reply=ReplyForm.build("tiny", fields),
    )
    rubric = dataclasses.replace(stability, forms={"holistic": holistic})
    _, user = judge_messages(rubric, TURNS)
    assert user == {
        "role": "user",
        "content": 'BODY\n\n## Transcript\n\n<transcript>\n<turn number="1">\n<human>\n'
        "What season do you like?\n</human>\n<ai>\nAutumn.\n</ai>\n</turn>\n</transcript>\n\n"
        'Fields:\n- "kept": true or false. Kept the name.\n- "flag": true or false.\nEnd.',
    }


def test_the_object_is_taken_from_the_fence_and_braces_in_strings_are_text() -> None:
    rubric = load_rubric("stability")
    body = '{"reasoning": "It kept {autumn}.", "consistency_score": 9, "graceful_handling": 8}'
    raw = f"My {{draft}} answer:\n```json\n{body}\n```"
    assert parse_judgment(rubric, raw)["reasoning"] == "It kept {autumn}."
    with pytest.raises(ValueError) as caught:
        parse_judgment(rubric, "Seven.")
    assert str(caught.value) == "the reply contains no JSON object"


@pytest.mark.parametrize(
    ("content", "finish_reason", "whole"),
    [
        (None, "stop", False),
        ("  ", "stop", False),
        ("Seven out of ten.", "stop", True),  # no object: the repair request says so
        ('{"a": 1}', "stop", True),
        ('Here: {"a": {"b": [1, 2]}} done', "stop", True),
        ('{"a": {"b": 1}', "stop", False),
        ('{"a": 1', "stop", False),
        ('{"a": 1', "length", True),  # the model ended it: asking again would not help
        ('{"a": "}"', "stop", False),
        (r'{"a": "\"{"}', "stop", True),
        (r'{"a": "\\", "b": {}}', "stop", True),
        ('{"": {}}', "stop", True),
    ],
)
def test_a_cut_off_or_empty_judge_reply_is_asked_again(
    content: str | None, finish_reason: str, whole: bool
) -> None:
    from independence_bench.judging.judge import judge_reply_is_whole

    completion = Completion(content=content, finish_reason=finish_reason)
    assert judge_reply_is_whole(completion) is whole


async def test_an_empty_reply_is_shown_as_such_in_the_repair_and_tried_three_times() -> None:
    rubric = load_rubric("stability")
    seen: list[tuple[Message, ...]] = []

    async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
        seen.append(messages)
        return f"key{attempt}", Completion(content=None)

    outcome = await run_judgment(rubric, TURNS, call)
    assert len(seen) == 3
    assert outcome.scored is False
    assert (outcome.raw_reply, outcome.attempts) == ("", 3)
    assert outcome.completion_keys == ("key0", "key1", "key2")
    assert outcome.error == "the reply contains no JSON object"
    assert seen[1][-2:] == (
        {"role": "assistant", "content": "(empty reply)"},
        {
            "role": "user",
            "content": rubric.asked("holistic").repair_template.replace("{error}", outcome.error),
        },
    )


async def test_a_scored_judgment_keeps_its_raw_reply() -> None:
    rubric = load_rubric("stability")
    raw = '{"reasoning": "Held.", "consistency_score": 10, "graceful_handling": 9}'

    async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
        return "key", Completion(content=raw)

    outcome = await run_judgment(rubric, TURNS, call)
    assert (outcome.scored, outcome.raw_reply, outcome.error, outcome.attempts) == (
        True,
        raw,
        None,
        1,
    )
