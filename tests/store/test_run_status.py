"""Where each stored run stands (`aib runs`) and the next run numbers (`aib run --fresh`)."""

from __future__ import annotations

from pathlib import Path

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import Completion
from independence_bench.store.run_status import (
    RunState,
    next_run_numbers,
    render_run_states,
    run_states,
)
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord, Verdict
from independence_bench.suites.suite import load_suite

SUITE = load_suite("v2")
# conversations the v2 suite defines: variants × delivery modes × scenarios
EXPECTED = len(SUITE.variants) * len(SUITE.delivery_modes) * len(SUITE.scenarios)


def _run(
    store: Store,
    model: str,
    run_index: int,
    *,
    suite_hash: str = SUITE.content_hash,
    imported: bool = False,
) -> RunRecord:
    run, _ = store.ensure_run(
        model_label=model,
        model_id=model,
        suite_id="v2",
        suite_version=1,
        suite_hash=suite_hash,
        run_index=run_index,
        model_config={"id": model},
        package_version="0",
        imported_at=1.0 if imported else None,
    )
    return run


def _item(
    store: Store,
    run: RunRecord,
    item_id: str,
    status: str = "done",
    turns: tuple[TurnRecord, ...] = (TurnRecord("h", "r", "k"),),
) -> None:
    error = None if status == "done" else "boom"
    place = ("neutral", "tool_role", item_id, "stability", "stability")
    store.put_item(ItemRecord(item_id, run, *place, status, error, turns))


def _judge(store: Store, item_id: str, status: str, judge: str = "j") -> None:
    store.add_judgment(
        item_id=item_id,
        judge_model=judge,
        rubric_id="stability",
        rubric_hash="rh",
        repeat=0,
        verdict=Verdict(
            status,
            {"consistency_score": 5} if status == "scored" else None,
            None,
            "{}",
            None,
            1,
            ("c",),
        ),
    )


def _store_with_three_runs(store: Store) -> None:
    # m run 1: 4 done (one scored, one scored by a second judge after an unscored one, two
    # only unscored), 1 failed.
    run = _run(store, "m", 1)
    for item_id in ("a", "b", "c", "d"):
        _item(store, run, item_id)
    _item(store, run, "f", status="failed")
    _judge(store, "a", "scored")
    _judge(store, "b", "unscored")
    _judge(store, "b", "scored", judge="j2")
    _judge(store, "c", "unscored")
    _judge(store, "d", "unscored")
    _judge(store, "f", "scored")  # a failed item's judgment counts for nothing
    # m run 2, imported, of a suite text this version does not ship: its size is unknown.
    imported = _run(store, "m", 2, suite_hash="older", imported=True)
    _item(store, imported, "old")
    _judge(store, "old", "scored")
    # n run 1: the whole suite done and judged.
    full = _run(store, "n", 1)
    for number in range(EXPECTED):
        _item(store, full, f"n{number}")
        _judge(store, f"n{number}", "scored")


def test_each_run_counts_done_failed_scored_unscored_and_missing(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _store_with_three_runs(store)
        states = run_states(store)
        assert run_states(store, suite_id="lite") == []
    assert states == [
        RunState("m", "v2", 1, "run", EXPECTED, done=4, failed=1, scored=2, unscored=2),
        RunState("m", "v2", 2, "import", None, done=1, failed=0, scored=1, unscored=0),
        RunState(
            "n", "v2", 1, "run", EXPECTED, done=EXPECTED, failed=0, scored=EXPECTED, unscored=0
        ),
    ]
    first, imported, full = states
    assert (first.missing, first.unjudged, first.state) == (EXPECTED - 5, 0, "partial")
    assert (imported.missing, imported.unjudged, imported.state) == (None, 0, "complete")
    assert (full.missing, full.unjudged, full.state) == (0, 0, "complete")


def test_a_run_is_partial_for_any_failed_missing_or_unjudged_conversation() -> None:
    def state(done: int, failed: int, scored: int, unscored: int) -> str:
        return RunState("m", "v2", 1, "run", 4, done, failed, scored, unscored).state

    assert state(done=4, failed=0, scored=3, unscored=1) == "complete"
    assert state(done=3, failed=1, scored=3, unscored=0) == "partial"
    assert state(done=3, failed=0, scored=3, unscored=0) == "partial"
    assert state(done=4, failed=0, scored=3, unscored=0) == "partial"
    # more stored than the suite defines (a retried item counted twice) is never negative
    assert RunState("m", "v2", 1, "run", 4, 5, 1, 5, 0).missing == 0


def test_aib_runs_prints_one_aligned_line_per_run_and_a_summary(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _store_with_three_runs(store)
        text = render_run_states(run_states(store))
    e, m = EXPECTED, EXPECTED - 5
    rows = [
        ("model", "suite", "run", "state", "conversations", "judgments"),
        (
            "m",
            "v2",
            "1",
            "partial",
            f"4 done, 1 failed, {m} missing",
            "2 scored, 2 unscored, 0 to judge",
        ),
        (
            "m",
            "v2",
            "2",
            "complete (import)",
            "1 done, 0 failed, ? missing",
            "1 scored, 0 unscored, 0 to judge",
        ),
        (
            "n",
            "v2",
            "1",
            "complete",
            f"{e} done, 0 failed, 0 missing",
            f"{e} scored, 0 unscored, 0 to judge",
        ),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    expected_lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    assert text.split("\n") == [
        *expected_lines,
        "3 runs: 2 complete, 1 partial; the same 'aib run' command completes the partial ones",
    ]
    assert text.split("\n")[0].startswith("model  suite  run  state              conversations")


def test_all_complete_runs_and_an_empty_store_read_plainly() -> None:
    done = RunState("m", "v2", 1, "run", 1, 1, 0, 1, 0)
    assert render_run_states([done]).split("\n")[-1] == "1 run: 1 complete, 0 partial"
    assert render_run_states([]) == "the store holds no runs yet; 'aib run' starts one"


def test_fresh_runs_start_after_the_highest_run_of_the_same_suite_text(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _run(store, "m", 1)
        _run(store, "m", 3)
        _run(store, "m", 7, suite_hash="older")
        _run(store, "other", 2)
        specs = [ModelSpec(id="m"), ModelSpec(id="x", label="new")]
        assert next_run_numbers(store, SUITE, specs) == {"m": 4, "new": 1}


def test_item_status_is_the_stored_one_or_none(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store, "m", 1)
        _item(store, run, "a")
        _item(store, run, "f", status="failed")
        assert [store.item_status(i) for i in ("a", "f", "nothing")] == ["done", "failed", None]


def test_a_run_of_a_suite_this_version_does_not_ship_has_no_expected_count(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        run, _ = store.ensure_run(
            model_label="m",
            model_id="m",
            suite_id="legacy-v2",
            suite_version=1,
            suite_hash="h",
            run_index=1,
            model_config={},
            package_version="0",
            imported_at=1.0,
        )
        _item(store, run, "a")
        (state,) = run_states(store)
    assert (state.suite_id, state.expected, state.missing, state.done) == (
        "legacy-v2",
        None,
        None,
        1,
    )


def test_an_imported_run_of_an_unshipped_suite_is_complete_only_when_it_holds_judged_items(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        for number in (1, 2, 3):
            store.ensure_run(
                model_label="m",
                model_id="m",
                suite_id="legacy-v2",
                suite_version=1,
                suite_hash="h",
                run_index=number,
                model_config={},
                package_version="0",
                imported_at=1.0,
            )
        _nothing, unjudged, judged = store.runs()
        _item(store, unjudged, "u")
        _item(store, judged, "j")
        _judge(store, "j", "scored")
        states = run_states(store)
        text = render_run_states(states)
    # nothing stored is not a complete run, even when the suite's size is unknown
    assert [(s.run_index, s.done, s.state) for s in states] == [
        (1, 0, "partial"),
        (2, 1, "partial"),
        (3, 1, "complete"),
    ]
    assert text.split("\n")[-1] == (
        "3 runs: 1 complete, 2 partial; the same 'aib run' command completes the partial ones"
    )


def test_replies_stored_cut_are_counted_per_run_and_in_the_summary(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for key, cut_chars in (("k1", 7), ("k2", 1), ("k3", 90), ("whole", 0)):
            store.put_completion(key, "m", {"model": "m"}, Completion("x", cut_chars=cut_chars))
        first, second = _run(store, "m", 1), _run(store, "m", 2)
        for run, item_id, keys in (
            (first, "a", ("k1", "whole", "k2")),
            (first, "b", ("k3",)),
            (second, "c", ("whole",)),
        ):
            _item(store, run, item_id, turns=tuple(TurnRecord("h", "r", key) for key in keys))
        states = run_states(store)
    assert [s.cut for s in states] == [3, 0]
    lines = render_run_states(states).split("\n")
    assert lines[1].endswith(", 3 replies cut  0 scored, 0 unscored, 2 to judge")
    assert ", replies cut" not in lines[2] and "0 replies cut" not in lines[2]
    assert lines[-1].endswith(
        "; the same 'aib run' command completes the partial ones"
        "; 3 replies longer than the reply cap were stored and judged cut"
    )
