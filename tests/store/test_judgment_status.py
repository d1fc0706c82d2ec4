"""A re-run checks each item's judgments by status alone: the same answers as the whole row
gives, without decoding the row (3,000 decoded rows were 0.45 s of a stored 20 × 5 re-run's
profile)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from independence_bench.engine.pending import all_scored
from independence_bench.store import store as store_module
from independence_bench.store.records import ItemRecord, TurnRecord
from independence_bench.store.store import Store, Verdict


def _done_items(store: Store, *ids: str) -> None:
    run, _ = store.ensure_run(
        model_label="m",
        model_id="m",
        suite_id="v2",
        suite_version=1,
        suite_hash="h",
        run_index=1,
        model_config={"id": "m"},
        package_version="0",
    )
    item = ItemRecord(
        "i",
        run,
        "v",
        "tool_role",
        "s",
        "stability",
        "stability",
        "done",
        None,
        (TurnRecord("h", "r", "k"),),
    )
    for iid in ids:
        store.put_item(replace(item, id=iid))


def _judge(store: Store, iid: str, repeat: int, status: str) -> None:
    scores = {"a": 3} if status == "scored" else None
    store.add_judgment(
        item_id=iid,
        judge_model="j",
        rubric_id="r",
        rubric_hash="rh",
        repeat=repeat,
        verdict=Verdict(status, scores, "why", "{}", None, 1, ()),  # type: ignore[arg-type]
    )


def test_status_and_all_scored_agree_with_the_whole_row(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _done_items(store, "both", "one-unscored", "one-missing")
        for repeat in (0, 1):
            _judge(store, "both", repeat, "scored")
        _judge(store, "one-unscored", 0, "scored")
        _judge(store, "one-unscored", 1, "unscored")
        _judge(store, "one-missing", 0, "scored")
        for iid in ("both", "one-unscored", "one-missing", "never"):
            for repeat in (0, 1, 2):
                row = store.find_judgment(iid, "j", "rh", repeat)
                expected = None if row is None else row.status
                assert store.judgment_status(iid, "j", "rh", repeat) == expected
                assert store.has_judgment(iid, "j", "rh", repeat) == (row is not None)
        assert store.judgment_status("both", "other judge", "rh", 0) is None
        assert store.judgment_status("both", "j", "other hash", 0) is None
        assert all_scored(store, "both", "j", "rh", 2)
        assert not all_scored(store, "both", "j", "rh", 3)
        assert not all_scored(store, "one-unscored", "j", "rh", 2)
        assert all_scored(store, "one-unscored", "j", "rh", 1)
        assert not all_scored(store, "one-missing", "j", "rh", 2)


def test_the_re_run_checks_decode_no_judgment_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(tmp_path) as store:
        _done_items(store, "i")
        _judge(store, "i", 0, "scored")

        def no_decoding(row: object) -> object:
            raise AssertionError("a re-run check decoded a whole judgment row")

        monkeypatch.setattr(store_module, "judgment_from_row", no_decoding)
        assert store.has_judgment("i", "j", "rh", 0)
        assert all_scored(store, "i", "j", "rh", 1)
