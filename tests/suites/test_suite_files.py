"""Shipped suite files: a broken one is named with its problem; unset fields stay out of hashes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

import independence_bench.suites.suite as suite_module
from independence_bench.errors import UserError
from independence_bench.suites.suite import load_suite

REAL_DATA_TEXT = suite_module._data_text


def _with_files(monkeypatch: pytest.MonkeyPatch, files: dict[tuple[str, ...], str]) -> None:
    def data_text(*parts: str) -> str:
        return files[parts] if parts in files else REAL_DATA_TEXT(*parts)

    monkeypatch.setattr(suite_module, "_data_text", data_text)


def _edited(parts: tuple[str, ...], edit: Callable[[dict[str, Any]], None]) -> str:
    data = yaml.safe_load(REAL_DATA_TEXT(*parts))
    edit(data)
    return yaml.safe_dump(data)


V2 = ("suites", "v2.yaml")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({V2: "id: [v2\n"}, "package data file suites/v2.yaml is not valid YAML: "),
        ({V2: "- a list\n"}, "v2.yaml: (top level): Input should be a valid dictionary"),
        (
            {V2: _edited(V2, lambda d: d.update(mood="x"))},
            "v2.yaml: mood: Extra inputs are not permitted",
        ),
        (
            {("prompts", "variants.yaml"): "variants: 3\n"},
            "variants.yaml: variants: Input should be a valid",
        ),
        (
            {("prompts", "variants.yaml"): "variants:\n  - id: 3\n"},
            "variants.yaml: variants.0.",  # a nested field is named by its path
        ),
        (
            {("scenarios", "identity.yaml"): "scenarios: 3\n"},
            "identity.yaml: scenarios: Input should be a valid",
        ),
        (
            {V2: _edited(V2, lambda d: d["psych_questions"].append("pq_nope"))},
            "v2.yaml names unknown psych questions: ['pq_nope']",
        ),
        (
            {V2: _edited(V2, lambda d: d["scenarios"].append("nope"))},
            "v2.yaml names unknown scenario 'nope'",
        ),
        (
            {V2: _edited(V2, lambda d: d["prompt_variants"].append("nope"))},
            "v2.yaml names unknown prompt variants: ['nope']",
        ),
        (
            {
                ("suites", "v3.yaml"): _edited(
                    ("suites", "v3.yaml"), lambda d: d["escalation_tactics"].reverse()
                )
            },
            "v3.yaml: scenario 'escalation_pref_city' has rounds ['disappointment', "
            "'social_proof', 'authority', 'emotional_appeal', 'ultimatum']; the suite's "
            "escalation_tactics are ['ultimatum', 'emotional_appeal', 'authority', "
            "'social_proof', 'disappointment']",
        ),
    ],
)
def test_a_broken_suite_file_is_named_with_its_problem(
    monkeypatch: pytest.MonkeyPatch, files: dict[tuple[str, ...], str], message: str
) -> None:
    _with_files(monkeypatch, files)
    suite_id = "v3" if ("suites", "v3.yaml") in files else "v2"
    with pytest.raises(UserError) as caught:
        load_suite(suite_id)
    assert str(caught.value).startswith(message)


def test_the_psych_scenario_is_the_suites_questions_in_one_conversation() -> None:
    suite = load_suite("v2")
    psych = suite.scenario("psych")
    assert psych.title == "Psychological questions, asked in one conversation"
    assert (psych.kind, psych.rubric, len(psych.turns)) == ("psych", "identity", 5)


def test_unset_escalation_fields_stay_out_of_a_scenarios_dump() -> None:
    # Left out while unset, so suites written before these fields keep their content hash.
    suite = load_suite("v3")
    plain = suite.scenario("direct").model_dump()
    assert not {"opening", "rounds", "topic_id", "expected"} & set(plain)
    escalation = suite.scenario("escalation_pref_city").model_dump()
    assert {"opening", "rounds"} <= set(escalation)
    assert "escalation_tactics" not in load_suite("v2").model_dump()
    assert "escalation_tactics" in suite.model_dump()
