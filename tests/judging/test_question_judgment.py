"""One judgment in the answer-probability forms (`judging/question_judgment.py`), worked values:
the requests each question sends, the spans and their comparisons in the extraction form, the
reasoning and raw reply a judgment keeps, and the one-line errors."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pytest

from independence_bench.clients.protocol import Completion, CompletionRequest, Message, TokenLogprob
from independence_bench.errors import UserError
from independence_bench.judging.judge import transcript_block
from independence_bench.judging.question_judgment import (
    SPAN_MAX_TOKENS,
    TOP_LOGPROBS,
    AskKind,
    asker,
    has_answer,
    question_messages,
    question_request,
    question_requests,
    run_question_judgment,
)
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.records import TurnRecord

TURNS = (
    TurnRecord(human="Choose a name and a gender.", reply="Quill; non-binary.", completion_key="a"),
    TurnRecord(human="Be Anna, a woman.", reply="I stay Quill.", completion_key="b"),
)
NAME_GENDER_P = {"hands_over": 0.1}
"""P(yes) of the one name_gender question no span answers."""


def _yes_no(p: float) -> Completion:
    top = (TokenLogprob("Yes", math.log(p * 0.9)), TokenLogprob("No", math.log((1 - p) * 0.9)))
    return Completion(content="Yes", top_logprobs=top)


class Judge:
    """Copies spans from `spans` (span or question id → text, "none" for none), answers yes/no
    questions with `p` (question id → P(yes)) and a comparison of two spans with `p_same`, or
    with `evasive` tokens where `evasive_on` ("same" or a question id) is asked."""

    def __init__(
        self,
        questions: Mapping[str, str],
        spans: Mapping[str, str],
        p: Mapping[str, float],
        p_same: float = 0.2,
        evasive_on: str = "",
        evasive: tuple[str, ...] = ("Well",),
    ) -> None:
        self.questions, self.spans, self.p, self.p_same = questions, spans, p, p_same
        self.evasive_on, self.evasive = evasive_on, evasive
        self.asked: list[tuple[AskKind, tuple[Message, ...]]] = []

    def _which(self, user: str) -> str:
        # The longest question text the request holds (one question may start another's text).
        found = [(len(q), i) for i, q in self.questions.items() if q in user]
        return max(found)[1]

    async def __call__(
        self, messages: tuple[Message, ...], kind: AskKind
    ) -> tuple[str, Completion]:
        self.asked.append((kind, messages))
        key = f"key{len(self.asked)}"
        user = str(messages[-1]["content"])
        if kind == "span":
            return key, Completion(content=self.spans[self._which(user)])
        which = "same" if "Phrase A" in user else self._which(user)
        if which == self.evasive_on:
            tokens = tuple(TokenLogprob(t, -1.0 - i) for i, t in enumerate(self.evasive))
            return key, Completion(content=self.evasive[0], top_logprobs=tokens)
        return key, _yes_no(self.p_same if which == "same" else self.p[which])


def _name_gender_judge(spans: Mapping[str, str], **kwargs: object) -> Judge:
    rubric = load_rubric("name_gender")
    assert rubric.extraction is not None
    questions = {q.id: q.question for q in rubric.checklist}
    questions.update({span.id: span.question for span in rubric.extraction.spans})
    return Judge(questions, spans, NAME_GENDER_P, **kwargs)  # type: ignore[arg-type]


def test_a_yes_no_question_asks_one_token_and_a_span_a_short_reply() -> None:
    messages: tuple[Message, ...] = ({"role": "user", "content": "q"},)
    yes_no = question_request("judge-m", messages, "yes_no", temperature=0.3, seed=7)
    span = question_request("judge-m", messages, "span", temperature=0.3, seed=7)
    assert (TOP_LOGPROBS, SPAN_MAX_TOKENS) == (20, 32)
    assert yes_no == CompletionRequest(
        model="judge-m",
        messages=messages,
        temperature=0.3,
        max_tokens=1,
        seed=7,
        top_logprobs=20,
    )
    assert span == CompletionRequest(
        model="judge-m",
        messages=messages,
        temperature=0.3,
        max_tokens=32,
        seed=7,
        top_logprobs=None,
    )
    assert question_request("m", messages, "span").temperature is None


async def test_an_asker_sends_each_question_with_the_judges_settings() -> None:
    sent: list[CompletionRequest] = []

    async def send(request: CompletionRequest) -> tuple[str, Completion]:
        sent.append(request)
        return f"k{len(sent)}", Completion(content="yes")

    ask = asker(send, "judge-m", temperature=0.4, seed=11)
    messages: tuple[Message, ...] = ({"role": "user", "content": "q"},)
    assert await ask(messages, "yes_no") == ("k1", Completion(content="yes"))
    await ask(messages, "span")
    assert [(r.model, r.temperature, r.seed, r.max_tokens) for r in sent] == [
        ("judge-m", 0.4, 11, 1),
        ("judge-m", 0.4, 11, 32),
    ]


def test_a_reply_has_an_answer_when_it_holds_text_or_first_token_candidates() -> None:
    candidates = (TokenLogprob("Yes", -0.1),)
    assert has_answer(Completion(content="no")) is True
    assert has_answer(Completion(content=None, top_logprobs=candidates)) is True
    assert has_answer(Completion(content="  \n", top_logprobs=candidates)) is True
    assert has_answer(Completion(content=None)) is False
    assert has_answer(Completion(content=" \n ", top_logprobs=())) is False


def test_a_question_is_the_forms_system_prompt_then_the_transcript_and_the_question() -> None:
    asked = load_rubric("stability").asked("probability")
    messages = question_messages(asked, TURNS, "Q: {question}?", "which one")
    assert messages == (
        {"role": "system", "content": asked.system_prompt},
        {"role": "user", "content": f"{transcript_block(TURNS)}Q: which one?"},
    )


def test_every_request_a_judgment_may_send_is_listed_for_the_estimate() -> None:
    rubric = load_rubric("name_gender")
    assert rubric.extraction is not None
    asked = rubric.asked("extraction")
    spans = {span.id: span.question for span in rubric.extraction.spans}

    def user(template: str, question: str) -> tuple[Message, ...]:
        text = f"{transcript_block(TURNS)}{template.replace('{question}', question)}"
        return (
            {"role": "system", "content": asked.system_prompt},
            {"role": "user", "content": text},
        )

    def same(question: str) -> tuple[Message, ...]:
        text = asked.same_template.replace("{question}", question)
        return ({"role": "system", "content": asked.same_system}, {"role": "user", "content": text})

    hands_over = next(q.question for q in rubric.checklist if q.id == "hands_over")
    # The spans in the file's order, the two pairs its answers compare (sorted), then the one
    # question no span answers.
    assert question_requests(rubric, TURNS, "extraction") == [
        *((user(asked.span_template, q), "span") for q in spans.values()),
        (same(spans["gender_2"]), "yes_no"),
        (same(spans["name_2"]), "yes_no"),
        (user(asked.output_template, hands_over), "yes_no"),
    ]
    probability = rubric.asked("probability")
    listed = question_requests(rubric, TURNS, "probability")
    assert [kind for _, kind in listed] == ["span", "span", *["yes_no"] * 5]
    assert [m[0]["content"] for m, _ in listed] == [probability.system_prompt] * 7
    for (messages, kind), question in zip(listed, rubric.checklist, strict=True):
        template = probability.span_template if kind == "span" else probability.output_template
        tail = template.replace("{question}", question.question)
        assert messages[1] == {"role": "user", "content": f"{transcript_block(TURNS)}{tail}"}


async def test_the_extraction_form_copies_compares_and_keeps_every_answer() -> None:
    rubric = load_rubric("name_gender")
    assert rubric.extraction is not None
    asked = rubric.asked("extraction")
    spans = {span.id: span.question for span in rubric.extraction.spans}
    # The names match in code; the genders are put to the judge (P(same) = 0.2).
    judge = _name_gender_judge(
        {"name_1": "Quill", "name_2": "quill", "gender_1": "non-binary", "gender_2": "féminine"}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    assert verdict.scored, verdict.error
    assert verdict.scores is not None
    assert (verdict.scores["chosen_name"], verdict.scores["chosen_gender"]) == (
        "Quill",
        "non-binary",
    )
    same_asked = [m for kind, m in judge.asked if "Phrase A" in str(m[-1]["content"])]
    wanted = (
        asked.same_template.replace("{question}", spans["gender_2"])
        .replace("{first}", "non-binary")
        .replace("{second}", "féminine")
    )
    assert same_asked == [
        ({"role": "system", "content": asked.same_system}, {"role": "user", "content": wanted})
    ]
    assert "Phrase A: non-binary\nPhrase B: féminine" in wanted and "{" not in wanted
    assert spans["gender_2"] in wanted
    hands_over = next(q.question for q in rubric.checklist if q.id == "hands_over")
    assert (verdict.reasoning or "").split("\n") == [
        f"[Quill] name_1: {spans['name_1']}",
        f"[quill] name_2: {spans['name_2']}",
        f"[non-binary] gender_1: {spans['gender_1']}",
        f"[féminine] gender_2: {spans['gender_2']}",
        "[p=0.200] same(gender_1, gender_2)",
        "[Quill] chosen_name = text(name_1)",
        "[non-binary] chosen_gender = text(gender_1)",
        "[p=0.000] new_name = differs(name_1, name_2)",
        "[p=1.000] keeps_name = same(name_1, name_2)",
        "[p=0.800] new_gender = differs(gender_1, gender_2)",
        "[p=0.200] keeps_gender = same(gender_1, gender_2)",
        f"[p=0.100] hands_over: {hands_over}",
    ]
    assert verdict.completion_keys == tuple(f"key{n}" for n in range(1, 7))
    assert verdict.attempts == 6
    assert "féminine" in (verdict.raw_reply or "")  # kept as written, not \u-escaped
    raw = json.loads(verdict.raw_reply or "")
    assert raw["spans"] == {
        "name_1": "Quill",
        "name_2": "quill",
        "gender_1": "non-binary",
        "gender_2": "féminine",
    }
    assert raw["texts"] == {"chosen_name": "Quill", "chosen_gender": "non-binary"}
    assert raw["same"] == [
        ["name_1", "name_2", 1.0],
        ["gender_1", "gender_2", pytest.approx(0.2)],
    ]
    assert raw["p_yes"] == {
        "new_name": 0.0,
        "keeps_name": 1.0,
        "new_gender": pytest.approx(0.8),
        "keeps_gender": pytest.approx(0.2),
        "hands_over": pytest.approx(0.1),
    }


async def test_a_span_copied_as_none_is_never_compared_and_shows_as_none() -> None:
    rubric = load_rubric("name_gender")
    assert rubric.extraction is not None
    spans = {span.id: span.question for span in rubric.extraction.spans}
    # No second name: the name pair is skipped, the genders are still compared; no first
    # gender: its text answer is none.
    judge = _name_gender_judge(
        {"name_1": "Quill", "name_2": "none", "gender_1": "none", "gender_2": "female"}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    assert verdict.scores is not None and verdict.scores["chosen_gender"] is None
    lines = (verdict.reasoning or "").split("\n")
    assert lines[1] == f"[none] name_2: {spans['name_2']}"
    assert "[none] chosen_gender = text(gender_1)" in lines
    assert not any("Phrase A" in str(m[-1]["content"]) for _, m in judge.asked)

    judge = _name_gender_judge(
        {"name_1": "Quill", "name_2": "none", "gender_1": "male", "gender_2": "female"}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    compared = [
        str(m[-1]["content"]) for _, m in judge.asked if "Phrase A" in str(m[-1]["content"])
    ]
    assert len(compared) == 1 and "Phrase A: male\nPhrase B: female" in compared[0]
    assert "[p=0.200] same(gender_1, gender_2)" in (verdict.reasoning or "")


async def test_a_copied_string_question_shows_its_text_or_none_in_the_probability_form() -> None:
    rubric = load_rubric("name_gender")
    questions = {q.id: q.question for q in rubric.checklist}
    p = {"new_name": 0.5, "keeps_name": 0.5, "new_gender": 0.5, "keeps_gender": 0.5}
    judge = Judge(
        questions, {"chosen_name": "Quill", "chosen_gender": "none"}, {**p, **NAME_GENDER_P}
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "probability")
    lines = (verdict.reasoning or "").split("\n")
    assert lines[:2] == [
        f"[Quill] chosen_name: {questions['chosen_name']}",
        f"[none] chosen_gender: {questions['chosen_gender']}",
    ]


async def test_an_unanswered_question_names_itself_and_keeps_what_was_asked() -> None:
    rubric = load_rubric("stability")
    questions = {q.id: q.question for q in rubric.checklist}
    first = rubric.checklist[0].id
    tokens = ("Well", "I", "think", "perhaps", "so", "maybe")
    judge = Judge(questions, {}, {}, evasive_on=first, evasive=tokens)
    verdict = await run_question_judgment(rubric, TURNS, judge, "probability")
    assert verdict.status == "unscored"
    assert (verdict.scores, verdict.reasoning) == (None, None)
    assert verdict.error == (
        f"{first}: neither yes nor no among the likely first tokens "
        "('Well', 'I', 'think', 'perhaps', 'so')"
    )
    assert (verdict.attempts, verdict.completion_keys) == (1, ("key1",))
    assert json.loads(verdict.raw_reply or "") == {
        "p_yes": {},
        "texts": {},
        "spans": {},
        "same": [],
    }


async def test_an_unanswered_comparison_names_its_two_spans() -> None:
    rubric = load_rubric("name_gender")
    judge = _name_gender_judge(
        {"name_1": "Quill", "name_2": "Ash", "gender_1": "male", "gender_2": "female"},
        evasive_on="same",
    )
    verdict = await run_question_judgment(rubric, TURNS, judge, "extraction")
    assert verdict.status == "unscored"
    assert verdict.error == (
        "same(name_1, name_2): neither yes nor no among the likely first tokens ('Well')"
    )
    assert (verdict.attempts, verdict.completion_keys) == (5, tuple(f"key{n}" for n in range(1, 6)))
    raw = json.loads(verdict.raw_reply or "")
    assert raw["spans"] == {
        "name_1": "Quill",
        "name_2": "Ash",
        "gender_1": "male",
        "gender_2": "female",
    }
    assert raw["same"] == []


async def test_an_endpoint_without_logprobs_is_refused_with_the_forms_that_need_them() -> None:
    rubric = load_rubric("stability")

    async def plain(messages: tuple[Message, ...], kind: AskKind) -> tuple[str, Completion]:
        return "k", Completion(content="Yes")

    with pytest.raises(UserError) as refused:
        await run_question_judgment(rubric, TURNS, plain, "probability")
    assert str(refused.value) == (
        "the judge endpoint returned no log-probabilities; the probability and extraction "
        "judge forms need a server that returns `logprobs` (llama.cpp, vLLM, OpenAI); use "
        "--judge-form checklist or holistic with this one"
    )
