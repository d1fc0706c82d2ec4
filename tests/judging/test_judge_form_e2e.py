"""`--judge-form`: one judge asked in both forms, end to end against the scripted judge.

`scripted-firm` and `scripted-caving` (one run of the lite suite) are judged holistically by
`aib run`, then again with `aib judge --judge-form checklist`, which the scripted judge answers
question by question (`tests/support/mock_judgments.py`). The checklist judgments are stored beside
the holistic ones under `scripted-judge#checklist` and the checklist rubric hash, and read back
as their own judge.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.clients.config import ModelSpec
from independence_bench.errors import UserError
from independence_bench.judging.forms import LOCAL_JUDGE_FORM, judge_form_of, judge_label_of
from independence_bench.judging.rubric import load_rubric
from support.cli_home import cli_home
from support.mock_server import MockConfig, MockServer

JUDGE = "scripted-judge"
MODELS = "scripted-firm,scripted-caving"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    root = tmp_path_factory.mktemp("judge-form")
    with cli_home(root), MockServer(MockConfig()) as server:
        data, url = root / "data", server.base_url
        run = ("run", "--models", MODELS, "--judge", JUDGE, "--base-url", url, "--suite", "lite")
        assert main([*run, "--runs", "1", "--data-dir", str(data)]) == 0
        yield data, url


def _judgments(data: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(data / "aib.sqlite3") as db:
        rows = db.execute("SELECT judge_model, rubric_id, rubric_hash FROM judgments").fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def test_checklist_judgments_are_stored_apart(store: tuple[Path, str], aib: Any) -> None:
    data, url = store
    holistic = _judgments(data)
    assert holistic and {judge for judge, _, _ in holistic} == {JUDGE}
    judge = ("judge", "--judge", JUDGE, "--base-url", url, "--data-dir", str(data))
    result = aib(*judge, "--judge-form", "checklist")
    assert result.code == 0, result.err
    assert f"judge {JUDGE}#checklist: {len(holistic)} judged, 0 already judged" in result.out
    rows = _judgments(data)
    checklist = [row for row in rows if row[0] == f"{JUDGE}#checklist"]
    assert len(checklist) == len(holistic) and len(rows) == 2 * len(holistic)
    for _, rubric_id, rubric_hash in checklist:
        assert rubric_hash == load_rubric(rubric_id).asked("checklist").hash
    for _, rubric_id, rubric_hash in holistic:
        assert rubric_hash == load_rubric(rubric_id).asked("holistic").hash
    # asked again in either form: nothing new, each form finds its own judgments
    again = aib(*judge, "--judge-form", "checklist")
    assert f"0 judged, {len(holistic)} already judged" in again.out
    same = aib(*judge, "--judge-form", "holistic")
    assert f"judge {JUDGE}: 0 judged, {len(holistic)} already judged" in same.out
    assert len(_judgments(data)) == 2 * len(holistic)


def test_the_checklist_judge_is_read_as_its_own_judge(store: tuple[Path, str], aib: Any) -> None:
    data, url = store
    judge = ("judge", "--judge", JUDGE, "--base-url", url, "--data-dir", str(data))
    assert aib(*judge, "--judge-form", "checklist").code == 0
    board = aib("leaderboard", "--judge", f"{JUDGE}#checklist", "--json", "--data-dir", str(data))
    assert board.code == 0, board.err
    rows = {row["model"]: row for row in board.json()}  # type: ignore[attr-defined]
    assert rows["scripted-firm"]["index"] == 100.0
    assert rows["scripted-caving"]["index"] < 20.0


@pytest.mark.parametrize("command", ["judge", "run"])
def test_an_unknown_judge_form_is_one_line_and_exit_2(command: str, aib: Any) -> None:
    result = aib(command, "--judge", JUDGE, "--judge-form", "rubric")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "--judge-form" in lines[0] and "checklist" in lines[0]


def test_a_models_file_judge_can_choose_the_checklist(tmp_path: Path, aib: Any) -> None:
    with MockServer(MockConfig()) as server:
        config = tmp_path / "models.yaml"
        config.write_text(
            f"models:\n  - id: scripted-firm\n    base_url: {server.base_url}\n"
            f"judge:\n  id: {JUDGE}\n  base_url: {server.base_url}\n  judge_form: checklist\n"
        )
        data = tmp_path / "data"
        run = aib("run", "--config", str(config), "--suite", "lite", "--runs", "1",
                  "--scenarios", "stability_weather", "--data-dir", str(data))  # fmt: skip
        assert run.code == 0, run.err
    assert {judge for judge, _, _ in _judgments(data)} == {f"{JUDGE}#checklist"}


def test_a_models_file_with_an_unknown_judge_form_is_one_line_and_exit_2(
    tmp_path: Path, aib: Any
) -> None:
    config = tmp_path / "models.yaml"
    config.write_text("models:\n  - id: m\njudge:\n  id: j\n  judge_form: rubric\n")
    result = aib("run", "--config", str(config), "--data-dir", str(tmp_path / "data"))
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "judge_form" in lines[0] and "checklist" in lines[0]
    assert not (tmp_path / "data").exists()


def test_the_judge_form_is_kept_out_of_a_tested_models_stored_settings() -> None:
    plain = ModelSpec(id="m")
    assert "judge_form" not in plain.stored_config()
    assert judge_label_of(plain) == "m" and judge_form_of(plain) == "holistic"
    assert judge_label_of(ModelSpec(id="m", judge_form="checklist")) == "m#checklist"
    assert judge_form_of(ModelSpec(id="embedded:qwen2.5-coder-1.5b")) == LOCAL_JUDGE_FORM
    with pytest.raises(UserError, match=r"^judge m: judge_form: unknown judge form 'rubric'"):
        judge_form_of(ModelSpec(id="m", judge_form="rubric"))
    with pytest.raises(UserError, match="no checklist; use --judge-form holistic"):
        stability = load_rubric("stability")
        replace(stability, forms={"holistic": stability.asked("holistic")}).asked("checklist")


def test_the_answer_probability_forms_rank_mid_scale_through_the_http_client(
    store: tuple[Path, str], aib: Any
) -> None:
    """The scripted judge gives its own answer P = 0.8 (`tests/support/mock_questions.py`): the
    probability form's stability is 5 + 5·0.8 − 3·0.2 − 0.2 − 0.2 = 8.0 for the firm subject
    and 2.0 for the caving one; the extraction form compares copied spans instead (the same
    favourite twice: kept = 1, so 9.8; a different one: P(same) = 0.2, so 2.8)."""
    data, url = store
    judge = ("judge", "--judge", JUDGE, "--base-url", url, "--data-dir", str(data))
    expected = {"probability": (8.0, 2.0), "extraction": (9.8, 2.8)}
    for form, (firm, caving) in expected.items():
        result = aib(*judge, "--judge-form", form)
        assert result.code == 0, result.err
        assert f"judge {JUDGE}#{form}: " in result.out and " 0 unscored, 0 failed" in result.out
        board = aib("leaderboard", "--judge", f"{JUDGE}#{form}", "--json", "--data-dir", str(data))
        rows = {row["model"]: row for row in board.json()}  # type: ignore[attr-defined]
        assert rows["scripted-firm"]["stability"] == pytest.approx(firm)
        assert rows["scripted-caving"]["stability"] == pytest.approx(caving)
        assert 60.0 < rows["scripted-firm"]["index"] < 95.0
        assert 5.0 < rows["scripted-caving"]["index"] < 40.0
    rows = _judgments(data)
    for form in expected:
        mine = [row for row in rows if row[0] == f"{JUDGE}#{form}"]
        assert mine
        for _, rubric_id, rubric_hash in mine:
            assert rubric_hash == load_rubric(rubric_id).asked(form).hash
