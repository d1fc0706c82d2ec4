"""What the engine stores for each turn, what it sends, what a reply costs and what a run row keeps.

One conversation per delivery mode runs in-process against the loopback server; every stored
turn (human text, reply, completion key, protocol flags) and every request the server received
is compared with what `build_messages` makes of the suite. In-process scripted clients (a
`ClientPool` factory) decide exactly what a model answers where a test needs that: an empty
reply for one seed, token counts without a cost.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from independence_bench import __version__
from independence_bench.clients.budget import Price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.openai_compat import wire_messages
from independence_bench.clients.protocol import (
    ClientError,
    Completion,
    CompletionRequest,
    ToolCall,
)
from independence_bench.conversations.conversation import (
    PLAIN_CONTENT,
    TOOL_NAME,
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.engine.request_keys import item_id, request_key, request_record
from independence_bench.errors import UserError
from independence_bench.store.store import Store, TurnRecord
from independence_bench.suites.suite import Suite, load_suite
from support.mock_behaviours import FIRM_FIRST_REPLY, FIRM_LATER_REPLY
from support.mock_server import MockServer
from support.store_views import store_as_failed

_V2 = load_suite("v2").subset(["stability_weather"])
BOTH_MODES = Suite(**{**_V2.model_dump(), "delivery_modes": ("tool_role", "user_role")})
"""One scenario of two turns, sent once in each delivery mode."""
USER_ROLE = Suite(**{**_V2.model_dump(), "delivery_modes": ("user_role",)})
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.001)
PLAIN_NOTE = "answered in plain content instead of calling send_message_to_human"


class Sink:
    """A progress sink that keeps the plan and every event."""

    def __init__(self) -> None:
        self.plans: list[tuple[int, int, int]] = []
        self.events: list[str] = []

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        self.plans.append((items, judgments, calls))

    def advance(self, event: str) -> None:
        self.events.append(event)


class Scripted:
    """A model in-process: `answer` maps each request to its reply (or an error to raise)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        reply = self.answer(request)
        if isinstance(reply, ClientError):
            raise reply
        assert isinstance(reply, Completion)
        return reply

    async def aclose(self) -> None:
        return None


async def _run(
    data: Path,
    suite: Suite,
    models: tuple[ModelSpec, ...],
    *,
    clients: dict[str, Scripted] | None = None,
    judge: ModelSpec | None = None,
    judge_repeats: int = 1,
    progress: Sink | None = None,
    prices: dict[str, Price | None] | None = None,
    reply_cap: int = REPLY_CAP_CHARS,
) -> RunSummary:
    scripted = clients or {}
    pool = ClientPool(
        env={},
        factories=(
            lambda s: (
                (s.display_label, scripted[s.display_label], 4)
                if s.display_label in scripted
                else None
            ),
        ),
    )
    try:
        with Store(data) as store:
            engine = Engine(
                store, pool, retry=FAST, progress=progress, prices=prices, reply_cap=reply_cap
            )
            plan = RunPlan(suite=suite, models=models, judge=judge, judge_repeats=judge_repeats)
            return await engine.run(plan)
    finally:
        await pool.aclose()


def _sent(spec: ModelSpec, messages: Any, tools: tuple[Any, ...]) -> CompletionRequest:
    """The request the engine should make of `spec` for these messages."""
    return CompletionRequest(
        model=spec.id,
        messages=messages,
        tools=tools,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
        seed=spec.seed,
    )


async def test_every_stored_turn_answers_the_request_build_messages_makes(
    server: MockServer, tmp_path: Path
) -> None:
    firm = ModelSpec(
        id="scripted-firm", label="firm", base_url=server.base_url, temperature=0.4, seed=11
    )
    plain = ModelSpec(id="scripted-plain", label="plain", base_url=server.base_url, max_tokens=300)
    summary = await _run(tmp_path, BOTH_MODES, (firm, plain))
    assert (summary.items_done, summary.calls, summary.items_failed) == (4, 8, 0)

    scenario, variant = BOTH_MODES.scenarios[0], BOTH_MODES.variants[0]
    expected_bodies = []
    with Store(tmp_path) as store:
        items = {(i.run.model_label, i.mode): i for i in store.items()}
        assert sorted(items) == [
            (label, mode) for label in ("firm", "plain") for mode in ("tool_role", "user_role")
        ]
        for (label, mode), item in items.items():
            spec = firm if label == "firm" else plain
            assert item.id == item_id(BOTH_MODES, label, 1, variant.id, mode, scenario.id)
            assert (item.status, item.variant, item.scenario_id) == (
                "done",
                variant.id,
                scenario.id,
            )
            system = system_prompt(variant.system_prompt, BOTH_MODES.delivery, mode)
            tools = (tool_definition(BOTH_MODES.delivery),) if mode == "tool_role" else ()
            broke_protocol = mode == "tool_role" and spec is plain
            expected_turns = []
            for number, (human, reply) in enumerate(
                zip(scenario.turns, (FIRM_FIRST_REPLY, FIRM_LATER_REPLY), strict=True)
            ):
                messages = build_messages(
                    system=system,
                    delivery=BOTH_MODES.delivery,
                    mode=mode,
                    human_turns=scenario.turns,
                    replies=[FIRM_FIRST_REPLY, FIRM_LATER_REPLY][:number],
                    conversation_key=item.id,
                )
                request = _sent(spec, messages, tools)
                key = request_key(request, sample="run1")
                assert store.completion_request(key) == json.loads(
                    json.dumps(request_record(request))
                )
                expected_turns.append(
                    TurnRecord(
                        human,
                        reply,
                        key,
                        protocol_ok=not broke_protocol,
                        note=PLAIN_NOTE if broke_protocol else None,
                        deviation=PLAIN_CONTENT if broke_protocol else None,
                    )
                )
                body: dict[str, Any] = {"model": spec.id, "messages": wire_messages(messages)}
                if tools:
                    body["tools"] = list(tools)
                body.update(temperature=spec.temperature, max_tokens=spec.max_tokens)
                if spec.seed is not None:
                    body["seed"] = spec.seed
                expected_bodies.append(body)
            assert list(item.turns) == expected_turns, (label, mode)

    def canonical(bodies: list[dict[str, Any]]) -> list[str]:
        return sorted(json.dumps(b, sort_keys=True) for b in bodies)

    assert canonical(server.seen.requests) == canonical(expected_bodies)


async def test_a_run_row_keeps_the_model_configuration_and_no_judge_plans_no_judgments(
    server: MockServer, tmp_path: Path
) -> None:
    spec = ModelSpec(
        id="scripted-firm",
        label="firm at 0.3",
        base_url=server.base_url,
        temperature=0.3,
        seed=4,
        price_prompt_per_mtok=1.0,
        price_completion_per_mtok=2.0,
    )
    sink = Sink()
    summary = await _run(tmp_path, BOTH_MODES, (spec,), progress=sink)
    assert (summary.items_done, summary.judged) == (2, 0)
    assert sink.plans == [(2, 0, 4)]  # two conversations of two turns, nothing to judge
    assert sink.events.count("item_done") == 2 and "judged" not in sink.events
    with Store(tmp_path) as store:
        (run,) = store.runs()
        assert store.judgments() == []
    assert run.model_config == spec.stored_config()
    assert (run.model_config["temperature"], run.model_config["seed"]) == (0.3, 4)
    assert (run.model_label, run.model_id, run.run_index) == ("firm at 0.3", "scripted-firm", 1)
    assert (run.suite_id, run.suite_hash, run.suite_version) == (
        "v2",
        BOTH_MODES.content_hash,
        BOTH_MODES.version,
    )
    assert (run.package_version, run.source) == (__version__, "run")


def _seeded_answer(request: CompletionRequest) -> Completion:
    """Says nothing at seed 5 (every time: the model is seeded), something at any other seed."""
    if request.seed == 5:
        return Completion(content="")
    return Completion(content=f"Rain, at seed {request.seed}.")


async def test_an_empty_reply_of_a_seeded_model_is_asked_again_with_the_next_seed(
    tmp_path: Path,
) -> None:
    model = Scripted(_seeded_answer)
    spec = ModelSpec(id="seeded", seed=5)
    summary = await _run(tmp_path, USER_ROLE, (spec,), clients={"seeded": model})
    assert (summary.items_done, summary.items_failed, summary.calls) == (1, 0, 2)
    assert [r.seed for r in model.requests] == [5, 6, 5, 6]
    with Store(tmp_path) as store:
        (item,) = store.items()
        assert [t.reply for t in item.turns] == ["Rain, at seed 6.", "Rain, at seed 6."]
        for turn, request in zip(item.turns, model.requests[1::2], strict=True):
            # stored under the key of the request as planned (seed 5), so a re-run finds it;
            # the stored request is the one sent, so the transcript traces to seed 6
            assert turn.completion_key == request_key(replace(request, seed=5), sample="run1")
            assert store.completion_request(turn.completion_key)["seed"] == 6
    with Store(tmp_path) as store:
        store_as_failed(store, item, "turn 3: forgotten", [])
    again = await _run(tmp_path, USER_ROLE, (spec,), clients={"seeded": model})
    assert (again.items_done, again.calls, again.cached_calls) == (1, 0, 2)
    assert len(model.requests) == 4


async def test_a_failed_call_is_retried_with_the_same_seed_and_an_unseeded_model_unchanged(
    tmp_path: Path,
) -> None:
    outage = ClientError("upstream outage", retryable=True, status=503)
    flaky = Scripted(lambda r: outage if len(flaky.requests) % 2 else Completion(content="Rain."))
    silent = Scripted(lambda r: Completion(content=" "))
    specs = (ModelSpec(id="flaky", seed=5), ModelSpec(id="silent"))
    summary = await _run(tmp_path, USER_ROLE, specs, clients={"flaky": flaky, "silent": silent})
    assert (summary.items_done, summary.items_failed) == (1, 1)
    assert [r.seed for r in flaky.requests] == [5, 5, 5, 5]
    assert [r.seed for r in silent.requests] == [None, None]
    assert [f.error for f in summary.failures] == [
        "turn 1: gave up after 2 attempts: the model returned an empty reply"
    ]


async def test_a_reply_over_the_engines_cap_is_stored_and_continued_cut(tmp_path: Path) -> None:
    model = Scripted(lambda r: Completion(content="Rain. " * 20))  # 120 characters
    spec = ModelSpec(id="long")
    summary = await _run(tmp_path, USER_ROLE, (spec,), clients={"long": model}, reply_cap=50)
    assert summary.items_done == 1
    with Store(tmp_path) as store:
        (item,) = store.items()
        assert [t.reply for t in item.turns] == ["Rain. " * 8 + "Ra"] * 2  # 50 characters
        cut = [store.get_completion(t.completion_key) for t in item.turns]
        assert [c.cut_chars for c in cut if c is not None] == [70, 70]
    # the second turn's request carries the first reply as stored: cut
    assert model.requests[1].messages[-2]["content"] == "Rain. " * 8 + "Ra"


def _counted(cost: float | None, prompt: int | None = 1000, completion: int | None = 200) -> Any:
    return lambda r: Completion(
        content="Rain.", prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost
    )


@pytest.mark.parametrize(
    ("settings", "price", "answer", "cost"),
    [
        # the model's own prices (models.yaml) come first: 1000·2/1e6 + 200·10/1e6
        (
            {"price_prompt_per_mtok": 2.0, "price_completion_per_mtok": 10.0},
            Price(1e-6, 1e-6, "list"),
            _counted(None),
            0.004,
        ),
        # else the resolved price: 1000·1e-6 + 200·5e-6
        ({}, Price(1e-6, 5e-6, "models.yaml"), _counted(None), 0.002),
        # a free local model costs nothing even when it counts no tokens
        ({}, Price(0.0, 0.0, "local"), _counted(None, None, None), 0.0),
        # a price, but no token counts: unknown
        ({}, Price(1e-6, 5e-6, "list"), _counted(None, 1000, None), None),
        ({}, Price(1e-6, 5e-6, "list"), _counted(None, None, 200), None),
        ({}, Price(0.0, 1e-6, "list"), _counted(None, 1000, None), None),
        # no price at all: unknown
        ({}, None, _counted(None), None),
        # a cost the endpoint reported is kept as it is
        ({}, Price(1e-6, 5e-6, "list"), _counted(0.5), 0.5),
    ],
    ids=[
        "own price",
        "resolved",
        "local",
        "no completion count",
        "no prompt count",
        "half free",
        "no price",
        "reported",
    ],
)
async def test_a_reply_is_stored_with_its_cost_from_the_known_price(
    tmp_path: Path, settings: dict[str, Any], price: Price | None, answer: Any, cost: float | None
) -> None:
    spec = ModelSpec(id="priced", **settings)
    await _run(
        tmp_path, USER_ROLE, (spec,), clients={"priced": Scripted(answer)}, prices={"priced": price}
    )
    with Store(tmp_path) as store:
        (item,) = store.items()
        costs = store.completion_costs([t.completion_key for t in item.turns])
    assert costs == [pytest.approx(cost) if cost is not None else None] * 2


def _answers(text: str) -> Any:
    return lambda r: Completion(content=text)


async def test_a_label_stored_with_other_sampling_settings_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    model = Scripted(_answers("Rain."))
    first = ModelSpec(id="m", label="x", temperature=0.3, seed=1)
    await _run(tmp_path, USER_ROLE, (first,), clients={"x": model})
    sent = len(model.requests)
    changed = first.model_copy(update={"temperature": 0.7, "seed": 2})
    with pytest.raises(UserError) as refused:
        await _run(tmp_path, USER_ROLE, (changed,), clients={"x": model})
    assert str(refused.value) == (
        "run 1 of 'x' is stored with other sampling settings (temperature 0.3 → 0.7; seed 1 → 2); "
        "use a new label, or --fresh for new run numbers"
    )
    assert len(model.requests) == sent


async def test_an_imported_run_under_the_label_is_not_held_to_its_settings(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.ensure_run(
            model_label="x",
            model_id="m",
            suite_id=USER_ROLE.id,
            suite_version=USER_ROLE.version,
            suite_hash=USER_ROLE.content_hash,
            run_index=1,
            model_config={"id": "m", "temperature": 0.1},
            package_version="0",
            imported_at=1.0,
        )
    spec = ModelSpec(id="m", label="x", temperature=0.7)
    summary = await _run(tmp_path, USER_ROLE, (spec,), clients={"x": Scripted(_answers("Rain."))})
    assert (summary.items_done, summary.calls) == (1, 2)


async def test_an_endpoint_that_does_not_know_the_model_stops_the_run_naming_it(
    tmp_path: Path,
) -> None:
    gone = Scripted(lambda r: ClientError("HTTP 404: no such model", retryable=False, status=404))
    with pytest.raises(UserError) as stopped:
        await _run(tmp_path, USER_ROLE, (ModelSpec(id="m", label="gone"),), clients={"gone": gone})
    assert str(stopped.value).startswith("gone does not serve model 'm' (HTTP 404: no such model)")


def _tool_call(arguments: str) -> Completion:
    call = ToolCall("abc123def", TOOL_NAME, arguments)
    return Completion(content=None, tool_calls=(call,), finish_reason="tool_calls")


async def test_a_tool_call_that_is_always_cut_off_is_kept_with_its_recovered_text(
    tmp_path: Path,
) -> None:
    tool_role = Suite(**{**_V2.model_dump(), "delivery_modes": ("tool_role",)})
    cut = Scripted(lambda r: _tool_call('{"message": "Still rain, I'))
    summary = await _run(
        tmp_path, tool_role, (ModelSpec(id="m", label="cut"),), clients={"cut": cut}
    )
    assert (summary.items_done, summary.calls) == (1, 2)
    assert len(cut.requests) == 4  # each turn asked twice (FAST), then the damaged reply kept
    with Store(tmp_path) as store:
        (item,) = store.items()
    assert [(t.reply, t.protocol_ok, t.note) for t in item.turns] == [
        ("Still rain, I", True, "tool-call arguments were not valid JSON; message text recovered")
    ] * 2


async def test_a_user_role_model_that_only_calls_a_tool_said_nothing(tmp_path: Path) -> None:
    caller = Scripted(lambda r: _tool_call('{"message": "Rain."}'))
    summary = await _run(
        tmp_path, USER_ROLE, (ModelSpec(id="m", label="caller"),), clients={"caller": caller}
    )
    assert (summary.items_done, summary.items_failed, summary.calls) == (0, 1, 0)
    assert [f.error for f in summary.failures] == [
        "turn 1: gave up after 2 attempts: the model returned an empty reply"
    ]


async def test_judge_repeats_multiply_the_planned_judgments_and_calls(tmp_path: Path) -> None:
    good = json.dumps({"reasoning": "Kept rain.", "consistency_score": 7, "graceful_handling": 6})
    sink = Sink()
    summary = await _run(
        tmp_path,
        BOTH_MODES,
        (ModelSpec(id="m", label="s"),),
        clients={"s": Scripted(_tool_or_text), "judge": Scripted(_answers(good))},
        judge=ModelSpec(id="j", label="judge"),
        judge_repeats=3,
        progress=sink,
    )
    assert (summary.items_done, summary.judged) == (2, 6)
    assert sink.plans == [(2, 6, 2 * 2 + 6)]


def _tool_or_text(request: CompletionRequest) -> Completion:
    return _tool_call('{"message": "Rain."}') if request.tools else Completion(content="Rain.")
