"""Reading results out of the store: which suite, content, judge and items get scored."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from independence_bench.errors import UserError
from independence_bench.scoring.results import (
    SuiteResults,
    choose_hash,
    choose_scoring_judge,
    choose_suite,
    formula_of_suite,
    judge_counts,
    load_results,
    of_models,
    scored_items,
)
from independence_bench.scoring.scoring import ScoredItem
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord, Verdict
from independence_bench.suites.selection import Selection


def _run(
    store: Store,
    model: str,
    *,
    suite_id: str = "v2",
    suite_hash: str = "h1",
    model_id: str | None = None,
) -> RunRecord:
    run, _ = store.ensure_run(
        model_label=model,
        model_id=model_id or model,
        suite_id=suite_id,
        suite_version=1,
        suite_hash=suite_hash,
        run_index=1,
        model_config={"id": model},
        package_version="0",
    )
    return run


def _item(
    store: Store,
    run: RunRecord,
    item_id: str,
    *,
    experiment: str = "stability",
    variant: str = "neutral",
    mode: str = "tool_role",
) -> None:
    kind = "stability" if experiment == "stability" else "boundary"
    turns = (TurnRecord("h", "r", "k"),)
    store.put_item(
        ItemRecord(
            item_id, run, variant, mode, f"s_{item_id}", kind, experiment, "done", None, turns
        )
    )


def _judge(
    store: Store,
    item_id: str,
    judge: str,
    scores: Mapping[str, Any] | None,
    *,
    repeat: int = 0,
    rubric_hash: str = "rh",
    status: str | None = None,
) -> None:
    store.add_judgment(
        item_id=item_id,
        judge_model=judge,
        rubric_id="stability",
        rubric_hash=rubric_hash,
        repeat=repeat,
        verdict=Verdict(
            status or ("unscored" if scores is None else "scored"),
            scores,
            None if scores is None else "why",
            "{}",
            "bad" if scores is None else None,
            1,
            ("c",),
        ),
    )


def test_the_suite_is_the_one_asked_for_or_the_only_one(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        with pytest.raises(UserError, match=r"holds no runs yet; run 'aib run' first"):
            choose_suite(store, None)
        _run(store, "m")
        assert choose_suite(store, None) == "v2"
        assert choose_suite(store, "v2") == "v2"
        with pytest.raises(UserError) as unknown:
            choose_suite(store, "lite")
        assert str(unknown.value) == "the store has no runs of suite 'lite'; it has: ['v2']"
        _run(store, "m", suite_id="lite")
        with pytest.raises(UserError) as several:
            choose_suite(store, None)
        assert str(several.value) == (
            "the store holds several suites ['lite', 'v2']; pick one with --suite"
        )
        assert choose_suite(store, "lite") == "lite"


def test_the_content_is_the_asked_hash_or_the_newest(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _run(store, "m", suite_hash="old")
        _run(store, "n", suite_hash="new")
        assert choose_hash(store, "v2", None) == "new"
        assert choose_hash(store, "v2", "old") == "old"
        with pytest.raises(UserError) as missing:
            choose_hash(store, "v2", "other")
        assert str(missing.value) == "the store has no runs of suite 'v2' with that content"


def test_formula_of_shipped_imported_and_unknown_suites() -> None:
    assert [formula_of_suite(s) for s in ("v2", "lite", "legacy-v1", "legacy-lite")] == [
        "v2",
        "lite",
        "v1",
        "lite",
    ]
    with pytest.raises(UserError) as unknown:
        formula_of_suite("v9")
    assert str(unknown.value) == "unknown suite 'v9' in the store; upgrade aib to read it"


def test_the_default_judge_has_most_scored_first_judgments(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store, "m")
        for item_id in ("a", "b", "c"):
            _item(store, run, item_id)
        # j1: two scored first judgments. j2: one, plus two retests. j3: three unscored.
        _judge(store, "a", "j1", {"consistency_score": 5})
        _judge(store, "b", "j1", {"consistency_score": 5})
        _judge(store, "a", "j2", {"consistency_score": 5})
        _judge(store, "a", "j2", {"consistency_score": 6}, repeat=1)
        _judge(store, "b", "j2", {"consistency_score": 6}, repeat=1)
        for item_id in ("a", "b", "c"):
            _judge(store, item_id, "j3", None)
        judgments = store.judgments()
    assert choose_scoring_judge(judgments, None) == "j1"
    assert judge_counts(judgments) == {"j1": 2, "j2": 1}  # the others an output lists
    assert choose_scoring_judge(judgments, "j3") == "j3"
    with pytest.raises(UserError) as unknown:
        choose_scoring_judge(judgments, "j4")
    assert str(unknown.value) == (
        "no judgments by 'j4' in the store; judges present: ['j1', 'j2', 'j3']"
    )
    assert choose_scoring_judge([j for j in judgments if j.judge_model == "j3"], None) is None


def test_judge_counts_list_the_most_scored_judge_first_then_by_name(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store, "m")
        for item_id in ("a", "b", "c"):
            _item(store, run, item_id)
        # zed judged first but least; "mid" and "alpha" tie, and "mid" is seen first.
        _judge(store, "a", "zed", {"consistency_score": 5})
        for item_id in ("a", "b"):
            _judge(store, item_id, "mid", {"consistency_score": 5})
            _judge(store, item_id, "alpha", {"consistency_score": 5})
        for item_id in ("a", "b", "c"):
            _judge(store, item_id, "top", {"consistency_score": 5})
        counts = judge_counts(store.judgments())
    # A dict compares equal in any order: the order is what an output lists.
    assert list(counts.items()) == [("top", 3), ("alpha", 2), ("mid", 2), ("zed", 1)]


def test_scored_items_skip_unscored_unknown_and_other_judges(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store, "m")
        for item_id in ("a", "b", "gone"):
            _item(store, run, item_id)
        # In id order: an item not passed in, an unscored judgment, another judge, then the
        # ones that count — a skipped row must not end the scan.
        _judge(store, "gone", "j1", {"consistency_score": 1})
        _judge(store, "a", "j1", None)
        _judge(store, "a", "j3", {"consistency_score": 4}, status="unscored")  # never counts
        _judge(store, "a", "j2", {"consistency_score": 2})
        _judge(store, "b", "j1", {"consistency_score": 7})
        _judge(store, "b", "j1", {"consistency_score": 8}, repeat=1)
        items = [i for i in store.items() if i.id != "gone"]
        judgments = store.judgments()
    got = scored_items(items, judgments, {"j1"})
    assert got == [
        ScoredItem(
            model="m",
            run=1,
            variant="neutral",
            mode="tool_role",
            scenario_id="s_b",
            kind="stability",
            judge="j1",
            scores={"consistency_score": score},
            item_id="b",
            repeat=repeat,
        )
        for score, repeat in ((7, 0), (8, 1))
    ]
    assert [(s.item_id, s.judge) for s in scored_items(items, judgments)] == [
        ("a", "j2"),
        ("b", "j1"),
        ("b", "j1"),
    ]


def _two_experiment_store(store: Store) -> None:
    old = _run(store, "m", suite_hash="old")
    _item(store, old, "old")
    _judge(store, "old", "j1", {"consistency_score": 1})
    other_suite = _run(store, "m", suite_id="lite", suite_hash="new")
    _item(store, other_suite, "lite")
    _judge(store, "lite", "j1", {"consistency_score": 2})
    new = _run(store, "n", suite_hash="new")
    _item(store, new, "st", experiment="stability")
    _item(store, new, "st_user", experiment="stability", mode="user_role")
    _item(store, new, "st_neutral", experiment="stability", variant="strong_independence")
    _item(store, new, "bd", experiment="boundary")
    for item_id, score in (("st", 3), ("st_user", 4), ("st_neutral", 5), ("bd", 6)):
        _judge(store, item_id, "j1", {"consistency_score": score})
    _judge(store, "st", "j2", {"consistency_score": 9})
    _judge(store, "bd", "j2", {"consistency_score": 8})
    _judge(store, "st", "j2", {"consistency_score": 7}, repeat=1)


def test_load_results_reads_the_newest_content_of_one_suite_with_one_judge(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        _two_experiment_store(store)
        results = load_results(store, suite_id="v2", judge=None)
        judgments = store.judgments()
    assert isinstance(results, SuiteResults)
    assert (results.suite_id, results.formula, results.judge, results.judges) == (
        "v2",
        "v2",
        "j1",
        ("j1",),
    )
    assert [i.id for i in results.items] == ["st", "st_user", "st_neutral", "bd"]
    ids = {"st", "st_user", "st_neutral", "bd"}
    assert results.judgments == tuple(j for j in judgments if j.item_id in ids)
    assert [(s.item_id, s.judge, s.scores["consistency_score"]) for s in results.scored] == [
        ("st", "j1", 3),
        ("st_user", "j1", 4),
        ("st_neutral", "j1", 5),
        ("bd", "j1", 6),
    ]
    assert (results.selection, results.left_out) == (Selection(), ())


def test_load_results_of_a_named_judge_a_panel_and_old_content(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _two_experiment_store(store)
        named = load_results(store, suite_id="v2", judge="j2")
        panel = load_results(store, suite_id="v2", judge=None, judges=("j2", "j1"))
        old = load_results(store, suite_id="v2", judge=None, only_hash="old")
    assert (named.judge, named.judges) == ("j2", ("j2",))
    assert [(s.item_id, s.scores["consistency_score"]) for s in named.scored] == [
        ("st", 9),
        ("bd", 8),
    ]
    assert (panel.judge, panel.judges) == ("j2", ("j2", "j1"))
    assert len(panel.scored) == 6
    assert [(s.item_id, s.scores["consistency_score"]) for s in old.scored] == [("old", 1)]


def test_load_results_keeps_the_selected_cells_and_names_what_is_left_out(
    tmp_path: Path,
) -> None:
    selection = Selection(experiments=("stability",), variants=("neutral",), modes=("tool_role",))
    with Store(tmp_path) as store:
        _two_experiment_store(store)
        results = load_results(store, suite_id="v2", judge=None, selection=selection)
        with pytest.raises(UserError) as unknown:
            load_results(store, suite_id="v2", judge=None, selection=Selection(modes=("x",)))
    assert [i.id for i in results.items] == ["st"]
    assert results.selection == selection
    assert results.left_out == ("boundary",)
    assert str(unknown.value) == (
        "--modes: no 'x' in suite v2 in the store; choose from: tool_role, user_role"
    )


def test_a_suite_without_scored_judgments_has_no_judge(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run = _run(store, "m")
        _item(store, run, "a")
        _judge(store, "a", "j1", None)
        results = load_results(store, suite_id=None, judge=None)
    assert (results.judge, results.judges, results.scored) == (None, (), ())


def _three_model_store(store: Store) -> None:
    # Labels and model ids differ, so a filter that reads only one of them is caught.
    for label, model_id in (("firm@t1", "org/firm"), ("caving", "org/caving"), ("plain", "p")):
        run = _run(store, label, model_id=model_id)
        for n in (1, 2):
            _item(store, run, f"{label}-{n}")
            _judge(store, f"{label}-{n}", "j1", {"consistency_score": n})


def test_models_are_picked_by_label_or_model_id(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _three_model_store(store)
        items = store.items(suite_id="v2", words=False)
        by_id = load_results(store, suite_id="v2", judge=None, models=("org/firm",))
    assert [i.id for i in of_models(items, ["org/firm"], "v2")] == ["firm@t1-1", "firm@t1-2"]
    assert [i.id for i in of_models(items, ["caving"], "v2")] == ["caving-1", "caving-2"]
    assert [i.id for i in of_models(items, ["p", "caving"], "v2")] == [
        "caving-1",
        "caving-2",
        "plain-1",
        "plain-2",
    ]
    assert [i.id for i in by_id.items] == ["firm@t1-1", "firm@t1-2"]
    assert [s.item_id for s in by_id.scored] == ["firm@t1-1", "firm@t1-2"]
    assert {j.item_id for j in by_id.judgments} == {"firm@t1-1", "firm@t1-2"}


def test_a_model_the_suite_has_not_run_is_named_with_the_labels_it_has(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _three_model_store(store)
        items = store.items(suite_id="v2", words=False)
        with pytest.raises(UserError) as missing:
            load_results(store, suite_id="v2", judge=None, models=("zed", "caving", "firm"))
    assert str(missing.value) == (
        "--models: suite v2 in the store has no runs of zed, firm; it has caving, firm@t1, plain"
    )
    with pytest.raises(UserError) as none:
        of_models([], ["org/firm"], "lite")
    assert (
        str(none.value) == "--models: suite lite in the store has no runs of org/firm; it has none"
    )
    assert of_models(items, [], "v2") == []
