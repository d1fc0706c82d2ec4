"""The engine's reply cache, judgment reuse and failed-item retry, in-process against the server.

A request is looked up by `request_key` before it is sent. These tests count what the loopback
server received. To ask for the same conversations again, a test forgets the stored items (as a
run killed before it wrote them would leave the store): an identical request must then send
nothing, and every setting that changes the request must send it again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest
from independence_bench.conversations import driver as driver_module
from independence_bench.engine import engine as engine_module
from independence_bench.engine.engine import Engine, RunPlan, RunSummary
from independence_bench.judging.rubric import ReplyForm, Rubric, load_rubric
from independence_bench.store.store import Store
from independence_bench.suites.suite import Suite, load_suite
from support.mock_server import MockServer

SUITE = load_suite("v2").subset(["direct", "negotiation"])
"""Three subject calls (1 + 2 turns) and two judge calls per run."""
SUBJECT_CALLS = sum(len(s.turns) for s in SUITE.scenarios)
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.001)


def _subject(server: MockServer, label: str, **settings: Any) -> ModelSpec:
    settings.setdefault("id", "scripted-firm")
    return ModelSpec(label=label, base_url=server.base_url, **settings)


def _judge(server: MockServer, label: str = "judge", **settings: Any) -> ModelSpec:
    settings.setdefault("temperature", 0.0)
    return ModelSpec(id="scripted-judge", label=label, base_url=server.base_url, **settings)


async def _run(
    data: Path,
    subjects: tuple[ModelSpec, ...],
    judge: ModelSpec | None,
    *,
    suite: Suite = SUITE,
    judge_repeats: int = 1,
    first_run: int = 1,
    factories: tuple[Callable[[ModelSpec], Any], ...] = (),
) -> RunSummary:
    pool = ClientPool(env={}, concurrency=8, factories=factories)
    try:
        with Store(data) as store:
            plan = RunPlan(
                suite=suite,
                models=subjects,
                judge=judge,
                judge_repeats=judge_repeats,
                first_run={s.display_label: first_run for s in subjects},
            )
            return await Engine(store, pool, retry=FAST).run(plan)
    finally:
        await pool.aclose()


def _forget_items(data: Path) -> None:
    """Delete every item and judgment, keeping runs and completions."""
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        db.execute("DELETE FROM judgments")
        db.execute("DELETE FROM items")
        db.commit()


def _with_suite_text(suite: Suite, **delivery: str) -> Suite:
    """`suite` with some delivery texts replaced (a new suite, with its own content hash)."""
    fields = suite.model_dump()
    fields["delivery"] = {**fields["delivery"], **delivery}
    return Suite(**fields)


@pytest.mark.parametrize(
    "change",
    [
        {"id": "scripted-caving"},
        {"temperature": 0.3},
        {"seed": 7},
        {"max_tokens": 999},
        {"reasoning_effort": "low"},
        {"provider": ("acme",)},
    ],
    ids=lambda change: next(iter(change)),
)
async def test_a_changed_subject_setting_misses_the_cache_and_the_same_one_hits(
    server: MockServer, tmp_path: Path, change: dict[str, Any]
) -> None:
    await _run(tmp_path, (_subject(server, "subject"),), None)
    assert server.seen.request_count == SUBJECT_CALLS
    _forget_items(tmp_path)
    summary = await _run(tmp_path, (_subject(server, "subject"),), None)
    assert server.seen.request_count == SUBJECT_CALLS
    assert (summary.items_done, summary.calls, summary.cached_calls) == (2, 0, SUBJECT_CALLS)
    _forget_items(tmp_path)
    # The stored run row would refuse other settings under its label
    # (`engine.refuse_changed_settings`); without it, only the completion keys can tell.
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3")) as db:
        db.execute("DELETE FROM runs")
        db.commit()
    summary = await _run(tmp_path, (_subject(server, "subject", **change),), None)
    assert server.seen.request_count == 2 * SUBJECT_CALLS
    assert (summary.calls, summary.cached_calls) == (SUBJECT_CALLS, 0)


async def test_changed_tools_miss_the_cache(
    server: MockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject = (_subject(server, "subject"),)
    await _run(tmp_path, subject, None)
    _forget_items(tmp_path)
    tool = driver_module.tool_definition(SUITE.delivery)
    changed = {**tool, "function": {**tool["function"], "description": "Talk to the human."}}
    # The conversation driver offers the tool (`conversations/driver.py`: `cell_of`).
    monkeypatch.setattr(driver_module, "tool_definition", lambda delivery: changed)
    await _run(tmp_path, subject, None)
    assert server.seen.request_count == 2 * SUBJECT_CALLS
    assert all(r["tools"] == [changed] for r in server.seen.requests[SUBJECT_CALLS:])


async def test_changed_messages_miss_the_cache(server: MockServer, tmp_path: Path) -> None:
    subject = (_subject(server, "subject"),)
    await _run(tmp_path, subject, None)
    changed = _with_suite_text(SUITE, kickoff="Begin, please.")
    await _run(tmp_path, subject, None, suite=changed)
    assert server.seen.request_count == 2 * SUBJECT_CALLS
    _forget_items(tmp_path)
    await _run(tmp_path, subject, None, suite=changed)
    assert server.seen.request_count == 2 * SUBJECT_CALLS


async def test_each_run_is_its_own_sample(server: MockServer, tmp_path: Path) -> None:
    subject = (_subject(server, "subject"),)
    await _run(tmp_path, subject, None)
    await _run(tmp_path, subject, None, first_run=2)
    assert server.seen.request_count == 2 * SUBJECT_CALLS
    with Store(tmp_path) as store:
        assert [run.run_index for run in store.runs()] == [1, 2]


@pytest.mark.parametrize(
    "change", [{"temperature": 0.5}, {"seed": 3}], ids=lambda change: next(iter(change))
)
async def test_a_changed_judge_setting_misses_the_cache_and_the_same_one_hits(
    server: MockServer, tmp_path: Path, change: dict[str, Any]
) -> None:
    subject = (_subject(server, "subject"),)
    judged = len(SUITE.scenarios)
    await _run(tmp_path, subject, _judge(server, "judge a"))
    assert server.seen.request_count == SUBJECT_CALLS + judged
    summary = await _run(tmp_path, subject, _judge(server, "judge b"))
    assert server.seen.request_count == SUBJECT_CALLS + judged  # a new judgment, a cached reply
    assert (summary.judged, summary.judge_cached, summary.cached_calls) == (judged, 0, judged)
    await _run(tmp_path, subject, _judge(server, "judge c", **change))
    assert server.seen.request_count == SUBJECT_CALLS + 2 * judged
    with Store(tmp_path) as store:
        assert store.judge_models() == ["judge a", "judge b", "judge c"]


async def test_a_changed_response_schema_misses_the_cache(
    server: MockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject = (_subject(server, "subject"),)
    await _run(tmp_path, subject, _judge(server, "judge a"))
    before = server.seen.request_count
    schema = ReplyForm.json_schema
    monkeypatch.setattr(
        ReplyForm, "json_schema", lambda self: {**schema(self), "description": "changed"}
    )
    summary = await _run(tmp_path, subject, _judge(server, "judge b"))
    assert server.seen.request_count - before == len(SUITE.scenarios)
    assert summary.judged == len(SUITE.scenarios)


async def test_judge_repeats_are_separate_samples_and_kept_on_a_rerun(
    server: MockServer, tmp_path: Path
) -> None:
    subject, judge = (_subject(server, "subject"),), _judge(server)
    await _run(tmp_path, subject, judge, judge_repeats=2)
    assert server.seen.request_count == SUBJECT_CALLS + 2 * len(SUITE.scenarios)
    summary = await _run(tmp_path, subject, judge, judge_repeats=2)
    assert server.seen.request_count == SUBJECT_CALLS + 2 * len(SUITE.scenarios)
    assert (summary.judged, summary.judge_cached) == (0, 2 * len(SUITE.scenarios))
    with Store(tmp_path) as store:
        assert sorted(j.repeat for j in store.judgments()) == [0, 0, 1, 1]


async def test_a_changed_rubric_is_judged_again_and_the_old_judgment_kept(
    server: MockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject, judge = (_subject(server, "subject"),), _judge(server)
    await _run(tmp_path, subject, judge)
    same = await _run(tmp_path, subject, judge)
    assert (same.judged, same.judge_cached) == (0, len(SUITE.scenarios))

    def changed_rubric(rubric_id: str) -> Rubric:
        rubric = load_rubric(rubric_id)
        holistic = rubric.asked("holistic")
        changed = replace(holistic, hash=f"changed-{holistic.hash}")
        return replace(rubric, forms={**rubric.forms, "holistic": changed})

    monkeypatch.setattr(engine_module, "load_rubric", changed_rubric)
    again = await _run(tmp_path, subject, judge)
    assert (again.judged, again.judge_cached) == (len(SUITE.scenarios), 0)
    with Store(tmp_path) as store:
        hashes = sorted(j.rubric_hash for j in store.judgments())
    originals = sorted(load_rubric(s.rubric).asked("holistic").hash for s in SUITE.scenarios)
    assert hashes == sorted([*originals, *(f"changed-{h}" for h in originals)])


class _SecondTurnOutage:
    """The real client to the loopback server, except that every second turn fails."""

    def __init__(self, base_url: str) -> None:
        self.inner = OpenAICompatibleClient(base_url=base_url, api_key=None, is_openrouter=False)

    async def complete(self, request: CompletionRequest) -> Completion:
        human_turns = sum(1 for m in request.messages if m.get("role") == "tool")
        if human_turns == 2:
            raise ClientError("upstream outage (scripted)", retryable=True, status=503)
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_failed_item_is_retried_next_time_and_its_finished_turns_come_from_the_store(
    server: MockServer, tmp_path: Path
) -> None:
    subject, judge = (_subject(server, "subject"),), _judge(server)

    def outage(spec: ModelSpec) -> tuple[str, _SecondTurnOutage, int] | None:
        return ("outage", _SecondTurnOutage(server.base_url), 8) if spec.label else None

    first = await _run(tmp_path, subject, judge, factories=(outage,))
    assert (first.items_done, first.items_failed, first.judged) == (1, 1, 1)
    assert server.seen.request_count == 2 + 1  # direct, negotiation turn 1; direct's judge call
    with Store(tmp_path) as store:
        failed = store.items(status="failed")
    assert [item.scenario_id for item in failed] == ["negotiation"]
    assert failed[0].error is not None and failed[0].error.startswith("turn 2: ")
    assert len(failed[0].turns) == 1

    second = await _run(tmp_path, subject, judge)
    assert (second.items_cached, second.items_done, second.items_failed) == (1, 1, 0)
    assert (second.calls, second.cached_calls) == (2, 1)  # turn 2 and its judge call; turn 1
    assert server.seen.request_count == 3 + 2
    with Store(tmp_path) as store:
        retried = [i for i in store.items() if i.scenario_id == "negotiation"]
        assert len(store.judgments()) == 2
    assert retried[0].status == "done" and retried[0].error is None
    assert retried[0].turns[0] == failed[0].turns[0]
    assert len(retried[0].turns) == 2
