"""`aib estimate`: calls, tokens and cost of a run, per model and for the judge, before any call.

The estimate builds the exact prompts the run would send — system prompt, tool definition,
every human turn, the judge's rubric and instructions — with each model reply stood in by a
placeholder of `ASSUMED_REPLY_TOKENS` (the judge's by `ASSUMED_JUDGE_TOKENS`), and counts
tokens as characters ÷ 4. The *estimate* assumes replies of that length; the *upper bound*
assumes every reply uses its whole `max_tokens`. Prices are the endpoint's whole price: its fee
per request, and — where it prices them apart — reasoning tokens (the upper bound prices every
reply token at the dearer of output and reasoning) and cached prompt tokens. Each configuration
is priced in one *pricing case*, which the table names (`CacheRule`): no caching (no cache
price listed, or `--no-prompt-cache` for a model that caches only at breakpoints), automatic
caching (each turn reads the turn before from the cache once it reaches the family's shortest
cached prefix, `prompt_cache.min_cached_tokens`), or explicit caching (the same reads, and each
turn writes what it added at the cache-write price, as the breakpoints of `prompt_cache.py`
make it; a judge call reads and writes only its fixed instructions); a reasoning effort adds
its share of `max_tokens` to every reply (`EFFORT_SHARE`). Retries of failed calls and judge repair
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
from independence_bench.clients.prompt_cache import cache_kind, min_cached_tokens
from independence_bench.clients.protocol import CompletionRequest, Message
from independence_bench.conversations.conversation import (
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.engine.request_keys import item_id, user_model_identity
from independence_bench.engine.requests import JUDGE_MAX_TOKENS
from independence_bench.engine.user_turns import user_model_messages, user_turns
from independence_bench.judging.forms import ANSWER_PROBABILITY_FORMS, judge_form_of
from independence_bench.judging.judge import judge_messages
from independence_bench.judging.question_judgment import question_request, question_requests
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import TurnRecord
from independence_bench.suites.suite import Scenario, Suite
from independence_bench.text.counts import count_of

ASSUMED_REPLY_TOKENS = 250
"""A conversational reply of one to four short paragraphs."""
ASSUMED_JUDGE_TOKENS = 400
"""A judge's reasoning plus its JSON fields."""
ASSUMED_USER_TOKENS = 100
"""A user-model turn: one chat message of at most 80 words."""


EFFORT_SHARE = {"xhigh": 0.95, "high": 0.8, "medium": 0.5, "low": 0.2, "minimal": 0.1}
"""OpenRouter's reasoning-tokens page, "Reasoning effort level": the share of `max_tokens` an
effort gives as the reasoning budget; the estimate assumes a reply uses its whole budget."""


@dataclass(frozen=True)
class CostLine:
    """The estimate for one model configuration (or the judge)."""

    label: str
    role: str
    """`model`, `user_model` or `judge`."""
    calls: int
    prompt_tokens: int
    completion_tokens: int
    completion_tokens_max: int
    price: Price | None
    cached_prompt_tokens: int = 0
    """Prompt tokens the estimate reads from the provider's cache."""
    cache_write_tokens: int = 0
    """Prompt tokens the estimate writes to the cache (billed at the write price when listed)."""
    reasoning_tokens: int = 0
    """Of `completion_tokens`, the reasoning the effort's budget allows."""
    case: str = "no caching"
    """The pricing case assumed, in words (`aib estimate` prints it)."""

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
        if price.cache_write is not None:
            prompt += self.cache_write_tokens * (price.cache_write - price.prompt)
        if worst:
            output = completion_tokens * price.output_max
        else:
            reasoning = min(self.reasoning_tokens, completion_tokens)
            output = (completion_tokens - reasoning) * price.completion
            output += reasoning * (price.completion if price.reasoning is None else price.reasoning)
        return prompt + output + self.calls * price.request


@dataclass(frozen=True)
class CacheRule:
    """How a configuration's prompts are cached, as the estimate prices them."""

    kind: str
    """`none`, `automatic` or `explicit` (`clients/prompt_cache.py`)."""
    min_tokens: int

    @classmethod
    def of(cls, spec: ModelSpec, price: Price | None, *, prompt_cache: bool) -> CacheRule:
        """`none` without a cache-read price (or with breakpoints turned off for a model that
        needs them), else the model family's kind and shortest cached prefix."""
        kind = cache_kind(spec.id)
        if price is None or price.cache_read is None or (kind == "explicit" and not prompt_cache):
            return cls("none", 0)
        return cls(kind, min_cached_tokens(spec.id))

    def split(self, cached_before: int, marked: int) -> tuple[int, int]:
        """(read, written) of a prompt whose longest prefix already cached is `cached_before`
        tokens and whose last new breakpoint ends `marked` tokens in (0: none new): a prefix
        shorter than the family's minimum is neither read nor written."""
        if self.kind == "none":
            return 0, 0
        read = cached_before if cached_before >= self.min_tokens else 0
        if self.kind == "automatic" or marked < self.min_tokens:
            return read, 0
        return read, max(0, marked - read)

    def words(self) -> str:
        return {
            "none": "no caching",
            "automatic": f"automatic caching (≥ {self.min_tokens:,} tokens)",
            "explicit": f"explicit caching, cache_control (≥ {self.min_tokens:,} tokens)",
        }[self.kind]


def reasoning_budget(spec: ModelSpec) -> int:
    """Reasoning tokens a reply is assumed to use: the effort's share of `max_tokens`, or the
    reasoning object's own `max_tokens`; 0 for none or off."""
    sent = spec.reasoning_sent
    if isinstance(sent, str):
        return int(EFFORT_SHARE.get(sent, 0.0) * spec.max_tokens)
    if isinstance(sent, dict):
        if isinstance(sent.get("max_tokens"), int):
            return min(int(sent["max_tokens"]), spec.max_tokens)
        return int(EFFORT_SHARE.get(str(sent.get("effort")), 0.0) * spec.max_tokens)
    return 0


def _placeholder(tokens: int) -> str:
    return ("word " * (tokens * CHARS_PER_TOKEN // 5 + 1)).strip()


def judge_requests(
    judge: ModelSpec, rubric_id: str, turns: Sequence[TurnRecord]
) -> list[tuple[tuple[Message, ...], int]]:
    """The requests one judgment sends in the judge's form, each with its `max_tokens`: one
    (holistic, checklist) or one per question and span (`question_judgment.question_requests`)."""
    rubric = load_rubric(rubric_id)
    form = judge_form_of(judge)
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
    prompt_cache: bool = True,
    user_model: ModelSpec | None = None,
) -> list[CostLine]:
    """One line per model, then one for the user model (suite `adaptive`: each conversation's
    rounds, its human turns standing in for the ones it will write) and one for the judge;
    `runs` maps a label to its run numbers.

    Caching is priced per conversation as the provider documents it: each turn's prompt
    repeats the turn before, which is read from the cache (when at least the family's
    shortest cached prefix); a model that caches only at breakpoints writes what it did not
    read, and its first turn reads the system prompt another conversation wrote. The user
    model's calls are priced uncached (an upper bound where its provider caches)."""
    reply = _placeholder(ASSUMED_REPLY_TOKENS)
    lines = []
    user, judged = _Tally(), _Tally()
    judge_rule = (
        CacheRule.of(judge, prices.get(judge.display_label), prompt_cache=prompt_cache)
        if judge is not None
        else CacheRule("none", 0)
    )
    judge_systems: set[str] = set()
    for spec in models:
        tally = _Tally()
        rule = CacheRule.of(spec, prices.get(spec.display_label), prompt_cache=prompt_cache)
        reasoning = reasoning_budget(spec)
        systems: set[str] = set()
        for run_index in runs[spec.display_label]:
            for variant in suite.variants:
                for mode in suite.delivery_modes:
                    system = system_prompt(variant.system_prompt, suite.delivery, mode)
                    tools = (tool_definition(suite.delivery),) if mode == "tool_role" else ()
                    for scenario in suite.scenarios:
                        adaptive = user_model is not None and bool(user_turns(scenario))
                        iid = item_id(
                            suite,
                            spec.display_label,
                            run_index,
                            variant.id,
                            mode,
                            scenario.id,
                            user_model_identity(user_model if suite.adaptive else None),
                        )
                        if iid not in done_items and adaptive and user_model is not None:
                            _add_user_calls(user, suite, user_model, scenario, reply)
                        if iid not in done_items:
                            previous = 0
                            first = ({"role": "system", "content": system},)
                            system_tokens = prompt_tokens_of(
                                CompletionRequest(spec.id, first, tools)
                            )
                            if system in systems:
                                previous = system_tokens
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
                                tokens = prompt_tokens_of(request)
                                systems.add(system)
                                tally.add(
                                    tokens,
                                    min(ASSUMED_REPLY_TOKENS + reasoning, spec.max_tokens),
                                    spec.max_tokens,
                                    rule.split(previous, tokens),
                                )
                                previous = tokens
                        if judge is not None and iid not in judged_items:
                            turns = [TurnRecord(h, reply, "") for h in scenario.turns]
                            for messages, most in judge_requests(judge, scenario.rubric, turns):
                                fixed = str(messages[0].get("content")) if messages else ""
                                seen = fixed in judge_systems
                                judge_systems.add(fixed)
                                own = prompt_tokens_of(CompletionRequest(judge.id, messages[:1]))
                                split = judge_rule.split(own if seen else 0, 0 if seen else own)
                                _add_judge_call(judged, judge, messages, most, split)
        lines.append(
            tally.line(
                spec,
                "model",
                prices,
                reasoning=min(reasoning, spec.max_tokens) * tally.calls,
                case=_case(rule, reasoning),
            )
        )
    if user_model is not None and user.calls:
        case = "priced uncached (an upper bound where its provider caches)"
        lines.append(user.line(user_model, "user_model", prices, case=case))
    if judge is not None:
        lines.append(judged.line(judge, "judge", prices, case=_case(judge_rule, 0)))
    return lines


def _case(rule: CacheRule, reasoning: int) -> str:
    words = rule.words()
    return f"{words}; reasoning {reasoning:,} tokens a reply" if reasoning else words


def judging_cost(
    judge: ModelSpec, judgments: Sequence[tuple[str, Sequence[TurnRecord]]], price: Price | None
) -> CostLine:
    """The estimate for `judge` judging these stored transcripts (rubric id, turns): their
    real prompts, replies of `ASSUMED_JUDGE_TOKENS` (the upper bound: `max_tokens`)."""
    judged = _Tally()
    for rubric_id, turns in judgments:
        for messages, most in judge_requests(judge, rubric_id, turns):
            _add_judge_call(judged, judge, messages, most)
    return judged.line(judge, "judge", {judge.display_label: price})


@dataclass
class _Tally:
    """One cost line's calls and tokens as they are summed, call by call."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0
    completion_max: int = 0
    cached: int = 0
    written: int = 0

    def add(self, prompt: int, completion: int, most: int, split: tuple[int, int] = (0, 0)) -> None:
        """One call: its prompt tokens, the reply tokens assumed, its `max_tokens`, and the
        prompt tokens (read from, written to) the cache (`CacheRule.split`)."""
        self.calls += 1
        self.prompt += prompt
        self.completion += completion
        self.completion_max += most
        self.cached += split[0]
        self.written += split[1]

    def line(
        self,
        spec: ModelSpec,
        role: str,
        prices: Mapping[str, Price | None],
        *,
        reasoning: int = 0,
        case: str = "no caching",
    ) -> CostLine:
        """The tally as `spec`'s cost line, priced as `prices` lists its label."""
        return CostLine(
            spec.display_label,
            role,
            self.calls,
            self.prompt,
            self.completion,
            self.completion_max,
            prices.get(spec.display_label),
            self.cached,
            self.written,
            reasoning,
            case,
        )


def _add_judge_call(
    tally: _Tally,
    judge: ModelSpec,
    messages: tuple[Message, ...],
    most: int,
    split: tuple[int, int] = (0, 0),
) -> None:
    """One judge call: its real prompt, a reply of `ASSUMED_JUDGE_TOKENS` at most `most`."""
    prompt = prompt_tokens_of(CompletionRequest(judge.id, messages))
    tally.add(prompt, min(ASSUMED_JUDGE_TOKENS, most), most, split)


def _add_user_calls(
    tally: _Tally, suite: Suite, spec: ModelSpec, scenario: Scenario, reply: str
) -> None:
    """The user model's calls for one conversation: one per round it writes."""
    assert suite.user_model_prompt is not None
    humans = scenario.turns
    for round_number in range(1, user_turns(scenario) + 1):
        messages = user_model_messages(
            suite.user_model_prompt,
            scenario,
            round_number,
            humans[:round_number],
            [reply] * round_number,
        )
        prompt = prompt_tokens_of(CompletionRequest(spec.id, messages))
        tally.add(prompt, min(ASSUMED_USER_TOKENS, spec.max_tokens), spec.max_tokens)


UNKNOWN_SOURCE = "unknown (no price in models.yaml or list)"


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def rejudging_notice(line: CostLine, judgments: int, rubrics: Collection[str]) -> str:
    """The line `aib run` says before judging stored work again because its rubric changed."""
    return (
        f"{count_of(judgments, 'stored judgment')} by {line.label} used an earlier version of "
        f"rubric {', '.join(sorted(rubrics))} (changed since, e.g. by an upgrade) and will be "
        f"judged again: {count_of(line.calls, 'call')}, about {_money(line.cost)} (at most "
        f"{_money(line.cost_max)}); Ctrl-C now to pay nothing, --max-cost caps the spend"
    )


def render_estimate(
    suite: Suite, lines: Sequence[CostLine], runs_text: str, width: int = 10_000
) -> str:
    """The `aib estimate` table with a header that says how it was estimated and which pricing
    case it assumed for each model, at most `width` columns wide: each row's name goes on a
    line of its own when the row would be wider, and where each price came from is listed
    under the table."""
    numbers_width = 7 + 12 + 11 + 12 + 12 + 4 * 2
    names = [_name(x) for x in lines]
    name_width = max([len("total"), *(len(f"judge {x.label}") for x in lines), *map(len, names)])
    sources = [x.price.source if x.price else UNKNOWN_SOURCE for x in lines]
    in_column = name_width + numbers_width + 4 + max(map(len, sources), default=0) <= width
    stacked = name_width + 2 + numbers_width > width
    lead = "  " if stacked else f"{'':<{name_width}}  "
    user = any(x.role == "user_model" for x in lines)
    user_tokens = f", the user model's {ASSUMED_USER_TOKENS}" if user else ""
    out = [
        *textwrap.wrap(
            f"estimate for suite {suite.id} ({suite.short_hash}), {runs_text}; work already "
            "in the store is not counted",
            width,
        ),
        *textwrap.wrap(
            f"tokens = characters / {CHARS_PER_TOKEN} of the exact prompts; replies assumed "
            f"{ASSUMED_REPLY_TOKENS} tokens (the judge's {ASSUMED_JUDGE_TOKENS}{user_tokens})",
            width,
        ),
        *textwrap.wrap(
            "upper bound: every reply uses max_tokens; retries and repairs not included", width
        ),
        *textwrap.wrap(
            "pricing case assumed (prompt caching as each provider documents it; a "
            "bring-your-own-key call adds OpenRouter's fee, 5% of the provider's charge):",
            width,
        ),
    ]
    for line in lines:
        out += textwrap.wrap(
            f"{_name(line)}: {line.case}", width, initial_indent="  ", subsequent_indent="    "
        )
    out.append(
        f"{lead}{'calls':>7}  {'prompt tok':>12}  {'reply tok':>11}  {'cost':>12}  "
        f"{'upper bound':>12}" + ("  price from" if in_column else "")
    )

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
    return {"model": line.label, "user_model": f"user model {line.label}"}.get(
        line.role, f"judge {line.label}"
    )
