"""The engine's cycle collection: rare and over new objects only while it runs, then as before."""

from __future__ import annotations

import gc

from independence_bench.engine.collection import YOUNG_THRESHOLD, sparse_collection


def test_a_run_collects_rarely_over_new_objects_and_puts_the_settings_back() -> None:
    before = gc.get_threshold()
    alive = [object() for _ in range(10)]
    with sparse_collection():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        assert gc.get_freeze_count() > len(alive)  # what was alive is never walked again
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_settings_come_back_when_the_run_fails() -> None:
    before = gc.get_threshold()
    try:
        with sparse_collection():
            raise RuntimeError("a run that fails")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_two_runs_that_end_in_either_order_leave_the_settings_as_they_were() -> None:
    before = gc.get_threshold()
    first, second = sparse_collection(), sparse_collection()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the run started first ends first
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before
    with sparse_collection(), sparse_collection():  # one inside the other
        pass
    assert gc.get_threshold() == before
