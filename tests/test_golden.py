"""Behaviour unchanged: a store written before the package was restructured reads the same.

The store in `tests/data/golden/` was made by commit 46f0e83 (see its README). Point values —
each model's index, every metric, runs, item statistics — must match what that commit printed
exactly; interval endpoints come from bootstrap resamples, so they must match within Monte Carlo
error (the resampling code may draw its random numbers differently) — with one deliberate change
since: each resample now draws n − 1 of n scenarios and runs (`bootstrap.draw_size`), which
widens every interval by up to √(n/(n − 1)), √2 for two runs. So the new intervals must hold the
old ones (within Monte Carlo error) and be at most √2 times as wide.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from independence_bench.store.schema import SCHEMA_VERSION

GOLDEN = Path(__file__).parent / "data" / "golden"
INTERVAL_TOLERANCE = 2.5  # index points; 2,000 resamples put a 2.5% quantile within ~1 point
METRIC_TOLERANCE = 0.6  # on 0–10 metric intervals
WIDENING = 2**0.5  # at most √(n/(n − 1)) with n ≥ 2 scenarios or runs


def _holds(new: tuple[float, float], old: tuple[float, float], tolerance: float) -> bool:
    """`new` contains `old` and is at most √2 times as wide, within `tolerance`."""
    inside = new[0] <= old[0] + tolerance and new[1] >= old[1] - tolerance
    return inside and new[1] - new[0] <= WIDENING * (old[1] - old[0]) + 2 * tolerance


@pytest.fixture()
def golden_store(tmp_path: Path) -> Path:
    data = tmp_path / "golden-data"
    data.mkdir()
    with (
        gzip.open(GOLDEN / "store-46f0e83.sqlite3.gz") as packed,
        (data / "aib.sqlite3").open("wb") as out,
    ):
        shutil.copyfileobj(packed, out)
    return data


def _expected(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("suite", ["v2", "full"])
def test_leaderboard_of_a_pre_move_store_is_unchanged(
    suite: str, golden_store: Path, aib: Any
) -> None:
    result = aib(
        "leaderboard", "--suite", suite, "--data-dir", str(golden_store),
        "--resamples", "2000", "--seed", "0", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    # A reading command upgrades a store an older aib wrote (the one write it may make).
    with sqlite3.connect(golden_store / "aib.sqlite3") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    rows = result.json()
    expected = _expected(f"leaderboard-{suite}.json")
    assert [row["model"] for row in rows] == [row["model"] for row in expected]
    for row, old in zip(rows, expected, strict=True):
        metrics = [key for key in old if f"{key}_ci" in old]
        assert metrics, "the golden rows carry per-metric intervals"
        for key in ("index", "runs", *metrics):
            assert row[key] == pytest.approx(old[key], abs=1e-9), (row["model"], key)
        index = (row["ci_low"], row["ci_high"])
        assert _holds(index, (old["ci_low"], old["ci_high"]), INTERVAL_TOLERANCE), row["model"]
        for key in metrics:
            found = tuple(row[f"{key}_ci"])
            assert _holds(found, tuple(old[f"{key}_ci"]), METRIC_TOLERANCE), (row["model"], key)
        assert row["rank_low"] <= old["rank_low"] + 1
        assert row["rank_high"] >= old["rank_high"] - 1


def test_item_statistics_of_a_pre_move_store_are_unchanged(golden_store: Path, aib: Any) -> None:
    result = aib("items", "--suite", "v2", "--data-dir", str(golden_store), "--json")
    assert result.code == 0, result.err
    expected = _expected("items-v2.json")
    # per-metric discrimination (`metrics`) came later: that commit printed the rest
    found = [{k: v for k, v in row.items() if k != "metrics"} for row in result.json()["items"]]
    assert found == expected["items"]
    assert all(row["metrics"] for row in result.json()["items"])
