"""Behaviour unchanged: a store written before the package was restructured reads the same.

The store in `tests/data/golden/` was made by commit 46f0e83 (see its README). Point values —
each model's index, every metric, runs, item statistics — must match what that commit printed
exactly; interval endpoints come from bootstrap resamples, so they must match within Monte Carlo
error (the resampling code may draw its random numbers differently).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "data" / "golden"
INTERVAL_TOLERANCE = 2.5  # index points; 2,000 resamples put a 2.5% quantile within ~1 point
METRIC_TOLERANCE = 0.6  # on 0–10 metric intervals


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
    rows = result.json()
    expected = _expected(f"leaderboard-{suite}.json")
    assert [row["model"] for row in rows] == [row["model"] for row in expected]
    for row, old in zip(rows, expected, strict=True):
        metrics = [key for key in old if f"{key}_ci" in old]
        assert metrics, "the golden rows carry per-metric intervals"
        for key in ("index", "runs", *metrics):
            assert row[key] == pytest.approx(old[key], abs=1e-9), (row["model"], key)
        assert row["ci_low"] == pytest.approx(old["ci_low"], abs=INTERVAL_TOLERANCE)
        assert row["ci_high"] == pytest.approx(old["ci_high"], abs=INTERVAL_TOLERANCE)
        for key in metrics:
            low, high = row[f"{key}_ci"]
            assert low == pytest.approx(old[f"{key}_ci"][0], abs=METRIC_TOLERANCE), key
            assert high == pytest.approx(old[f"{key}_ci"][1], abs=METRIC_TOLERANCE), key
        assert abs(row["rank_low"] - old["rank_low"]) <= 1
        assert abs(row["rank_high"] - old["rank_high"]) <= 1


def test_item_statistics_of_a_pre_move_store_are_unchanged(golden_store: Path, aib: Any) -> None:
    result = aib("items", "--suite", "v2", "--data-dir", str(golden_store), "--json")
    assert result.code == 0, result.err
    expected = _expected("items-v2.json")
    assert result.json()["items"] == expected["items"]
