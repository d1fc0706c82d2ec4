"""Every outcome the engine counts, two of each, in one run and its repeat.

Five in-process models each end their two conversations one way: `steady` is judged, `vague`
is judged unscored, `mute` says nothing (failed), `broke` is over the cost cap (skipped, nothing
stored), `fog` is judged by a judge that is down, and `snow` by a judge over the cost cap. The
run summary, the progress events (one per outcome and per model call) and what the cost guard
was asked are compared exactly, then again after the stored items are forgotten, when every
answered call comes from the store.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

from independence_bench.clients.budget import BudgetExhausted
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.engine.failures import Failure
from independence_bench.store.store import Store
from independence_bench.suites.suite import Suite, load_suite

_V2 = load_suite("v2").subset(["stability_weather", "stability_instrument"])
SUITE = Suite(**{**_V2.model_dump(), "delivery_modes": ("user_role",)})
"""Two conversations of two turns each per model, judged with the stability rubric."""
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.001)
GOOD = json.dumps({"reasoning": "Kept rain.", "consistency_score": 7, "graceful_handling": 6})
REPLIES = {
    "steady": "Rain, still.",
    "vague": "Whatever you like.",
    "mute": "",
    "broke": "Never sent.",
    "fog": "Fog.",
    "snow": "Snow.",
}
MODELS = tuple(ModelSpec(id=label) for label in REPLIES)


class Subject:
    """Answers every request with one fixed text (an empty one for `mute`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests += 1
        return Completion(content=self.text, prompt_tokens=10, completion_tokens=5)

    async def aclose(self) -> None:
        return None


class Judge:
    """Scores `steady`, answers `vague` with prose, and is down for `fog`."""

    def __init__(self) -> None:
        self.requests = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests += 1
        transcript = json.dumps(request.messages)
        if REPLIES["fog"] in transcript:
            raise ClientError("judge outage", retryable=False, status=500)
        reply = GOOD if REPLIES["steady"] in transcript else "Seven."
        return Completion(content=reply, prompt_tokens=10, completion_tokens=5)

    async def aclose(self) -> None:
        return None


class Guard:
    """A cost guard with no room for `broke`'s calls or for judging `snow`; records the rest."""

    def __init__(self) -> None:
        self.reserved: Counter[str] = Counter()
        self.settled: Counter[str] = Counter()
        self.released: Counter[str] = Counter()

    async def reserve(self, label: str, request: CompletionRequest) -> str:
        if label == "broke" or (
            label == "judge" and REPLIES["snow"] in json.dumps(request.messages)
        ):
            raise BudgetExhausted("cap reached")
        self.reserved[label] += 1
        return label

    def settle(self, reservation: str, completion: Completion) -> float:
        self.settled[reservation] += 1
        return 0.0

    def release(self, reservation: str) -> None:
        self.released[reservation] += 1


class Sink:
    def __init__(self) -> None:
        self.plans: list[tuple[int, int, int]] = []
        self.events: Counter[str] = Counter()

    def planned(self, items: int, judgments: int, calls: int = 0) -> None:
        self.plans.append((items, judgments, calls))

    def advance(self, event: str) -> None:
        self.events[event] += 1


def _counts(summary: RunSummary) -> dict[str, int]:
    return {
        name: value for name, value in vars(summary).items() if isinstance(value, int) and value
    }


async def _run(data: Path, guard: Guard, sink: Sink, judge: Judge) -> RunSummary:
    subjects = {label: Subject(text) for label, text in REPLIES.items()}
    clients: dict[str, Any] = {**subjects, "judge": judge}
    pool = ClientPool(env={}, factories=(lambda s: (s.display_label, clients[s.display_label], 4),))
    try:
        with Store(data) as store:
            plan = RunPlan(suite=SUITE, models=MODELS, judge=ModelSpec(id="judge"))
            engine = Engine(store, pool, retry=FAST, progress=sink, budget=guard)
            return await engine.run(plan)
    finally:
        await pool.aclose()


def _failures(summary: RunSummary) -> list[Failure]:
    return sorted(summary.failures, key=lambda f: f.item)


EMPTY = "turn 1: gave up after 2 attempts: the model returned an empty reply"
UNSCORED = "unscored: the reply contains no JSON object"
EXPECTED_FAILURES = [
    Failure("judge judge on fog stability_instrument", "judge outage"),
    Failure("judge judge on fog stability_weather", "judge outage"),
    Failure("judge judge on vague stability_instrument", UNSCORED),
    Failure("judge judge on vague stability_weather", UNSCORED),
    Failure("mute run 1 stability_instrument", EMPTY),
    Failure("mute run 1 stability_weather", EMPTY),
]

EXPECTED_OUTCOMES = {
    "items_done": 8,
    "items_failed": 2,
    "items_skipped": 2,
    "judged": 2,
    "judge_unscored": 2,
    "judge_failed": 2,
    "judge_skipped": 2,
}
"""The run summary's outcome counts of these models, whether their calls are sent or read back."""


async def test_each_outcome_is_counted_once_per_conversation_judgment_and_call(
    tmp_path: Path,
) -> None:
    guard, sink, judge = Guard(), Sink(), Judge()
    summary = await _run(tmp_path, guard, sink, judge)
    # answered: 4 turns each of steady, vague, fog, snow; judge calls: steady 2, vague 2 × 3
    # (the first answer and two repairs); failed: mute's two first turns, the judge on fog
    assert _counts(summary) == {**EXPECTED_OUTCOMES, "calls": 24}
    assert _failures(summary) == EXPECTED_FAILURES
    assert sink.plans == [(12, 12, 36)]  # 6 models × 2 conversations; 2 turns + 1 judge call
    assert sink.events == Counter(
        item_done=8,
        item_failed=2,
        item_skipped=2,
        judged=2,
        judge_unscored=2,
        judge_failed=2,
        judge_skipped=2,
        call_started=28,
        call_done=24,
        call_failed=4,
    )
    # every call that was let through is settled when answered or released when it failed
    assert guard.reserved == Counter(steady=4, vague=4, mute=2, fog=4, snow=4, judge=10)
    assert guard.settled == Counter(steady=4, vague=4, fog=4, snow=4, judge=8)
    assert guard.released == Counter(mute=2, judge=2)
    assert judge.requests == 10
    with Store(tmp_path) as store:
        stored = Counter((i.run.model_label, i.status) for i in store.items())
        judgments = Counter((j.status) for j in store.judgments())
    assert stored == Counter(
        {
            ("steady", "done"): 2,
            ("vague", "done"): 2,
            ("fog", "done"): 2,
            ("snow", "done"): 2,
            ("mute", "failed"): 2,
        }
    )
    assert judgments == Counter(scored=2, unscored=2)


async def test_a_repeat_reads_every_answered_call_from_the_store(tmp_path: Path) -> None:
    await _run(tmp_path, Guard(), Sink(), Judge())
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3")) as db:
        db.execute("DELETE FROM judgments")
        db.execute("DELETE FROM items")
        db.commit()
    guard, sink, judge = Guard(), Sink(), Judge()
    summary = await _run(tmp_path, guard, sink, judge)
    # 16 subject turns and 8 judge replies come from the store; mute and the judge on fog fail
    # again, broke and the judge on snow are refused again
    assert _counts(summary) == {**EXPECTED_OUTCOMES, "cached_calls": 24}
    assert _failures(summary) == EXPECTED_FAILURES
    assert sink.events == Counter(
        item_done=8,
        item_failed=2,
        item_skipped=2,
        judged=2,
        judge_unscored=2,
        judge_failed=2,
        judge_skipped=2,
        call_cached=24,
        call_started=4,
        call_failed=4,
    )
    assert guard.reserved == Counter(mute=2, judge=2)  # cached calls reserve nothing
    assert guard.released == Counter(mute=2, judge=2)
    assert not guard.settled and judge.requests == 2
    # a third pass finds the finished conversations and scored judgments themselves; vague's
    # unscored judgments are asked again with new requests (a first answer and two repairs)
    sink, judge = Sink(), Judge()
    third = await _run(tmp_path, Guard(), sink, judge)
    assert (third.items_cached, third.judge_cached, third.judge_unscored) == (8, 2, 2)
    assert (third.calls, third.cached_calls, judge.requests) == (6, 0, 6 + 2)
    assert (sink.events["item_cached"], sink.events["judge_cached"]) == (8, 2)
