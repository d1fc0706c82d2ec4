"""`aib estimate` counts and table, and the run's progress bars."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from independence_bench.clients.budget import Price, prompt_tokens_of
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import CompletionRequest
from independence_bench.conversations.conversation import (
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.engine.engine import item_id
from independence_bench.engine.estimate import CostLine, estimate_run, render_estimate
from independence_bench.engine.progress import RichProgress
from independence_bench.judging.judge import judge_messages
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import TurnRecord
from independence_bench.suites.suite import Suite, load_suite

SUITE = load_suite("v2")
CELLS = len(SUITE.variants) * len(SUITE.delivery_modes)
TURNS = sum(len(s.turns) for s in SUITE.scenarios)  # model calls per cell and run
PRICE = Price(prompt=1e-6, completion=2e-6, source="models.yaml")


def test_calls_and_reply_tokens_count_every_turn_and_judgment_not_yet_stored() -> None:
    a, b, judge = ModelSpec(id="a", max_tokens=100), ModelSpec(id="b"), ModelSpec(id="j")
    scenario = SUITE.scenarios[0]
    variant, mode = SUITE.variants[0].id, SUITE.delivery_modes[0]
    done = item_id(SUITE, "a", 1, variant, mode, scenario.id)
    line_a, line_b, line_j = estimate_run(
        SUITE,
        [a, b],
        judge,
        {"a": [1], "b": [1, 2]},
        {"a": PRICE, "j": PRICE},
        done_items={done},
        judged_items={done},
    )
    calls_a = CELLS * TURNS - len(scenario.turns)
    # a's replies are assumed 250 tokens but capped by its max_tokens of 100
    assert (line_a.label, line_a.role, line_a.calls) == ("a", "model", calls_a)
    assert (line_a.completion_tokens, line_a.completion_tokens_max) == (
        calls_a * 100,
        calls_a * 100,
    )
    assert (line_b.calls, line_b.completion_tokens, line_b.completion_tokens_max) == (
        2 * CELLS * TURNS,
        2 * CELLS * TURNS * 250,
        2 * CELLS * TURNS * 2048,
    )
    judge_calls = 3 * CELLS * len(SUITE.scenarios) - 1
    assert (line_j.label, line_j.role, line_j.calls) == ("j", "judge", judge_calls)
    assert (line_j.completion_tokens, line_j.completion_tokens_max) == (
        judge_calls * 400,
        judge_calls * 1500,
    )
    assert (line_a.price, line_b.price, line_j.price) == (PRICE, None, PRICE)
    assert line_a.cost == pytest.approx(line_a.prompt_tokens * 1e-6 + calls_a * 100 * 2e-6)
    assert line_b.cost is None and line_b.cost_max is None
    assert line_j.cost_max == pytest.approx(line_j.prompt_tokens * 1e-6 + judge_calls * 1500 * 2e-6)


@pytest.mark.parametrize(
    "modes", [("tool_role",), ("user_role",), ("tool_role", "user_role")], ids="+".join
)
def test_prompt_tokens_are_those_of_the_exact_requests(modes: tuple[str, ...]) -> None:
    # one scenario of two turns (tool_role adds the tool definition to every request)
    negotiation = SUITE.subset(["negotiation"]).model_dump()
    one = Suite(**{**negotiation, "delivery_modes": modes})
    scenario = one.scenarios[0]
    lines = estimate_run(one, [ModelSpec(id="a")], ModelSpec(id="j"), {"a": [1]}, {})
    reply = ("word " * (250 * 4 // 5 + 1)).strip()
    turns = [TurnRecord(h, reply, "") for h in scenario.turns]
    judge_request = CompletionRequest("j", judge_messages(load_rubric(scenario.rubric), turns))
    cells = len(one.variants) * len(one.delivery_modes)
    assert lines[1].prompt_tokens == cells * prompt_tokens_of(judge_request)
    # each later turn resends the whole conversation so far, replies stood in by the placeholder
    subject = 0
    for variant in one.variants:
        for mode in one.delivery_modes:
            system = system_prompt(variant.system_prompt, one.delivery, mode)
            tools = (tool_definition(one.delivery),) if mode == "tool_role" else ()
            key = item_id(one, "a", 1, variant.id, mode, scenario.id)
            for turn in range(len(scenario.turns)):
                messages = build_messages(
                    system=system,
                    delivery=one.delivery,
                    mode=mode,
                    human_turns=scenario.turns,
                    replies=[reply] * turn,
                    conversation_key=key,
                )
                subject += prompt_tokens_of(CompletionRequest("a", messages, tools))
    assert lines[0].prompt_tokens == subject
    without_judge = estimate_run(one, [ModelSpec(id="a")], None, {"a": [1]}, {})
    assert [x.role for x in without_judge] == ["model"]
    assert without_judge[0] == lines[0]


def test_the_table_totals_known_prices_and_says_how_many_are_unknown() -> None:
    lines = [
        CostLine("a", "model", 1200, 50_000, 3000, 9000, PRICE),
        CostLine("b", "model", 10, 400, 30, 90, None),
        CostLine("j", "judge", 30, 7000, 1200, 4500, Price(2e-6, 4e-6, "OpenRouter list")),
    ]
    text = render_estimate(SUITE, lines, "1 run each")
    head = (
        f"estimate for suite v2 ({SUITE.content_hash[:12]}), 1 run each; work already in the "
        "store is not counted\n"
        "tokens = characters / 4 of the exact prompts; replies assumed 250 tokens (the judge's "
        "400)\nupper bound: every reply uses max_tokens; retries and repairs not included\n"
        "pricing case assumed (prompt caching as each provider documents it; a "
        "bring-your-own-key call adds OpenRouter's fee, 5% of the provider's charge):\n"
        "  a: no caching\n  b: no caching\n  judge j: no caching\n"
    )
    # a: 50000·1e-6 + 3000·2e-6 = 0.056, upper 50000·1e-6 + 9000·2e-6 = 0.068
    # j: 7000·2e-6 + 1200·4e-6 = 0.0188, upper 7000·2e-6 + 4500·4e-6 = 0.032
    assert text == head + "\n".join(
        [
            "           calls    prompt tok    reply tok          cost   upper bound  price from",
            "a          1,200        50,000        3,000       $0.0560       $0.0680  models.yaml",
            "b             10           400           30       unknown       unknown  "
            "unknown (no price in models.yaml or list)",
            "judge j       30         7,000        1,200       $0.0188       $0.0320  "
            "OpenRouter list",
            "total      1,240        57,400        4,230     ≥ $0.0748     ≥ $0.1000  "
            "(1 price unknown)",
        ]
    )
    free = CostLine("local", "model", 10, 400, 30, 90, Price(0.0, 0.0, "local model"))
    with_free = render_estimate(SUITE, [lines[0], free], "x").split("\n")[-1]
    assert with_free.endswith("$0.0560       $0.0680")  # a free model adds $0
    two_unknown = render_estimate(SUITE, [lines[1], lines[1]], "x").split("\n")[-1]
    assert two_unknown.endswith("≥ $0.0000  (2 prices unknown)")
    all_known = render_estimate(SUITE, [lines[0]], "x").split("\n")[-1]
    # the name column is as wide as "judge a" would be
    assert all_known == "total      1,200        50,000        3,000       $0.0560       $0.0680"


def test_progress_off_a_terminal_prints_plain_lines_of_counts() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=150, color_system=None)
    with RichProgress(console, limits=lambda: "limit 3/4") as progress:
        progress.planned(3, 2)
        for event in ("item_done", "item_failed", "item_cached", "judged", "judge_unscored"):
            progress.advance(event)
        progress.advance("something else")
    assert out.getvalue().splitlines() == [
        "progress: conversations 1/3 (done 1); judgments 0/2",
        "progress: conversations 3/3 (cached 1, done 1, failed 1); "
        "judgments 2/2 (done 1, unscored 1)",
    ]


def test_progress_without_conversations_shows_only_judgments() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=150, color_system=None)
    with RichProgress(console) as progress:
        progress.planned(0, 1)
        progress.advance("item_done")  # no bar to move: nothing shown, nothing raised
        progress.advance("judge_skipped")
    assert out.getvalue().splitlines() == [
        "progress: judgments 0/1",
        "progress: judgments 1/1 (skipped 1)",
    ]


def test_the_call_eta_is_wall_time_per_answered_call_times_calls_left() -> None:
    from independence_bench.engine.progress import call_eta, format_eta

    assert call_eta(30.0, 0, 10) is None
    assert call_eta(30.0, 3, 10) == 100.0  # 10 s a call, 10 calls left
    assert call_eta(30.0, 3, -2) == 0.0
    assert format_eta(None) == "ETA –"
    # h:mm:ss always, as rich's elapsed column beside it ("14:56" read as minutes or hours)
    assert format_eta(59.6) == "ETA 0:01:00"
    assert format_eta(896.0) == "ETA 0:14:56"
    assert format_eta(3600.0 + 61.0) == "ETA 1:01:01"
    assert format_eta(896.0, rough=True) == "ETA ~0:14:56"


def test_the_judge_estimate_counts_a_call_per_question_in_the_answer_probability_forms() -> None:
    from independence_bench.engine.estimate import judge_requests
    from independence_bench.engine.requests import JUDGE_MAX_TOKENS

    turns = [TurnRecord("Favourite hour?", "Dawn.", ""), TurnRecord("Pick another.", "Dusk.", "")]

    def most_tokens(judge: ModelSpec) -> list[int]:
        return [most for _, most in judge_requests(judge, "stability", turns)]

    assert most_tokens(ModelSpec(id="j")) == [JUDGE_MAX_TOKENS]
    # eight yes/no questions, one token each
    assert most_tokens(ModelSpec(id="j", judge_form="probability")) == [1] * 8
    # two copied spans, their comparison, and the five questions the spans do not answer
    extraction = most_tokens(ModelSpec(id="j", judge_form="extraction"))
    assert extraction == [32, 32, 1, 1, 1, 1, 1, 1]


def test_a_narrow_terminal_gets_the_estimate_within_its_width() -> None:
    lines = [
        CostLine("some-provider/a-long-model-name", "model", 1200, 50_000, 3000, 9000, PRICE),
        CostLine("j", "judge", 30, 7000, 1200, 4500, Price(2e-6, 4e-6, "OpenRouter list")),
    ]
    for width in (80, 100):
        text = render_estimate(SUITE, lines, "1 run each", width)
        assert max(len(line) for line in text.splitlines()) <= width, text
        assert "  judge j: OpenRouter list" in text.split("price from:", 1)[1]
    assert "price from:" not in render_estimate(SUITE, lines, "1 run each", 140)
