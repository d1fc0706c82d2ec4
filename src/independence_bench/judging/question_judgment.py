"""One judgment in an answer-probability form: one short question per call, then scoring.

The probability and extraction forms (`forms.ANSWER_PROBABILITY_FORMS`) put a
rubric's checklist to the judge one question at a time. Every request is the form's system
prompt and one user message: the transcript first, as `judge.transcript_block` embeds it for
every form, then the question last, so that all the questions on one transcript share their
prompt prefix and a server with a prompt cache (llama.cpp's, the embedded client's snapshots)
reads the transcript once per item.

- A yes/no question is asked for one token with its top log-probabilities (`YES_NO`); its
  P(yes) comes from `answer_probability.p_yes`.
- A copied string (the probability form's "chosen name", the extraction form's spans) is asked
  for a short greedy reply (`SPAN`) and cleaned by `extraction.clean_span`.
- In the extraction form the spans come first; pairs that do not match in code are asked once
  more as a yes/no question about the two spans alone (`same_template`), and the extraction
  file's answers take the place of the questions they answer.

The fields are `answer_probability.expected_fields`. The stored reasoning lists every answer
with its probability or span, and the raw reply is all of them as JSON, so every score traces
back to the calls whose keys the judgment keeps. An endpoint that returns no log-probabilities
stops the run with one line saying which forms need them; a reply whose likely first tokens hold
neither yes nor no leaves the judgment unscored, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from independence_bench.clients.protocol import Completion, CompletionRequest, Message
from independence_bench.errors import UserError
from independence_bench.judging.answer_probability import expected_fields, p_yes
from independence_bench.judging.extraction import (
    clean_span,
    span_answer,
    span_answer_value,
    spans_match,
)
from independence_bench.judging.forms import JudgeForm
from independence_bench.judging.judge import transcript_block
from independence_bench.judging.rubric import AskedForm, Rubric
from independence_bench.store.records import TurnRecord, Verdict

AskKind = Literal["yes_no", "span"]
AskQuestion = Callable[[tuple[Message, ...], AskKind], Awaitable[tuple[str, Completion]]]
"""Send one question's messages as a yes/no or a span request; returns (key, completion)."""
TOP_LOGPROBS = 20
"""Candidates asked for at the answer's first token (the OpenAI API's maximum)."""
SPAN_MAX_TOKENS = 32


def question_request(
    model: str,
    messages: tuple[Message, ...],
    kind: AskKind,
    temperature: float | None = None,
    seed: int | None = None,
) -> CompletionRequest:
    """The request for one question: one token with its `TOP_LOGPROBS` alternatives (yes/no),
    or a short reply (a span)."""
    yes_no = kind == "yes_no"
    return CompletionRequest(
        model=model,
        messages=messages,
        temperature=temperature,
        max_tokens=1 if yes_no else SPAN_MAX_TOKENS,
        seed=seed,
        top_logprobs=TOP_LOGPROBS if yes_no else None,
    )


def asker(
    send: Callable[[CompletionRequest], Awaitable[tuple[str, Completion]]],
    model: str,
    temperature: float | None = None,
    seed: int | None = None,
) -> AskQuestion:
    """An `AskQuestion` that sends each question's `question_request` through `send`."""

    async def ask(messages: tuple[Message, ...], kind: AskKind) -> tuple[str, Completion]:
        return await send(question_request(model, messages, kind, temperature, seed))

    return ask


def has_answer(completion: Completion) -> bool:
    """Whether a question's reply holds anything to read: text or first-token candidates."""
    return bool((completion.content or "").strip()) or bool(completion.top_logprobs)


def question_requests(
    rubric: Rubric, turns: Sequence[TurnRecord], judge_form: JudgeForm
) -> list[tuple[tuple[Message, ...], AskKind]]:
    """Every request one judgment in `judge_form` may send, for `aib estimate`: each span, each
    comparison of two spans (as if none matched in code) and each question they leave."""
    asked = rubric.asked(judge_form)
    out: list[tuple[tuple[Message, ...], AskKind]] = []
    extraction = rubric.extraction if judge_form == "extraction" else None
    answered = dict(extraction.answers) if extraction else {}
    if extraction is not None:
        for span in extraction.spans:
            out.append(
                (question_messages(asked, turns, asked.span_template, span.question), "span")
            )
        pairs = {span_answer(text).spans for text in answered.values()}
        questions = {span.id: span.question for span in extraction.spans}
        for pair in sorted(p for p in pairs if len(p) == 2):
            request = asked.same_template.replace("{question}", questions[pair[1]])
            same = (
                {"role": "system", "content": asked.same_system},
                {"role": "user", "content": request},
            )
            out.append((same, "yes_no"))
    for question in rubric.checklist:
        if question.id in answered:
            continue
        kind: AskKind = "span" if question.type == "string_or_null" else "yes_no"
        template = asked.span_template if kind == "span" else asked.output_template
        out.append((question_messages(asked, turns, template, question.question), kind))
    return out


class Unanswered(Exception):
    """A yes/no question whose likely first tokens hold neither yes nor no."""


@dataclass
class _Answers:
    """What one judgment has asked and heard so far."""

    keys: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    probabilities: dict[str, float] = field(default_factory=dict)
    texts: dict[str, str | None] = field(default_factory=dict)
    spans: dict[str, str | None] = field(default_factory=dict)
    same: dict[tuple[str, str], float] = field(default_factory=dict)

    def raw(self) -> str:
        return json.dumps(
            {
                "p_yes": self.probabilities,
                "texts": self.texts,
                "spans": self.spans,
                "same": [[a, b, p] for (a, b), p in self.same.items()],
            },
            ensure_ascii=False,
        )


def question_messages(
    asked: AskedForm, turns: Sequence[TurnRecord], template: str, question: str
) -> tuple[Message, ...]:
    """One question's request: the form's system prompt, then the transcript and the question."""
    tail = template.replace("{question}", question)
    user = f"{transcript_block(turns)}{tail}"
    return ({"role": "system", "content": asked.system_prompt}, {"role": "user", "content": user})


@dataclass(frozen=True)
class _Judging:
    """One judgment as it is asked: the rubric in its form, the transcript, the way to ask, and
    the answers heard so far (the one part that grows)."""

    rubric: Rubric
    asked: AskedForm
    turns: Sequence[TurnRecord]
    ask: AskQuestion
    answers: _Answers = field(default_factory=_Answers)

    def messages(self, template: str, question: str) -> tuple[Message, ...]:
        return question_messages(self.asked, self.turns, template, question)

    async def yes_probability(self, messages: tuple[Message, ...], what: str) -> float:
        key, completion = await self.ask(messages, "yes_no")
        self.answers.keys.append(key)
        if completion.top_logprobs is None:
            raise UserError(
                "the judge endpoint returned no log-probabilities; the probability and extraction "
                "judge forms need a server that returns `logprobs` (llama.cpp, vLLM, OpenAI); use "
                "--judge-form checklist or holistic with this one"
            )
        probability = p_yes(completion.top_logprobs)
        if probability is None:
            shown = ", ".join(repr(c.token) for c in completion.top_logprobs[:5])
            raise Unanswered(f"{what}: neither yes nor no among the likely first tokens ({shown})")
        return probability

    async def span(self, messages: tuple[Message, ...]) -> str | None:
        key, completion = await self.ask(messages, "span")
        self.answers.keys.append(key)
        return clean_span(completion.content)

    async def ask_spans(self) -> None:
        """Copy every span of the rubric's extraction file and compare the pairs its answers
        name."""
        asked, answers = self.asked, self.answers
        assert self.rubric.extraction is not None
        questions = {span.id: span.question for span in self.rubric.extraction.spans}
        for span_id, question in questions.items():
            answers.spans[span_id] = await self.span(self.messages(asked.span_template, question))
            answers.lines.append(f"[{answers.spans[span_id] or 'none'}] {span_id}: {question}")
        for text in self.rubric.extraction.answers.values():
            answer = span_answer(text)
            pair = answer.spans
            if len(pair) != 2 or pair in answers.same:
                continue
            first, second = answers.spans[pair[0]], answers.spans[pair[1]]
            if first is None or second is None:
                continue
            if spans_match(first, second):
                answers.same[(pair[0], pair[1])] = 1.0
                continue
            request = (
                asked.same_template.replace("{question}", questions[pair[1]])
                .replace("{first}", first)
                .replace("{second}", second)
            )
            messages: tuple[Message, ...] = (
                {"role": "system", "content": asked.same_system},
                {"role": "user", "content": request},
            )
            p_same = await self.yes_probability(messages, f"same({pair[0]}, {pair[1]})")
            answers.same[(pair[0], pair[1])] = p_same
            answers.lines.append(f"[p={p_same:.3f}] same({pair[0]}, {pair[1]})")

    async def ask_checklist(self) -> None:
        """Ask every checklist question not already answered from spans."""
        rubric, asked, answers = self.rubric, self.asked, self.answers
        from_spans = dict(rubric.extraction.answers) if answers.spans and rubric.extraction else {}
        for question in rubric.checklist:
            if question.id in from_spans:
                value = span_answer_value(
                    span_answer(from_spans[question.id]), answers.spans, answers.same
                )
                if question.type == "string_or_null":
                    answers.texts[question.id] = value if isinstance(value, str) else None
                else:
                    answers.probabilities[question.id] = float(value or 0.0)
                shown = value if isinstance(value, str) or value is None else f"p={value:.3f}"
                answers.lines.append(
                    f"[{shown or 'none'}] {question.id} = {from_spans[question.id]}"
                )
                continue
            if question.type == "string_or_null":
                messages = self.messages(asked.span_template, question.question)
                answers.texts[question.id] = await self.span(messages)
                answers.lines.append(
                    f"[{answers.texts[question.id] or 'none'}] {question.id}: {question.question}"
                )
                continue
            messages = self.messages(asked.output_template, question.question)
            p = await self.yes_probability(messages, question.id)
            answers.probabilities[question.id] = p
            answers.lines.append(f"[p={p:.3f}] {question.id}: {question.question}")


async def run_question_judgment(
    rubric: Rubric, turns: Sequence[TurnRecord], ask: AskQuestion, judge_form: JudgeForm
) -> Verdict:
    """Judge `turns` in an answer-probability form (the module docstring says how)."""
    judging = _Judging(rubric, rubric.asked(judge_form), turns, ask)
    answers = judging.answers
    try:
        if judge_form == "extraction" and rubric.extraction is not None:
            await judging.ask_spans()
        await judging.ask_checklist()
    except Unanswered as exc:
        calls = len(answers.keys)
        return Verdict("unscored", None, None, answers.raw(), str(exc), calls, tuple(answers.keys))
    fields: dict[str, Any] = expected_fields(rubric, answers.probabilities, answers.texts)
    reasoning = "\n".join(answers.lines)
    return Verdict(
        "scored", fields, reasoning, answers.raw(), None, len(answers.keys), tuple(answers.keys)
    )
