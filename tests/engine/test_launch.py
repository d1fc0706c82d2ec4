"""Launching the engine's tasks: longest chains first, replies let in between batches, and
one error (not a group) cancelling the rest."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool, RetryPolicy
from independence_bench.engine.engine import Engine, RunPlan
from independence_bench.engine.launch import run_all, run_longest_first
from independence_bench.errors import UserError
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer


async def test_longest_chains_start_first_and_equal_ones_keep_their_order() -> None:
    started: list[str] = []

    async def job(name: str) -> None:
        started.append(name)

    chains = [(2, "a"), (6, "psych"), (2, "b"), (3, "c"), (6, "psych2")]
    await run_longest_first([(n, job(name)) for n, name in chains], batch=2)
    assert started == ["psych", "psych2", "c", "a", "b"]


async def test_the_event_loop_runs_between_batches() -> None:
    """A reply that arrives while tasks are being launched is handled before the last launch."""
    events: list[str] = []
    reply = asyncio.get_running_loop().create_future()

    async def first() -> None:
        events.append("first sent")
        asyncio.get_running_loop().call_soon(reply.set_result, None)  # the reply arrives
        await reply
        events.append("first got its reply")

    async def later(index: int) -> None:
        events.append(f"later {index} started")

    jobs = [(6, first()), *((2, later(i)) for i in range(8))]
    await run_longest_first(jobs, batch=2)
    assert events.index("first got its reply") < events.index("later 7 started")


async def test_a_failure_cancels_the_rest_and_closes_what_never_started() -> None:
    cancelled: list[int] = []

    async def boom() -> None:
        raise RuntimeError("the endpoint rejected the model")

    async def waits(index: int) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(index)
            raise

    jobs = [(3, boom()), *((2, waits(i)) for i in range(40))]
    with pytest.raises(RuntimeError, match="rejected"):
        await asyncio.wait_for(run_longest_first(jobs, batch=4), timeout=5)
    assert cancelled  # started ones were cancelled, not left running
    assert len(cancelled) < 40  # and launching stopped early


async def _waits_for_cancel(cancelled: list[int], index: int) -> None:
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        cancelled.append(index)
        raise


async def _rejects(after: int = 0) -> None:
    for _ in range(after):
        await asyncio.sleep(0)
    raise UserError("the endpoint rejected the key")


@pytest.mark.parametrize("launcher", ["run_longest_first", "run_all"])
async def test_a_user_error_cancels_every_other_task_and_surfaces_alone(launcher: str) -> None:
    cancelled: list[int] = []
    waiting = [_waits_for_cancel(cancelled, i) for i in range(5)]
    if launcher == "run_all":
        launched = run_all([*waiting, _rejects(after=3)])
    else:
        launched = run_longest_first([*((2, w) for w in waiting), (1, _rejects(after=3))])
    with pytest.raises(UserError, match="rejected the key") as raised:
        await asyncio.wait_for(launched, timeout=5)
    assert type(raised.value) is UserError  # the error itself, not an ExceptionGroup
    assert sorted(cancelled) == [0, 1, 2, 3, 4]


async def test_of_several_failures_the_first_is_raised() -> None:
    async def fails_late() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        raise RuntimeError("second")

    async def fails_early() -> None:
        raise UserError("first")

    with pytest.raises(UserError, match="first"):
        await run_all([fails_late(), fails_early()])


async def test_an_engine_run_and_a_judge_pass_stop_at_a_rejected_model(tmp_path: Path) -> None:
    suite = load_suite("v2").subset(["direct", "negotiation", "psych"])
    with MockServer(MockConfig(latency_s=0.02)) as server:
        good = ModelSpec(id="scripted-firm", base_url=server.base_url)
        unknown = ModelSpec(id="no-such-model", base_url=server.base_url)
        judge = ModelSpec(id="scripted-judge", base_url=server.base_url, temperature=0.0)
        pool = ClientPool(env={})
        try:
            with Store(tmp_path) as store:
                engine = Engine(store, pool, retry=RetryPolicy(max_attempts=1))
                plan = RunPlan(suite=suite, models=(good, unknown), judge=None)
                with pytest.raises(UserError, match="does not serve model 'no-such-model'"):
                    await engine.run(plan)
                assert store.items(status="failed") == []  # nobody failed for its reason
                await Engine(store, pool).run(replace(plan, models=(good,)))
                items = store.items()
                rubrics = {item.id: suite.scenario(item.scenario_id).rubric for item in items}
                bad_judge = judge.model_copy(update={"id": "no-such-judge"})
                with pytest.raises(UserError, match="does not serve model 'no-such-judge'"):
                    await Engine(store, pool).judge(items, bad_judge, rubrics, repeats=2)
                with pytest.raises(UserError, match="does not serve model 'no-such-judge'"):
                    rejudge = replace(plan, models=(good,), judge=bad_judge, judge_repeats=2)
                    await Engine(store, pool).run(rejudge)
                assert store.judgments() == []
        finally:
            await pool.aclose()


def test_the_first_failure_of_nested_groups_is_the_innermost_first() -> None:
    from independence_bench.engine.launch import first_failure

    cause = ValueError("the first")
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [cause]), KeyError("later")])
    assert first_failure(nested) is cause
