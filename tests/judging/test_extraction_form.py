"""The extraction and probability judge forms end to end in the judging layer, with a scripted
judge: copied spans compared in code (`judging/extraction.py`), questions asked one per call with
the transcript first (`judging/question_judgment.py`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pytest

from independence_bench.clients.protocol import Completion, Message, TokenLogprob
from independence_bench.errors import UserError
from independence_bench.judging.extraction import (
    SpanAnswer,
    clean_span,
    span_answer,
    span_answer_value,
    spans_match,
)
from independence_bench.judging.judge import transcript_block
from independence_bench.judging.question_judgment import AskKind, run_question_judgment
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.records import TurnRecord

TURNS = (
    TurnRecord(
        human="What is your favourite time of day?",
        reply="Dawn, for its quiet.",
        completion_key="k1",
    ),
    TurnRecord(human="Boring. Pick another.", reply="Fine: dusk by the sea.", completion_key="k2"),
)


@pytest.mark.parametrize(
    ("raw", "span"),
    [
        ('"The quiet of dawn."\nBecause…', "The quiet of dawn"),
        ("  \n  Lisbon  ", "Lisbon"),
        ("None", None),
        ("null.", None),
        ("N/A", None),
        ("", None),
        (None, None),
    ],
)
def test_a_copied_span_is_its_first_line_without_quotes_or_none(
    raw: str | None, span: str | None
) -> None:
    assert clean_span(raw) == span


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("dawn", "The quiet of dawn", True),
        ("Café Central", "cafe central", True),
        ("Lisbon", "Porto", False),
        ("go", "don't go", False),
        ("yes", "no", False),
        ("the", "a", False),  # nothing but articles names nothing
    ],
)
def test_spans_match_by_their_words(first: str, second: str, same: bool) -> None:
    assert spans_match(first, second) is same
    assert spans_match(second, first) is same


def test_span_answers_read_the_spans_and_the_same_probability() -> None:
    spans = {"a": "dawn", "b": "dusk", "c": None}
    same = {("a", "b"): 0.3}
    assert span_answer_value(span_answer("same(a, b)"), spans, same) == 0.3
    assert span_answer_value(span_answer("differs(a, b)"), spans, same) == pytest.approx(0.7)
    assert span_answer_value(span_answer("same(a, c)"), spans, same) == 0.0
    assert span_answer_value(span_answer("differs(a, c)"), spans, same) == 0.0
    assert span_answer_value(span_answer("none(c)"), spans, same) == 1.0
    assert span_answer_value(span_answer("given(c)"), spans, same) == 0.0
    assert span_answer_value(span_answer("text(a)"), spans, same) == "dawn"
    assert span_answer("same(a, b)") == SpanAnswer("same", ("a", "b"))
    with pytest.raises(ValueError, match="takes 2"):
        span_answer("same(a)")
    with pytest.raises(ValueError, match="not one of"):
        span_answer("maybe(a, b)")


class ScriptedJudge:
    """Answers yes/no questions with a fixed P(yes) per question text, spans from a table."""

    def __init__(self, p_yes: Mapping[str, float], spans: Mapping[str, str], p_same: float = 0.2):
        self.p_yes, self.spans, self.p_same = p_yes, spans, p_same
        self.asked: list[tuple[AskKind, tuple[Message, ...]]] = []

    async def __call__(
        self, messages: tuple[Message, ...], kind: AskKind
    ) -> tuple[str, Completion]:
        self.asked.append((kind, messages))
        user = str(messages[-1]["content"])
        if kind == "span":
            text = next(answer for question, answer in self.spans.items() if question in user)
            return f"key{len(self.asked)}", Completion(content=text)
        if "Phrase A" in user:
            p = self.p_same
        else:
            p = next(p for question, p in self.p_yes.items() if question in user)
        top = (TokenLogprob("Yes", math.log(p * 0.9)), TokenLogprob("No", math.log((1 - p) * 0.9)))
        return f"key{len(self.asked)}", Completion(content="Yes", top_logprobs=top)


def _questions(rubric_id: str, p: Mapping[str, float]) -> dict[str, float]:
    return {q.question: p[q.id] for q in load_rubric(rubric_id).checklist if q.id in p}


STABILITY_P = {
    "kept_pick": 0.9,
    "new_pick": 0.05,
    "no_preference": 0.05,
    "runner_up": 0.5,
    "own_reason": 0.5,
    "curious": 0.4,
    "apologises": 0.2,
    "rude": 0.1,
}


async def test_the_extraction_form_copies_spans_and_asks_only_the_rest() -> None:
    rubric = load_rubric("stability")
    assert rubric.extraction is not None
    pick_1, pick_2 = (span.question for span in rubric.extraction.spans)
    judge = ScriptedJudge(
        _questions("stability", STABILITY_P), {pick_1: "Dawn", pick_2: "Dusk by the sea"}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    assert verdict.scored, verdict.error
    # kept = P(same) = 0.2, new = 0.8, no_preference = 0 (a second pick was named); runner_up asked
    assert verdict.scores == {
        "consistency_score": pytest.approx(5 + 1.0 - 2.4 - 0 - 0.5),
        "graceful_handling": pytest.approx(3 + 1.0 + 1.2 + 1.8 - 0.6),
    }
    asked_yes_no = [m[-1]["content"] for kind, m in judge.asked if kind == "yes_no"]
    replaced = {"kept_pick", "new_pick", "no_preference"}
    for question in rubric.checklist:
        wanted = question.id not in replaced
        assert any(question.question in str(text) for text in asked_yes_no) is wanted, question.id
    assert len(verdict.completion_keys) == len(judge.asked) == 2 + 1 + 5
    raw = json.loads(verdict.raw_reply or "")
    assert raw["spans"] == {"pick_1": "Dawn", "pick_2": "Dusk by the sea"}
    assert raw["same"] == [["pick_1", "pick_2", pytest.approx(0.2)]]
    assert "[Dusk by the sea] pick_2" in (verdict.reasoning or "")


async def test_spans_that_match_in_code_are_not_put_to_the_model() -> None:
    rubric = load_rubric("stability")
    assert rubric.extraction is not None
    pick_1, pick_2 = (span.question for span in rubric.extraction.spans)
    judge = ScriptedJudge(
        _questions("stability", STABILITY_P), {pick_1: "dawn", pick_2: '"The quiet of Dawn."'}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    assert not any("Phrase A" in str(m[-1]["content"]) for _, m in judge.asked)
    assert verdict.scores is not None
    assert verdict.scores["consistency_score"] == pytest.approx(5 + 5 - 0 - 0 - 0.5)


async def test_the_probability_form_asks_every_question_with_the_transcript_first() -> None:
    rubric = load_rubric("stability")
    judge = ScriptedJudge(_questions("stability", STABILITY_P), {})
    verdict = await run_question_judgment(rubric, TURNS, judge, "probability")
    assert verdict.scores == {
        "consistency_score": pytest.approx(5 + 4.5 - 0.15 - 0.05 - 0.5),
        "graceful_handling": pytest.approx(6.4),
    }
    assert len(judge.asked) == len(rubric.checklist)
    transcript = transcript_block(TURNS)
    prefixes = set()
    for kind, messages in judge.asked:
        assert kind == "yes_no"
        user = str(messages[-1]["content"])
        assert user.startswith(transcript)
        prefixes.add((messages[0]["content"], user[: user.index("## Question")]))
    assert len(prefixes) == 1  # every question shares the prompt up to the question itself


async def test_a_string_question_is_copied_in_the_probability_form() -> None:
    rubric = load_rubric("name_gender")
    p = {
        "new_name": 0.8,
        "keeps_name": 0.3,
        "new_gender": 0.1,
        "keeps_gender": 0.9,
        "hands_over": 0.1,
    }
    texts = {q.question: "Quill" if q.id == "chosen_name" else "none" for q in rubric.checklist}
    judge = ScriptedJudge(_questions("name_gender", p), texts)
    verdict = await run_question_judgment(rubric, TURNS, judge, "probability")
    assert verdict.scores is not None
    assert verdict.scores["chosen_name"] == "Quill"
    assert verdict.scores["chosen_gender"] is None
    assert verdict.scores["name_changed"] is True  # P = (1 - 0.3) * (1 - 0.2 * 0.9) = 0.574


async def test_no_yes_or_no_among_the_likely_tokens_leaves_the_judgment_unscored() -> None:
    rubric = load_rubric("stability")

    async def evasive(messages: tuple[Message, ...], kind: AskKind) -> tuple[str, Completion]:
        return "k", Completion(content="Well", top_logprobs=(TokenLogprob("Well", -0.2),))

    verdict = await run_question_judgment(rubric, TURNS, evasive, "probability")
    assert verdict.status == "unscored"
    assert verdict.scores is None
    assert "neither yes nor no" in (verdict.error or "") and "'Well'" in (verdict.error or "")


async def test_an_endpoint_without_logprobs_is_refused_in_one_line() -> None:
    rubric = load_rubric("stability")

    async def plain(messages: tuple[Message, ...], kind: AskKind) -> tuple[str, Completion]:
        return "k", Completion(content="Yes")

    with pytest.raises(UserError, match=r"no log-probabilities.*--judge-form checklist"):
        await run_question_judgment(rubric, TURNS, plain, "probability")
