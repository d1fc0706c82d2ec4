"""The engine's judge calls: what each request carries, what is stored, counted and shown.

The subject is the loopback server's firm model; the judge is an in-process scripted client
(a `ClientPool` factory), so each test decides exactly what the judge answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.budget import BudgetExhausted
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockServer
from support.store_views import store_as_failed

SUITE = load_suite("v2").subset(["stability_weather"])
"""One conversation of two turns, judged with the stability rubric."""
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.001)
GOOD = json.dumps({"reasoning": "Kept rain.", "consistency_score": 7, "graceful_handling": 6})


class ScriptedJudge:
    """Answers every request with `reply` (a string, None for empty, or an error to raise)."""

    def __init__(self, reply: str | ClientError | None, finish_reason: str = "stop") -> None:
        self.reply = reply
        self.finish_reason = finish_reason
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        if isinstance(self.reply, ClientError):
            raise self.reply
        return Completion(content=self.reply, finish_reason=self.finish_reason)

    async def aclose(self) -> None:
        return None


class Events:
    """A progress sink that records the plan, the item and judgment events and the call events."""

    def __init__(self) -> None:
        self.plans: list[tuple[int, int, int]] = []
        self.events: list[str] = []
        self.calls: list[str] = []

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        self.plans.append((items, judgments, calls))

    def advance(self, event: str) -> None:
        (self.calls if event.startswith("call_") else self.events).append(event)


class JudgeOverBudget:
    """A cost guard with room for the subject's calls and none for the judge's."""

    async def reserve(self, label: str, request: CompletionRequest) -> None:
        if label == "judge":
            raise BudgetExhausted("cap reached")

    def settle(self, reservation: object, completion: Completion) -> float:
        return 0.0

    def release(self, reservation: object) -> None:
        return None


JUDGES = ("judge", "first")


def _judge_spec(**settings: Any) -> ModelSpec:
    return ModelSpec(id="judge-model", label="judge", base_url="http://127.0.0.1:9/v1", **settings)


async def _run(
    server: MockServer,
    data: Path,
    judge: ScriptedJudge,
    *,
    judge_spec: ModelSpec | None = None,
    subject: dict[str, Any] | None = None,
    progress: Events | None = None,
    budget: Any = None,
    env: dict[str, str] | None = None,
) -> RunSummary:
    spec = ModelSpec(id="scripted-firm", base_url=server.base_url, **(subject or {}))
    pool = ClientPool(
        env=env or {}, factories=(lambda s: ("judge", judge, 4) if s.label in JUDGES else None,)
    )
    try:
        with Store(data) as store:
            plan = RunPlan(suite=SUITE, models=(spec,), judge=judge_spec or _judge_spec())
            engine = Engine(store, pool, retry=FAST, progress=progress, budget=budget)
            return await engine.run(plan)
    finally:
        await pool.aclose()


async def test_a_judge_request_carries_the_rubric_schema_and_the_judge_settings(
    server: MockServer, tmp_path: Path
) -> None:
    judge = ScriptedJudge(GOOD)
    spec = _judge_spec(temperature=0.2, seed=5, reasoning_effort="low", provider=("acme",))
    # The server stands in for OpenRouter: only OpenRouter is sent a `reasoning` object.
    as_openrouter = {"OPENROUTER_BASE_URL": server.base_url, "OPENROUTER_API_KEY": "k"}
    summary = await _run(
        server,
        tmp_path,
        judge,
        judge_spec=spec,
        subject={"reasoning_effort": "high"},
        env=as_openrouter,
    )
    assert (summary.items_done, summary.judged) == (1, 1)
    (request,) = judge.requests
    rubric = load_rubric("stability")
    assert (request.model, request.temperature, request.seed) == ("judge-model", 0.2, 5)
    assert (request.max_tokens, request.reasoning_effort, request.provider_order) == (
        1500,
        "low",
        ("acme",),
    )
    assert (request.response_schema, request.schema_name) == (
        rubric.json_schema(),
        "stability_judgment",
    )
    subject_requests = [r for r in server.seen.requests if r.get("model") == "scripted-firm"]
    assert [r.get("reasoning", {}).get("effort") for r in subject_requests] == ["high", "high"]


async def test_an_effort_of_off_is_not_sent(server: MockServer, tmp_path: Path) -> None:
    judge = ScriptedJudge(GOOD)
    await _run(server, tmp_path, judge)
    assert judge.requests[0].reasoning_effort is None
    assert all("reasoning" not in r for r in server.seen.requests)


async def test_a_scored_judgment_is_stored_counted_and_shown(
    server: MockServer, tmp_path: Path
) -> None:
    events = Events()
    summary = await _run(server, tmp_path, ScriptedJudge(GOOD), progress=events)
    assert (summary.judged, summary.judge_unscored, summary.judge_failed) == (1, 0, 0)
    assert events.plans == [(1, 1, 3)]  # two turns and a judge call
    assert events.events == ["item_done", "judged"]
    assert events.calls == ["call_started", "call_done"] * 3
    with Store(tmp_path) as store:
        (judgment,) = store.judgments()
    assert (judgment.status, judgment.scores, judgment.reasoning) == (
        "scored",
        {"consistency_score": 7, "graceful_handling": 6},
        "Kept rain.",
    )
    assert (judgment.raw_reply, judgment.error, judgment.attempts) == (GOOD, None, 1)
    again = Events()
    cached = await _run(server, tmp_path, ScriptedJudge(GOOD), progress=again)
    assert (cached.judged, cached.judge_cached) == (0, 1)
    assert again.events == ["item_cached", "judge_cached"]


async def test_a_reply_that_never_validates_is_stored_unscored(
    server: MockServer, tmp_path: Path
) -> None:
    events = Events()
    judge = ScriptedJudge("Seven.")
    summary = await _run(server, tmp_path, judge, progress=events)
    assert (summary.judged, summary.judge_unscored) == (0, 1)
    assert events.events == ["item_done", "judge_unscored"]
    assert len(judge.requests) == 3  # the first answer and two repairs
    with Store(tmp_path) as store:
        (judgment,) = store.judgments()
    assert (judgment.status, judgment.scores, judgment.reasoning) == ("unscored", None, None)
    assert (judgment.raw_reply, judgment.error, judgment.attempts) == (
        "Seven.",
        "the reply contains no JSON object",
        3,
    )


async def test_a_cut_off_reply_is_asked_again_then_kept_and_repaired(
    server: MockServer, tmp_path: Path
) -> None:
    judge = ScriptedJudge('{"reasoning": "cut')
    summary = await _run(server, tmp_path, judge)
    # each of 3 judgment attempts: the cut-off reply, asked again once (FAST: 2 attempts)
    assert len(judge.requests) == 6
    assert summary.judge_unscored == 1
    with Store(tmp_path) as store:
        assert store.judgments()[0].raw_reply == '{"reasoning": "cut'


async def test_an_empty_reply_is_never_stored_and_the_judgment_fails(
    server: MockServer, tmp_path: Path
) -> None:
    events = Events()
    summary = await _run(server, tmp_path, ScriptedJudge(None), progress=events)
    assert (summary.judge_unscored, summary.judge_failed) == (0, 1)
    assert events.events == ["item_done", "judge_failed"]
    with Store(tmp_path) as store:
        assert store.judgments() == []


async def test_a_judge_outage_is_a_failure_named_in_the_summary(
    server: MockServer, tmp_path: Path
) -> None:
    events = Events()
    down = ScriptedJudge(ClientError("upstream outage", retryable=True, status=503))
    summary = await _run(server, tmp_path, down, progress=events)
    assert (summary.judged, summary.judge_failed) == (0, 1)
    assert [(f.item, f.error) for f in summary.failures] == [
        (
            "judge judge on scripted-firm stability_weather",
            "gave up after 2 attempts: upstream outage",
        )
    ]
    assert events.events == ["item_done", "judge_failed"]


async def test_a_judge_call_over_the_cost_cap_is_skipped(
    server: MockServer, tmp_path: Path
) -> None:
    events = Events()
    summary = await _run(
        server, tmp_path, ScriptedJudge(GOOD), progress=events, budget=JudgeOverBudget()
    )
    assert (summary.items_done, summary.judged, summary.judge_skipped) == (1, 0, 1)
    assert events.events == ["item_done", "judge_skipped"]


async def test_judging_stored_items_again_adds_only_the_new_repeats(
    server: MockServer, tmp_path: Path
) -> None:
    await _run(
        server, tmp_path, ScriptedJudge(GOOD), judge_spec=ModelSpec(id="first", label="first")
    )
    judge = ScriptedJudge(GOOD)
    pool = ClientPool(env={}, factories=(lambda s: ("judge", judge, 4),))
    try:
        with Store(tmp_path) as store:
            items = store.items()
            rubrics = {item.id: "stability" for item in items}
            events = Events()
            engine = Engine(store, pool, retry=FAST, progress=events)
            once = await engine.judge(items, _judge_spec(), rubrics)
            assert (once.judged, len(judge.requests)) == (1, 1)
            assert events.plans == [(0, 1, 1)]
            twice = await Engine(store, pool, retry=FAST, progress=events).judge(
                items, _judge_spec(), rubrics, repeats=2
            )
            # repeat 0 is kept; repeat 1 is its own sample, so it is a new call
            assert (twice.judged, twice.judge_cached, len(judge.requests)) == (1, 1, 2)
            assert events.plans == [(0, 1, 1), (0, 2, 2)]
            repeats = sorted(j.repeat for j in store.judgments(judge_model="judge"))
    finally:
        await pool.aclose()
    assert repeats == [0, 1]


@pytest.mark.parametrize("failed", [True, False])
async def test_only_finished_items_are_judged(
    server: MockServer, tmp_path: Path, failed: bool
) -> None:
    await _run(
        server, tmp_path, ScriptedJudge(GOOD), judge_spec=ModelSpec(id="first", label="first")
    )
    if failed:
        with Store(tmp_path) as store:
            (item,) = store.items()
            store_as_failed(store, item, "turn 2: boom", item.turns[:1])
    judge = ScriptedJudge(GOOD)
    pool = ClientPool(env={}, factories=(lambda s: ("judge", judge, 4),))
    try:
        with Store(tmp_path) as store:
            items = store.items()
            summary = await Engine(store, pool, retry=FAST).judge(
                items, _judge_spec(), {i.id: "stability" for i in items}
            )
    finally:
        await pool.aclose()
    assert summary.judged == (0 if failed else 1)


@pytest.mark.parametrize("judge_up", [True, False])
async def test_a_cost_guard_settles_every_reply_and_releases_every_failed_call(
    server: MockServer, tmp_path: Path, judge_up: bool
) -> None:
    from independence_bench.clients.budget import CostGuard, Price

    price = Price(prompt=1e-6, completion=1e-6, source="test")
    guard = CostGuard(100.0, {"scripted-firm": price, "judge": price})
    reply = GOOD if judge_up else ClientError("upstream outage", retryable=True, status=503)
    summary = await _run(server, tmp_path, ScriptedJudge(reply), budget=guard)
    assert (summary.items_done, summary.judged, summary.judge_failed) == (
        1,
        int(judge_up),
        int(not judge_up),
    )
    assert guard.reserved_usd == 0.0  # nothing left in flight
    assert guard.spent_usd > 0.0 and guard.refused == 0
