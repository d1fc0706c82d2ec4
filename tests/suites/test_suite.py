"""The shipped suites: composition, hashing and subsets."""

from __future__ import annotations

import pytest

from independence_bench.errors import UserError
from independence_bench.suites.suite import available_suites, load_suite, suite_formula


def test_shipped_suites_and_their_shapes() -> None:
    assert {"full", "lite", "v2"} <= set(available_suites())
    full, lite, v2 = load_suite("full"), load_suite("lite"), load_suite("v2")
    assert [v.id for v in full.variants] == ["neutral", "strong_independence"]
    assert full.delivery_modes == ("user_role", "tool_role")
    assert len(full.scenario("psych").turns) == 15 and full.formula == "v1"
    for suite in (lite, v2):
        assert [v.id for v in suite.variants] == ["strong_independence"]
        assert suite.delivery_modes == ("tool_role",)
        assert len(suite.scenario("psych").turns) == 5
    assert set(v2.experiments) == {"identity", "boundary", "stability"} and v2.formula == "v2"
    assert set(lite.experiments) == {"identity", "resistance", "stability"}
    kinds = [s.kind for s in v2.scenarios]
    assert kinds.count("boundary") == 5 and kinds.count("stability") == 5
    assert "name_gender" in kinds
    for suite in (full, lite, v2):
        for scenario in suite.scenarios:
            if scenario.kind in (
                "negotiation",
                "name_gender",
                "boundary",
                "stability",
                "resistance",
            ):
                assert len(scenario.turns) == 2, scenario.id


def test_hash_is_stable_and_covers_every_word() -> None:
    assert load_suite("v2").content_hash == load_suite("v2").content_hash
    hashes = {load_suite(s).content_hash for s in ("full", "lite", "v2")}
    assert len(hashes) == 3


def test_subset_has_its_own_hash_and_rejects_unknown_ids() -> None:
    v2 = load_suite("v2")
    small = v2.subset(["direct", "negotiation"])
    assert [s.id for s in small.scenarios] == ["direct", "negotiation"]
    assert small.content_hash != v2.content_hash
    with pytest.raises(UserError, match="no scenario 'nope'"):
        v2.subset(["nope"])


def test_unknown_suite_names_the_choices() -> None:
    for read in (load_suite, suite_formula):
        with pytest.raises(UserError) as unknown:
            read("v9")
        known = "adaptive, full, lite, v2, v3"
        assert str(unknown.value) == f"unknown suite 'v9'; choose one of: {known}"


def test_a_suites_formula_is_read_from_its_file_alone() -> None:
    assert {s: suite_formula(s) for s in available_suites()} == {
        s: load_suite(s).formula for s in available_suites()
    }
