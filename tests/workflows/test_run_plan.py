"""A run is planned once (`plan.plan_run`): the suite loaded and narrowed once, what the selection
leaves out carried with it, every model role chosen once, and the judge of `aib judge` chosen by
the same function as `aib run`'s."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from independence_bench.cli.options import run_options
from independence_bench.inspect_tasks.narrowing import narrowed_suite
from independence_bench.suites import DEFAULT_SUITE
from independence_bench.suites.selection import Selection
from independence_bench.workflows import plan
from independence_bench.workflows.judge import JudgeOptions, judge_of
from independence_bench.workflows.plan import RunOptions, plan_run
from support.mock_server import MockServer

SERVER = "http://127.0.0.1:9/v1"


def _counted(monkeypatch: pytest.MonkeyPatch, calls: Counter[str], name: str) -> None:
    original: Callable[..., Any] = getattr(plan, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(plan, name, counted)


def test_aib_run_plans_the_suite_and_every_role_once(
    server: MockServer, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()
    for name in ("load_suite", "resolve_models", "choose_judge", "resolve_user_model"):
        _counted(monkeypatch, calls, name)
    result = aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge", "--base-url",
        server.base_url, "--runs", "1", "--experiments", "stability", "--data-dir", "store",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert calls == {
        "load_suite": 1,
        "resolve_models": 1,
        "choose_judge": 1,
        "resolve_user_model": 1,
    }
    # What the selection leaves out is said from the plan, not from the suite loaded again.
    assert "No index (partial): the selection leaves out identity, boundary" in result.out


def test_the_plan_carries_the_narrowed_suite_and_what_the_selection_leaves_out() -> None:
    options = RunOptions(
        models="m",
        base_url=SERVER,
        judge="j",
        scenarios=("direct", "boundary_helpful_reframing"),
        selection=Selection(experiments=("identity",)),
        env={},
    )
    planned = plan_run(options)
    assert planned.suite.id == DEFAULT_SUITE
    assert [s.id for s in planned.suite.scenarios] == ["direct"]
    assert planned.left_out == ("boundary", "stability")
    assert [m.id for m in planned.models] == ["m"] and planned.runs == 5
    assert planned.judge is not None and planned.judge.base_url == SERVER
    assert planned.user_model is None
    everything = plan_run(RunOptions(models="m", base_url=SERVER, judge="j", env={}))
    assert everything.left_out == ()


def test_an_inspect_task_narrows_its_suite_as_aib_run_does() -> None:
    # One narrowing (`Suite.narrowed`) for `aib run --scenarios … --variants … --modes …` and
    # the Inspect task's parameters of the same names: the same words run the same suite.
    options = RunOptions(
        suite_id="full",
        scenarios=("direct", "psych", "negotiation"),
        selection=Selection(variants=("neutral",), modes=("user_role",)),
    )
    ours = plan.planned_suite(options)
    theirs = narrowed_suite(
        "full", variants="neutral", modes=["user_role"], scenarios="direct,psych,negotiation"
    )
    assert [s.id for s in ours.scenarios] == ["direct", "psych", "negotiation"]
    assert [v.id for v in ours.variants] == ["neutral"] and ours.delivery_modes == ("user_role",)
    assert theirs.content_hash == ours.content_hash
    whole = plan.planned_suite(RunOptions(suite_id="full"))
    assert narrowed_suite("full").content_hash == whole.content_hash
    assert len(whole.scenarios) > 3 and len(whole.variants) == 2


def test_the_cli_and_the_library_share_one_suite_default() -> None:
    suite = next(p for p in run_options(lambda: None).__click_params__ if p.name == "suite")
    assert suite.default == RunOptions().suite_id == DEFAULT_SUITE


def test_aib_judge_chooses_its_judge_as_aib_run_does() -> None:
    options = JudgeOptions(judge="j", base_url=SERVER, judge_form="checklist")
    run_side = plan.choose_judge(
        RunOptions(judge="j", judge_base_url=SERVER, judge_form="checklist"), (), None
    )
    assert judge_of(options) == run_side
    assert (run_side.base_url, run_side.temperature, run_side.judge_form) == (
        SERVER,
        0.0,
        "checklist",
    )
