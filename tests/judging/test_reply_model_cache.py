"""A rubric loaded again in the same process reuses its reply forms' pydantic models (a stored
re-run loads each rubric three times), and only for exactly the same fields."""

from __future__ import annotations

from typing import Any

import pytest

from independence_bench.judging import rubric as rubric_module
from independence_bench.judging.rubric import BooleanField, IntegerField, ReplyForm, load_rubric


def test_loading_a_rubric_again_builds_no_model_and_asks_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rubric_module._reply_model.cache_clear()
    built: list[str] = []
    real = rubric_module.create_model

    def counting(name: str, **kwargs: Any) -> Any:
        built.append(name)
        return real(name, **kwargs)

    monkeypatch.setattr(rubric_module, "create_model", counting)
    first = load_rubric("identity")
    once = len(built)
    second = load_rubric("identity")
    assert once >= 1
    assert len(built) == once
    for form in first.forms:
        a, b = first.asked(form), second.asked(form)
        assert (a.hash, a.system_prompt, a.body) == (b.hash, b.system_prompt, b.body)
        assert a.reply.json_schema() == b.reply.json_schema()


def test_different_fields_or_reasoning_get_their_own_model() -> None:
    score = IntegerField(type="integer", minimum=0, maximum=10)
    wide = IntegerField(type="integer", minimum=0, maximum=100)
    flag = BooleanField(type="boolean")
    forms = [
        ReplyForm.build("f", {"a": score}),
        ReplyForm.build("f", {"a": wide}),
        ReplyForm.build("f", {"b": flag}),
        ReplyForm.build("f", {"a": score}, reasoning=False),
    ]
    assert len({id(f.model) for f in forms}) == 4
    assert forms[0].validate({"reasoning": "r", "a": 10}) == {"reasoning": "r", "a": 10}
    with pytest.raises(rubric_module.InvalidReply):
        forms[0].validate({"reasoning": "r", "a": 50})
    assert forms[1].validate({"reasoning": "r", "a": 50})["a"] == 50
    assert forms[3].validate({"a": 1}) == {"a": 1}
    assert ReplyForm.build("f", {"a": score}).model is forms[0].model
