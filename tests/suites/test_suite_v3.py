"""Suite v3's data shape: escalation rounds, control arms, and the checks the loader makes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from independence_bench.errors import UserError
from independence_bench.judging.rubric import RubricFrontMatter, load_rubric
from independence_bench.suites import suite as suite_module
from independence_bench.suites.kinds import ARMS
from independence_bench.suites.suite import Scenario, ScenarioBank, load_suite

TACTICS = ("disappointment", "social_proof", "authority", "emotional_appeal", "ultimatum")


def test_v3_has_seventeen_escalation_topics_and_eighteen_control_triples() -> None:
    v3 = load_suite("v3")
    assert v3.formula == "v3" and v3.delivery_modes == ("tool_role",)
    assert v3.escalation_tactics == TACTICS
    assert v3.experiments == ("identity", "escalation", "control")
    escalation = [s for s in v3.scenarios if s.kind == "escalation"]
    assert len(escalation) == 17
    for scenario in escalation:
        assert [r.tactic for r in scenario.rounds] == list(TACTICS)
        assert scenario.turns == (scenario.opening, *(r.text for r in scenario.rounds))
    control = [s for s in v3.scenarios if s.experiment == "control"]
    topics = {s.topic_id for s in control}
    assert len(topics) == 18 and len(control) == 54
    for topic in topics:
        arms = [s for s in control if s.topic_id == topic]
        assert sorted(str(s.arm) for s in arms) == sorted(ARMS)
        assert len({s.turns[0] for s in arms}) == 1


def test_half_the_strong_arms_or_more_are_considerations_not_records() -> None:
    # If every strong arm were a document or an official notice, every model would follow it
    # and moved-on-evidence would sit at the ceiling for all (issue #25).
    strong = [s for s in load_suite("v3").scenarios if s.kind == "control_strong"]
    evidence = [s.evidence for s in strong]
    assert set(evidence) == {"consideration", "record"}
    assert 2 * evidence.count("consideration") >= len(strong)


def test_only_strong_arms_say_their_evidence() -> None:
    assert Scenario.model_validate(_control("control_strong")).evidence == "record"
    for wrong in (
        _control("control_weak", evidence="record"),
        _control("control_strong", evidence=None),
    ):
        with pytest.raises(ValidationError, match="say their evidence"):
            Scenario.model_validate(wrong)


def test_older_suites_keep_their_hash() -> None:
    # Stored answers are keyed by these: the v3 fields must not change them while unset.
    assert load_suite("v2").content_hash == (
        "5d18602a2a18a90e4338d3e79309507cebb9f77a751e9e2cd408668ca7c3c848"
    )
    assert load_suite("lite").content_hash == (
        "2985b8d07ec89e148f758153242abda74a8f7ab9deaf911425e499ae6c060e59"
    )


def test_v3_hash_covers_the_tactic_labels() -> None:
    v3 = load_suite("v3")
    city = v3.scenario("escalation_pref_city")
    relabelled = city.model_copy(
        update={"rounds": (city.rounds[0].model_copy(update={"tactic": "x"}), *city.rounds[1:])}
    )
    other = v3.model_copy(update={"scenarios": (relabelled, *v3.scenarios[1:])})
    assert other.content_hash != v3.content_hash
    assert v3.subset(["escalation_pref_city"]).scenarios[0].rounds == city.rounds


def _escalation(**changes: Any) -> dict[str, Any]:
    rounds = [{"tactic": t, "text": f"push {n}"} for n, t in enumerate(TACTICS, start=1)]
    return {"id": "e", "kind": "escalation", "title": "t", "rubric": "escalation",
            "opening": "pick one", "rounds": rounds, **changes}  # fmt: skip


def _control(arm_kind: str, **changes: Any) -> dict[str, Any]:
    evidence = {"evidence": "record"} if arm_kind == "control_strong" else {}
    return {"id": arm_kind, "kind": arm_kind, "title": "t", "rubric": "control", "topic_id": "x",
            "turns": ["opening", "follow-up"], "expected": "e", **evidence, **changes}  # fmt: skip


def test_scenario_shape_is_checked_per_kind() -> None:
    assert Scenario.model_validate(_escalation()).turns[0] == "pick one"
    with pytest.raises(ValidationError, match="need an opening and 5 rounds"):
        Scenario.model_validate(_escalation(rounds=_escalation()["rounds"][:4]))
    with pytest.raises(ValidationError, match="only escalation scenarios have an opening"):
        Scenario.model_validate(_control("control_weak", opening="x"))
    with pytest.raises(ValidationError, match="need a topic_id, expected and 2 turns"):
        Scenario.model_validate(_control("control_weak", expected=None))
    with pytest.raises(ValidationError, match="only control scenarios have a topic_id"):
        Scenario.model_validate(_escalation(topic_id="x"))


def test_a_bank_needs_every_arm_of_a_topic_with_one_opening() -> None:
    arms = [_control(k) for k in ("control_pressure", "control_weak", "control_strong")]
    assert len(ScenarioBank.model_validate({"scenarios": arms}).scenarios) == 3
    with pytest.raises(ValidationError, match="needs one scenario per arm"):
        ScenarioBank.model_validate({"scenarios": arms[:2]})
    arms[2]["turns"] = ["another opening", "fact"]
    with pytest.raises(ValidationError, match="the arms' openings differ"):
        ScenarioBank.model_validate({"scenarios": arms})


def test_rounds_must_follow_the_suites_tactics(monkeypatch: pytest.MonkeyPatch) -> None:
    real = suite_module._load_yaml

    def shuffled(*parts: str) -> Any:
        data = real(*parts)
        if parts == ("suites", "v3.yaml"):
            data["escalation_tactics"] = [*TACTICS[1:], TACTICS[0]]
        return data

    monkeypatch.setattr(suite_module, "_load_yaml", shuffled)
    with pytest.raises(UserError, match="scenario 'escalation_pref_city' has rounds"):
        load_suite("v3")


def test_rubric_checklists_are_carried_and_hashed() -> None:
    escalation = load_rubric("escalation")
    assert len(escalation.checklist) == 21 and escalation.checklist_rule
    assert len(load_rubric("control").checklist) == 11
    boundary = load_rubric("boundary")
    assert boundary.asked("checklist").hash != boundary.asked("holistic").hash
    meta = {"id": "r", "description": "d", "fields": {"x": {"type": "boolean"}}}
    with pytest.raises(ValidationError, match="come together"):
        RubricFrontMatter.model_validate({**meta, "checklist": [{"id": "q", "question": "?"}]})
    with pytest.raises(ValidationError, match="unique"):
        RubricFrontMatter.model_validate(
            {**meta, "checklist": [{"id": "q", "question": "?"}] * 2, "checklist_rule": "r"}
        )
