"""A re-run with everything stored touches no endpoint: no chat call, no `GET /models`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from independence_bench.clients.config import ModelSpec
from independence_bench.engine.pending import PendingWork, everything, pending_work
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockServer

SCENARIOS = "direct,negotiation"


def _run(url: str, models: str, *extra: str) -> list[str]:
    return [
        "run",
        "--models",
        models,
        "--judge",
        "scripted-judge-graded",
        "--base-url",
        url,
        "--runs",
        "2",
        "--scenarios",
        SCENARIOS,
        "--data-dir",
        "store",
        *extra,
    ]


def _table(out: str) -> str:
    """The leaderboard part of `aib run`'s output (after the summary line)."""
    return out.split("\n", 1)[1]


def test_a_cached_rerun_sends_nothing_and_prints_the_same_leaderboard(aib: Any) -> None:
    models = "scripted-firm,scripted-caving"
    with MockServer() as server:
        first = aib(*_run(server.base_url, models))
        assert first.code == 0, first.err
        calls, listings = server.seen.request_count, server.seen.model_lists
        again = aib(*_run(server.base_url, models))
        assert again.code == 0, again.err
        assert (server.seen.request_count, server.seen.model_lists) == (calls, listings)
        url = server.base_url
    # The server is gone: a preflight `GET /models` would now fail the run.
    offline = aib(*_run(url, models))
    assert offline.code == 0, offline.err
    assert "0 conversations run, 8 cached" in offline.out and "0 API calls" in offline.out
    assert _table(offline.out) == _table(again.out) == _table(first.out)


def test_only_models_with_work_reach_their_endpoint(aib: Any) -> None:
    with MockServer() as server:
        first = aib(*_run(server.base_url, "scripted-firm"))
        assert first.code == 0, first.err
        url = server.base_url
    # The first model is done; the new one points at a server that is not there.
    mixed = aib(*_run(url, "scripted-firm,scripted-caving"))
    assert mixed.code == 2
    assert "cannot reach" in mixed.err and "Traceback" not in mixed.err


def test_pending_work_names_the_models_and_the_judge_that_still_have_calls(
    server: MockServer, aib: Any, tmp_path: Path
) -> None:
    assert aib(*_run(server.base_url, "scripted-firm")).code == 0
    suite = load_suite("v2").subset(SCENARIOS.split(","))
    firm, caving = (ModelSpec(id=name) for name in ("scripted-firm", "scripted-caving"))
    judge = ModelSpec(id="scripted-judge-graded", label="scripted-judge-graded", temperature=0.0)
    other_judge = ModelSpec(id="another-judge", label="another-judge", temperature=0.0)
    with Store(tmp_path / "store", read_only=True) as store:
        done = pending_work(store, suite, (firm,), judge, range(1, 3))
        more_runs = pending_work(store, suite, (firm,), judge, range(1, 4))
        new_model = pending_work(store, suite, (firm, caving), judge, range(1, 3))
        new_judge = pending_work(store, suite, (firm,), other_judge, range(1, 3))
        unjudged = pending_work(store, suite, (firm,), None, range(1, 3))
        repeats = pending_work(store, suite, (firm,), judge, range(1, 3), judge_repeats=2)
    assert (done.models, done.judge) == (frozenset(), False)
    assert done.specs((firm,), judge) == ()
    assert (more_runs.models, more_runs.judge) == ({"scripted-firm"}, True)
    assert (new_model.models, new_model.judge) == ({"scripted-caving"}, True)
    assert new_model.specs((firm, caving), judge) == (caving, judge)
    assert (new_judge.models, new_judge.judge) == (frozenset(), True)
    assert new_judge.specs((firm,), other_judge) == (other_judge,)
    assert (unjudged.models, unjudged.judge) == (frozenset(), False)
    assert (repeats.models, repeats.judge) == (frozenset(), True)


def test_a_checklist_judge_reads_its_own_judgments_as_done(
    server: MockServer, aib: Any, tmp_path: Path
) -> None:
    assert aib(*_run(server.base_url, "scripted-firm", "--judge-form", "checklist")).code == 0
    suite = load_suite("v2").subset(SCENARIOS.split(","))
    firm = ModelSpec(id="scripted-firm")
    graded = {"id": "scripted-judge-graded", "label": "scripted-judge-graded", "temperature": 0.0}
    checklist = ModelSpec(**graded, judge_form="checklist")
    with Store(tmp_path / "store", read_only=True) as store:
        done = pending_work(store, suite, (firm,), checklist, range(1, 3))
        holistic = pending_work(store, suite, (firm,), ModelSpec(**graded), range(1, 3))
    assert done == PendingWork(frozenset(), False)
    assert holistic == PendingWork(frozenset(), True)  # its judgments are another form's


def test_with_nothing_read_every_model_and_the_judge_have_work() -> None:
    models = (ModelSpec(id="a"), ModelSpec(id="b", label="B"))
    judge = ModelSpec(id="j")
    assert everything(models, judge) == PendingWork(frozenset({"a", "B"}), True)
    assert everything(models, judge).specs(models, judge) == (*models, judge)
    assert everything(models, None) == PendingWork(frozenset({"a", "B"}), False)
