"""Selectors and suite lookups: what they keep, and the words they fail with."""

from __future__ import annotations

import pytest

from independence_bench.errors import UserError
from independence_bench.suites.selection import Selection
from independence_bench.suites.suite import load_suite

SUITE = load_suite("v2")


def test_a_selection_describes_itself_and_exports_every_part() -> None:
    selection = Selection(experiments=("identity", "stability"), variants=("neutral",), modes=())
    assert selection.describe() == "experiments identity, stability; variants neutral"
    assert Selection(modes=("tool_role", "user_role")).describe() == "modes tool_role, user_role"
    assert Selection().describe() == ""
    assert Selection(("identity",), ("neutral",), ("tool_role",)).as_json() == {
        "experiments": ["identity"],
        "variants": ["neutral"],
        "modes": ["tool_role"],
    }


def test_unknown_selector_values_name_the_option_the_place_and_the_choices() -> None:
    with pytest.raises(UserError) as mode:
        Selection.parse(None, None, "tool_role,radio")
    assert str(mode.value) == "--modes: no 'radio'; choose from: tool_role, user_role"
    with pytest.raises(UserError) as experiment:
        Selection(experiments=("poetry",)).check_against(
            ["identity", "stability", "identity"], [], [], "suite v2 in the store"
        )
    assert str(experiment.value) == (
        "--experiments: no 'poetry' in suite v2 in the store; choose from: identity, stability"
    )


def test_a_suite_finds_its_variants_and_scenarios_by_id() -> None:
    assert SUITE.variant("strong_independence").id == "strong_independence"
    assert SUITE.scenario("psych").id == "psych"
    with pytest.raises(KeyError) as variant:
        SUITE.variant("nope")
    assert variant.value.args == ("nope",)
    with pytest.raises(KeyError) as scenario:
        SUITE.scenario("nope")
    assert scenario.value.args == ("nope",)
    with pytest.raises(UserError) as unknown:
        SUITE.subset(["direct", "nope"])
    known = ", ".join(s.id for s in SUITE.scenarios)
    assert str(unknown.value) == f"suite v2 has no scenario 'nope'; it has: {known}"
    assert known.startswith("direct, tool_context, psych, ")


def test_left_out_experiments_come_in_table_order_then_unknown_ones_by_name() -> None:
    selection = Selection(experiments=("stability",))
    found = ["zz_imported", "stability", "boundary", "identity", "aa_imported"]
    assert selection.left_out(found) == ("identity", "boundary", "aa_imported", "zz_imported")
    assert Selection().left_out(found) == ()
