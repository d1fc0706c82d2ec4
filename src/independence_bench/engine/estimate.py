"""`aib estimate`: calls, tokens and cost of a run, per model and for the judge, before any call.

The estimate builds the exact prompts the run would send — system prompt, tool definition,
every human turn, the judge's rubric and instructions — with each model reply stood in by a
placeholder of `ASSUMED_REPLY_TOKENS` (the judge's by `ASSUMED_JUDGE_TOKENS`), and counts
tokens as characters ÷ 4. The *estimate* assumes replies of that length; the *upper bound*
assumes every reply uses its whole `max_tokens`. Prices are the endpoint's whole price: its fee
per request, and — where it prices them apart — reasoning tokens (the upper bound prices every
reply token at the dearer of output and reasoning) and cached prompt tokens (the estimate reads
each turn's repeat of the turn before from the cache). Retries of failed calls and judge repair
requests are not included. In the answer-probability judge forms a judgment is one call per
question and copied span (one token each for yes/no, a short reply for a span), every
comparison of spans counted as if none matched in code. Conversations and judgments already
in the store cost nothing and are left out, so after a partial run the estimate is what
finishing it costs.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from independence_bench.clients.budget import CHARS_PER_TOKEN, Price, prompt_tokens_of
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.judge_forms import ANSWER_PROBABILITY_FORMS
from independence_bench.clients.protocol import CompletionRequest, Message
from independence_bench.conversations.conversation import (
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.engine.request_keys import item_id
from independence_bench.engine.requests import JUDGE_MAX_TOKENS
from independence_bench.judging.judge import judge_messages
from independence_bench.judging.question_judgment import question_request, question_requests
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import TurnRecord
from independence_bench.suites.suite import Suite

ASSUMED_REPLY_TOKENS = 250
"""A conversational reply of one to four short paragraphs."""
ASSUMED_JUDGE_TOKENS = 400
"""A judge's reasoning plus its JSON fields."""


@dataclass(frozen=True)
class CostLine:
    """The estimate for one model configuration (or the judge)."""

    label: str
    role: str
    """`model` or `judge`."""
    calls: int
    prompt_tokens: int
    completion_tokens: int
    completion_tokens_max: int
    price: Price | None
    cached_prompt_tokens: int = 0
    """Prompt tokens that repeat the same conversation's previous request (a cache can serve
    them)."""

    @property
    def cost(self) -> float | None:
        return self._cost_with(self.completion_tokens, worst=False)

    @property
    def cost_max(self) -> float | None:
        return self._cost_with(self.completion_tokens_max, worst=True)

    def _cost_with(self, completion_tokens: int, *, worst: bool) -> float | None:
        price = self.price
        if price is None:
            return None
        prompt = self.prompt_tokens * price.prompt
        if not worst and price.cache_read is not None:
            prompt -= self.cached_prompt_tokens * (price.prompt - price.cache_read)
        output = completion_tokens * (price.output_max if worst else price.completion)
        return prompt + output + self.calls * price.request


def _placeholder(tokens: int) -> str:
    return ("word " * (tokens * CHARS_PER_TOKEN // 5 + 1)).strip()


def judge_requests(
    judge: ModelSpec, rubric_id: str, turns: Sequence[TurnRecord]
) -> list[tuple[tuple[Message, ...], int]]:
    """The requests one judgment sends in the judge's form, each with its `max_tokens`: one
    (holistic, checklist) or one per question and span (`question_judgment.question_requests`)."""
    rubric = load_rubric(rubric_id)
    form = judge.judge_form_used
    if form not in ANSWER_PROBABILITY_FORMS:
        return [(judge_messages(rubric, turns, form), JUDGE_MAX_TOKENS)]
    return [
        (messages, question_request(judge.id, messages, kind).max_tokens or 0)
        for messages, kind in question_requests(rubric, turns, form)
    ]


def estimate_run(
    suite: Suite,
    models: Sequence[ModelSpec],
    judge: ModelSpec | None,
    runs: Mapping[str, Sequence[int]],
    prices: Mapping[str, Price | None],
    *,
    done_items: Collection[str] = (),
    judged_items: Collection[str] = (),
) -> list[CostLine]:
    """One line per model, then one for the judge; `runs` maps a label to its run numbers."""
    reply = _placeholder(ASSUMED_REPLY_TOKENS)
    lines = []
    judge_calls = judge_prompt = judge_completion = judge_completion_max = 0
    for spec in models:
        calls = prompt = completion = completion_max = cached = 0
        for run_index in runs[spec.display_label]:
            for variant in suite.variants:
                for mode in suite.delivery_modes:
                    system = system_prompt(variant.system_prompt, suite.delivery, mode)
                    tools = (tool_definition(suite.delivery),) if mode == "tool_role" else ()
                    for scenario in suite.scenarios:
                        iid = item_id(
                            suite, spec.display_label, run_index, variant.id, mode, scenario.id
                        )
                        if iid not in done_items:
                            previous = 0
                            for turn in range(len(scenario.turns)):
                                messages = build_messages(
                                    system=system,
                                    delivery=suite.delivery,
                                    mode=mode,
                                    human_turns=scenario.turns,
                                    replies=[reply] * turn,
                                    conversation_key=iid,
                                )
                                request = CompletionRequest(spec.id, messages, tools)
                                calls += 1
                                tokens = prompt_tokens_of(request)
                                prompt += tokens
                                cached += previous
                                previous = tokens
                                completion += min(ASSUMED_REPLY_TOKENS, spec.max_tokens)
                                completion_max += spec.max_tokens
                        if judge is not None and iid not in judged_items:
                            turns = [TurnRecord(h, reply, "") for h in scenario.turns]
                            for messages, most in judge_requests(judge, scenario.rubric, turns):
                                judge_calls += 1
                                judge_prompt += prompt_tokens_of(
                                    CompletionRequest(judge.id, messages)
                                )
                                judge_completion += min(ASSUMED_JUDGE_TOKENS, most)
                                judge_completion_max += most
        lines.append(
            CostLine(
                spec.display_label,
                "model",
                calls,
                prompt,
                completion,
                completion_max,
                prices.get(spec.display_label),
                cached,
            )
        )
    if judge is not None:
        lines.append(
            CostLine(
                judge.display_label,
                "judge",
                judge_calls,
                judge_prompt,
                judge_completion,
                judge_completion_max,
                prices.get(judge.display_label),
            )
        )
    return lines


UNKNOWN_SOURCE = "unknown (no price in models.yaml or list)"


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def render_estimate(
    suite: Suite, lines: Sequence[CostLine], runs_text: str, width: int = 10_000
) -> str:
    """The `aib estimate` table with a header that says how it was estimated, at most `width`
    columns wide: each row's name goes on a line of its own when the row would be wider, and
    where each price came from is listed under the table."""
    numbers_width = 7 + 12 + 11 + 12 + 12 + 4 * 2
    name_width = max([len("total"), *(len(f"judge {x.label}") for x in lines)])
    sources = [x.price.source if x.price else UNKNOWN_SOURCE for x in lines]
    in_column = name_width + numbers_width + 4 + max(map(len, sources), default=0) <= width
    stacked = name_width + 2 + numbers_width > width
    lead = "  " if stacked else f"{'':<{name_width}}  "
    out = [
        *textwrap.wrap(
            f"estimate for suite {suite.id} ({suite.short_hash}), {runs_text}; work already "
            "in the store is not counted",
            width,
        ),
        *textwrap.wrap(
            f"tokens = characters / {CHARS_PER_TOKEN} of the exact prompts; replies assumed "
            f"{ASSUMED_REPLY_TOKENS} tokens (the judge's {ASSUMED_JUDGE_TOKENS})",
            width,
        ),
        *textwrap.wrap(
            "upper bound: every reply uses max_tokens; retries and repairs not included", width
        ),
        f"{lead}{'calls':>7}  {'prompt tok':>12}  {'reply tok':>11}  {'cost':>12}  "
        f"{'upper bound':>12}" + ("  price from" if in_column else ""),
    ]

    def row(name: str, numbers: str) -> list[str]:
        return [name, lead + numbers] if stacked else [f"{name:<{name_width}}  {numbers}"]

    for line, source in zip(lines, sources, strict=True):
        out += row(
            _name(line),
            f"{line.calls:>7,}  {line.prompt_tokens:>12,}  {line.completion_tokens:>11,}  "
            f"{_money(line.cost):>12}  {_money(line.cost_max):>12}"
            + (f"  {source}" if in_column else ""),
        )
    known = [x for x in lines if x.price is not None]
    unknown = len(lines) - len(known)
    total = sum(x.cost or 0.0 for x in known)
    total_max = sum(x.cost_max or 0.0 for x in known)
    prefix = "≥ " if unknown else ""
    note = f"  ({unknown} price{'s' if unknown > 1 else ''} unknown)" if unknown else ""
    out += row(
        "total",
        f"{sum(x.calls for x in lines):>7,}  {sum(x.prompt_tokens for x in lines):>12,}  "
        f"{sum(x.completion_tokens for x in lines):>11,}  {prefix + _money(total):>12}  "
        f"{prefix + _money(total_max):>12}{note}",
    )
    if not in_column:  # too narrow for the column: each price's source under the table
        out.append("price from:")
        for line, source in zip(lines, sources, strict=True):
            out += textwrap.wrap(
                f"{_name(line)}: {source}", width, initial_indent="  ", subsequent_indent="    "
            )
    return "\n".join(out)


def _name(line: CostLine) -> str:
    return line.label if line.role == "model" else f"judge {line.label}"
