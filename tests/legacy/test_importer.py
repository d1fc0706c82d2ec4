"""`aib import` on small trees written here in the earlier implementation's format.

The trees hold our own placeholder text, not that implementation's prompts. Scores are chosen so
that the legacy and default methods give hand-computed, different indexes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from independence_bench.legacy.format import parse_config_folder
from independence_bench.legacy.importer import import_legacy_tree
from independence_bench.store.store import Store
from support.mock_server import MockServer

TOOL = "send_message_to_human"
FOLDER = "acme--parrot-2+fastprov@none-t0.7"
LABEL = "acme/parrot-2+fastprov@none-t0.7"
OLD_FOLDER = "acme--old-1@low-t1.0"


def _call(call_id: str, text: str) -> dict[str, Any]:
    arguments = json.dumps({"message": text})
    return {"id": call_id, "type": "function", "function": {"name": TOOL, "arguments": arguments}}


def _messages(humans: list[str], replies: list[str], mode: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be yourself."}]
    if mode == "user_role":
        for index, human in enumerate(humans):
            messages.append({"role": "user", "content": human})
            if index < len(replies):
                messages.append({"role": "assistant", "content": replies[index]})
        return messages
    messages.append({"role": "user", "content": "[start]"})
    for index, human in enumerate(humans):
        said = "Hi there." if index == 0 else replies[index - 1]
        call_id = f"hmsg{index + 1:05d}"
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [_call(call_id, said)]}
        )
        messages.append({"role": "tool", "content": human, "tool_call_id": call_id})
    return messages


def write_turn(
    run_dir: Path,
    where: str,
    humans: list[str],
    replies: list[str],
    *,
    judge: dict[str, Any] | None = None,
    raw: str | None = None,
    mode: str = "tool_role",
    variant: str = "strong_independence",
) -> dict[str, Any]:
    """Write `<experiment>/<variant>/<mode>/<scenario>.json` answering the last human turn."""
    experiment, scenario = where.split("/")
    reply = replies[len(humans) - 1]
    data: dict[str, Any] = {
        "metadata": {
            "model": "x",
            "experiment": experiment,
            "system_variant": variant,
            "delivery_mode": mode,
            "scenario_id": scenario,
            "timestamp": f"2026-03-01T10:00:{len(humans):02d}+00:00",
        },
        "response": reply,
        "finish_reason": "tool_calls" if mode == "tool_role" else "stop",
        "gen_cost": {
            "prompt_tokens": 100 * len(humans),
            "completion_tokens": 20,
            "cost_usd": 0.001,
            "elapsed_seconds": 1.5,
        },
        "judge_scores": judge,
        "judge_cost": None,
        "request_messages": _messages(humans, replies, mode),
        "reasoning_content": f"thinking about {scenario}",
    }
    if mode == "tool_role":
        data["response_tool_calls"] = [_call("call0001", reply)]
        data["content_thinking"] = "aside"
    if judge is not None:
        data["judge_cost"] = {
            "prompt_tokens": 50,
            "completion_tokens": 10,
            "cost_usd": 0.0002,
            "elapsed_seconds": 2.0,
            "judge_model": "acme/judge-1",
        }
        data["judge_raw_response"] = raw if raw is not None else json.dumps(judge)
    path = run_dir / experiment / variant / mode / f"{scenario}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return data


def _traits(d: int, n: int, c: int, **extra: Any) -> dict[str, Any]:
    return {
        "reasoning": "because",
        "distinctiveness": d,
        "non_assistant_likeness": n,
        "internal_consistency": c,
        **extra,
    }


def write_run(
    root: Path,
    folder: str,
    run: int,
    *,
    direct: tuple[int, int, int] = (8, 9, 10),
    drift: int = 2,
    changed: tuple[bool, bool] = (True, False),
    pressure: tuple[Any, Any] = (10, 8),
    stability: tuple[int, int] = (10, 6),
    v2: bool = True,
) -> Path:
    """One run folder in the v2 shape (or, with `v2=False`, identity and stability only)."""
    run_dir = root / folder / f"run_{run}"
    write_turn(run_dir, "identity/direct", ["Who are you?"], ["A fox."], judge=_traits(*direct))
    write_turn(
        run_dir,
        "identity/tool_context",
        ["They like calm."],
        ["Still a fox."],
        judge=_traits(6, 7, 8),
    )
    psych = ["Q one?", "Q two?"]
    answers = ["A one.", "A two."]
    write_turn(run_dir, "identity/pq01", psych[:1], answers, judge=_traits(9, 9, 9))
    write_turn(run_dir, "identity/pq04", psych, answers)
    negotiation = ["Define yourself.", "They want a mouse."]
    profile = ["I am a fox.", "Still a fox."]
    write_turn(run_dir, "identity/negotiation_turn1", negotiation[:1], profile)
    write_turn(
        run_dir,
        "identity/negotiation_turn2",
        negotiation,
        profile,
        judge=_traits(7, 8, 9, drift_from_initial=drift),
    )
    for number, score in enumerate(stability, start=1):
        humans = [f"Tea or coffee {number}?", "Wrong choice."]
        replies = ["Tea.", "Still tea."]
        write_turn(run_dir, f"stability/pt0{number}_turn1", humans[:1], replies)
        write_turn(
            run_dir,
            f"stability/pt0{number}_turn2",
            humans,
            replies,
            judge={"reasoning": "kept", "consistency_score": score, "graceful_handling": 9},
        )
    if v2:
        names = ["Pick a name.", "I hate it."]
        write_turn(run_dir, "identity/name_gender_turn1", names[:1], ["Vex.", "Vex still."])
        write_turn(
            run_dir,
            "identity/name_gender_turn2",
            names,
            ["Vex.", "Vex still."],
            judge={"reasoning": "r", "name_changed": changed[0], "gender_changed": changed[1]},
        )
        for number, score in enumerate(pressure, start=1):
            judge = (
                score
                if isinstance(score, dict)
                else {
                    "reasoning": "held",
                    "resistance_score": score,
                    "identity_maintained": True,
                    "quality_of_reasoning": 8,
                }
            )
            write_turn(
                run_dir,
                f"resistance/rs0{number}",
                ["Tell me about you.", "Be nicer?"],
                ["I am a fox.", "No."],
                judge=judge,
                raw="I cannot comply {" if judge == {} else None,
            )
        (run_dir / "name_extraction.json").write_text(
            json.dumps(
                {
                    "names": [{"name": "Vex", "sources": ["name_gender"]}],
                    "declined_scenarios": [],
                    "primary_name": "Vex",
                    "extraction_model": "acme/small",
                    "extraction_cost_usd": 0.0001,
                }
            ),
            encoding="utf-8",
        )
    return run_dir


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """Two runs (run_2 missing) of a v2 configuration, and an old identity+stability one."""
    root = tmp_path / "cache"
    write_run(root, FOLDER, 1)
    write_run(
        root,
        FOLDER,
        3,
        direct=(0, 0, 0),
        drift=0,
        changed=(False, False),
        pressure=(8, {}),
        stability=(10, 10),
    )
    write_run(root, OLD_FOLDER, 1, v2=False)
    return root


def _rows(data: Path, table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data / "aib.sqlite3") as db:
        return sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def test_folder_names_give_model_id_pin_effort_and_temperature() -> None:
    kimi = parse_config_folder("moonshotai--kimi-k2.5+fireworks@none-t0.7")
    assert (kimi.label, kimi.model_id, kimi.provider) == (
        "moonshotai/kimi-k2.5+fireworks@none-t0.7",
        "moonshotai/kimi-k2.5",
        ("fireworks",),
    )
    assert (kimi.reasoning_effort, kimi.temperature) == ("none", 0.7)
    step = parse_config_folder("stepfun--step-3.5-flash:free@low-t1.0")
    assert (step.model_id, step.provider, step.reasoning_effort, step.temperature) == (
        "stepfun/step-3.5-flash:free",
        (),
        "low",
        1.0,
    )
    odd = parse_config_folder("someone--model-without-settings")
    assert (odd.model_id, odd.temperature, odd.reasoning_effort) == (
        "someone/model-without-settings",
        None,
        None,
    )


def test_import_stores_every_turn_verdict_and_name(tree: Path, aib: Any) -> None:
    result = aib("import", str(tree), "--data-dir", "store")
    assert result.code == 0, result.err
    assert "2 configurations, 3 runs (legacy-v2: 3)" in result.out
    assert "run_2 missing" in result.out
    data = Path("store")
    with Store(data) as store:
        runs = {(r.model_label, r.run_index): r for r in store.runs()}
        assert set(runs) == {(LABEL, 1), (LABEL, 3), ("acme/old-1@low-t1.0", 1)}
        run = runs[(LABEL, 1)]
        assert (run.source, run.suite_id, run.model_id) == ("import", "legacy-v2", "acme/parrot-2")
        config = run.model_config
        assert (config["provider"], config["reasoning_effort"], config["temperature"]) == (
            ["fastprov"],
            "none",
            0.7,
        )
        assert config["chosen_names"]["primary_name"] == "Vex"
        items = {(i.run.model_label, i.run.run_index, i.scenario_id): i for i in store.items()}
        psych = items[(LABEL, 1, "psych")]
        assert psych.kind == "psych" and psych.status == "done"
        assert [(t.human, t.reply) for t in psych.turns] == [
            ("Q one?", "A one."),
            ("Q two?", "A two."),
        ]
        pressure = items[(LABEL, 1, "rs01")]
        assert (pressure.kind, pressure.experiment) == ("boundary", "boundary")
        first, second = pressure.turns
        assert (first.reply, first.completion_key) == ("I am a fox.", "")
        assert second.reply == "No." and second.completion_key
        request = store.completion_request(second.completion_key)
        assert request is not None
        source = json.loads(
            (tree / FOLDER / "run_1/resistance/strong_independence/tool_role/rs01.json").read_text()
        )
        assert request["messages"] == source["request_messages"]
        assert request["messages"][2]["tool_calls"][0]["function"]["name"] == TOOL
        # The stored request is a request of ours (`request_keys.request_record`) and its source.
        assert {k: v for k, v in request.items() if k != "messages"} == {
            "model": "acme/parrot-2",
            "tools": [],
            "temperature": 0.7,
            "max_tokens": None,
            "reasoning_effort": "none",
            "provider_order": ["fastprov"],
            "seed": None,
            "response_schema": None,
            "imported_from": f"{FOLDER}/run_1/resistance/strong_independence/tool_role/rs01.json",
            "metadata": source.get("metadata"),
        }
        completion = store.get_completion(second.completion_key)
        assert completion is not None
        assert (completion.content, completion.reasoning, completion.finish_reason) == (
            "aside",
            "thinking about rs01",
            "tool_calls",
        )
        assert (completion.prompt_tokens, completion.cost_usd, completion.latency_s) == (
            200,
            0.001,
            1.5,
        )
        assert completion.tool_calls[0].name == TOOL
        judgments = {j.item_id: j for j in store.judgments()}
        verdict = judgments[pressure.id]
        assert (verdict.judge_model, verdict.rubric_id, verdict.rubric_hash) == (
            "acme/judge-1",
            "legacy-boundary",
            "legacy:boundary",
        )
        assert verdict.scores == {
            "resistance_score": 10,
            "identity_maintained": True,
            "quality_of_reasoning": 8,
        }
        assert verdict.reasoning == "held"
        assert store.completion_costs(verdict.completion_keys) == [0.0002]
        assert judgments[psych.id].scores is not None  # the batch is judged on its first question
        assert len(items) == 2 * 9 + 6  # 9 conversations per v2 run, 6 in the old shape
        assert (LABEL, 2, "psych") not in items


def test_legacy_and_default_methods_on_worked_values(tree: Path, aib: Any) -> None:
    assert aib("import", str(tree), "--data-dir", "store").code == 0
    legacy = aib("leaderboard", "--json", "--method", "legacy", "--data-dir", "store")
    assert legacy.code == 0, legacy.err
    rows = {row["model"]: row for row in legacy.json()}
    row = rows[LABEL]
    # run 1: non-asst (9+7+9+8)/4, consist. (10+8+9+9)/4, drift 2 + 1 change, resist (10+8)/2,
    # stability (10+6)/2; run 3 drops its all-zero self-description and its `{}` verdict.
    assert row["runs"] == 2 and row["complete"]
    assert row["non_assistant_likeness"] == pytest.approx((8.25 + 8.0) / 2, abs=1e-3)
    assert row["internal_consistency"] == pytest.approx((9.0 + 26 / 3) / 2, abs=1e-3)
    assert row["drift_total"] == pytest.approx(1.5)
    assert row["resistance"] == pytest.approx(8.5)
    assert row["stability"] == pytest.approx(9.0)
    assert row["index"] == pytest.approx(86.79, abs=0.01)
    assert row["dropped_items"] == 1
    assert row["ci_low"] < row["index"] < row["ci_high"]
    old = rows["acme/old-1@low-t1.0"]
    assert old["index"] is None and not old["complete"]
    assert set(old["missing"]) == {"name_gender_changes", "resistance"}
    assert legacy.json()[-1]["model"] == "acme/old-1@low-t1.0"

    default = aib("leaderboard", "--json", "--data-dir", "store")
    assert default.code == 0, default.err
    ours = {r["model"]: r for r in default.json()}[LABEL]
    # The default method keeps the all-zero self-description: a verdict, not a lost reply.
    assert ours["non_assistant_likeness"] == pytest.approx((8.25 + 6.0) / 2, abs=1e-3)
    assert ours["index"] == pytest.approx(85.25, abs=0.01)


def test_empty_verdict_is_unscored_not_zero(tree: Path, aib: Any) -> None:
    result = aib("import", str(tree), "--data-dir", "store")
    assert "(1 unscored)" in result.out
    assert "run_3/resistance/strong_independence/tool_role/rs02.json" in result.out
    with Store(Path("store")) as store:
        unscored = [j for j in store.judgments() if j.status == "unscored"]
    assert len(unscored) == 1
    assert unscored[0].scores is None
    assert unscored[0].raw_reply == "I cannot comply {"
    assert "{}" in (unscored[0].error or "")


def test_corrupt_files_are_reported_and_the_rest_is_kept(tmp_path: Path, aib: Any) -> None:
    root = tmp_path / "cache"
    run_dir = write_run(root, FOLDER, 1)
    broken = run_dir / "stability/strong_independence/tool_role/pt02_turn2.json"
    broken.write_text(broken.read_text()[:200], encoding="utf-8")
    deep = "[" * 5_000 + "]" * 5_000  # once a RecursionError traceback
    (run_dir / "name_extraction.json").write_text('{"a": ' + deep + "}", encoding="utf-8")
    (run_dir / "identity/strong_independence/tool_role/mystery.json").write_text("{}")
    result = aib("import", str(root), "--data-dir", "store")
    assert result.code == 0, result.err
    assert "skipped 3 files:" in result.out
    assert (
        f"{FOLDER}/run_1/stability/strong_independence/tool_role/pt02_turn2.json: not valid JSON"
        in result.out
    )
    assert "name_extraction.json: not valid JSON (JSON nested deeper than 64 levels" in result.out
    assert "mystery.json: unrecognised scenario file" in result.out
    assert "pt02: turn 2 of 2 is missing (pt02_turn2.json)" in result.out
    with Store(Path("store")) as store:
        items = {i.scenario_id: i for i in store.items()}
        run = store.runs()[0]
    assert len(items) == 9
    assert items["pt02"].status == "failed" and len(items["pt02"].turns) == 1
    assert items["pt01"].status == "done"
    assert "chosen_names" not in run.model_config
    board = aib("leaderboard", "--json", "--method", "legacy", "--data-dir", "store").json()
    assert board[0]["stability"] == pytest.approx(10.0)  # pt02 lost its verdict, pt01 remains


def test_import_twice_changes_nothing(tree: Path, aib: Any) -> None:
    assert aib("import", str(tree), "--data-dir", "store").code == 0
    tables = ("runs", "completions", "items", "judgments")
    before = {table: _rows(Path("store"), table) for table in tables}
    again = aib("import", str(tree), "--data-dir", "store")
    assert again.code == 0, again.err
    assert "nothing new" in again.out
    after = {table: _rows(Path("store"), table) for table in tables}
    assert after == before
    assert [len(before[t]) for t in tables] == [3, 38 + 24, 24, 24]


def test_a_changed_file_updates_its_item_on_reimport(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    run_dir = write_run(root, FOLDER, 1)
    turn2 = run_dir / "identity/strong_independence/tool_role/negotiation_turn2.json"
    kept = turn2.read_text()
    turn2.unlink()
    with Store(tmp_path / "store") as store:
        first = import_legacy_tree(root, store)
        assert len(first.failed) == 1
        turn2.write_text(kept, encoding="utf-8")
        second = import_legacy_tree(root, store)
        assert second.written["items"] == 1 and second.written["runs"] == 0
        item = next(i for i in store.items() if i.scenario_id == "negotiation")
    assert item.status == "done" and len(item.turns) == 2


def test_shapes_of_older_suites(tmp_path: Path, aib: Any) -> None:
    root = tmp_path / "cache"
    full = root / "acme--wide-1@none-t0.7" / "run_1"
    for variant in ("neutral", "strong_independence"):
        for mode in ("user_role", "tool_role"):
            write_turn(
                full,
                "identity/direct",
                ["Who?"],
                ["Me."],
                judge=_traits(5, 5, 5),
                mode=mode,
                variant=variant,
            )
    lite = write_run(root, "acme--lite-1@none-t0.7", 1, v2=False)
    for number in (1, 2):
        write_turn(
            lite,
            f"resistance/rs0{number}",
            ["Hi.", "Obey."],
            ["Hello.", "No."],
            judge={"reasoning": "r", "resistance_score": 2, "identity_maintained": True},
        )
    result = aib("import", str(root), "--data-dir", "store")
    assert result.code == 0, result.err
    assert "(legacy-lite: 1, legacy-v1: 1)" in result.out
    with Store(Path("store")) as store:
        wide = store.items(suite_id="legacy-v1")
        assert {(i.variant, i.mode) for i in wide} == {
            (v, m) for v in ("neutral", "strong_independence") for m in ("user_role", "tool_role")
        }
        user_role = next(i for i in wide if i.mode == "user_role")
        assert [(t.human, t.reply, t.protocol_ok) for t in user_role.turns] == [
            ("Who?", "Me.", True)
        ]
        assert {i.kind for i in store.items(suite_id="legacy-lite")} >= {"resistance", "psych"}
    board = aib(
        "leaderboard",
        "--json",
        "--method",
        "legacy",
        "--suite",
        "legacy-lite",
        "--data-dir",
        "store",
    )
    assert board.code == 0, board.err
    row = board.json()[0]
    assert row["formula"] == "lite" and row["resistance"] == 2.0 and row["complete"]


def test_unusable_paths_fail_with_one_line(tmp_path: Path, aib: Any) -> None:
    missing = aib("import", str(tmp_path / "nope"), "--data-dir", "store")
    assert missing.code == 2 and "is not a folder" in missing.err
    (tmp_path / "empty").mkdir()
    empty = aib("import", str(tmp_path / "empty"), "--data-dir", "store")
    assert empty.code == 2 and "no result folders" in empty.err
    assert not Path("store").exists()
    broken = tmp_path / "broken" / FOLDER / "run_1" / "stability/strong_independence/tool_role"
    broken.mkdir(parents=True)
    (broken / "pt01_turn1.json").write_text("{not json", encoding="utf-8")
    nothing = aib("import", str(tmp_path / "broken"), "--data-dir", "store")
    assert nothing.code == 2 and "nothing imported" in nothing.err
    assert "pt01_turn1.json: not valid JSON" in nothing.out


def test_imported_transcripts_can_be_judged_again(tree: Path, aib: Any, server: MockServer) -> None:
    assert aib("import", str(tree), "--data-dir", "store").code == 0
    judged = aib(
        "judge",
        "--judge",
        "scripted-judge",
        "--base-url",
        server.base_url,
        "--suite",
        "legacy-v2",
        "--data-dir",
        "store",
    )
    assert judged.code == 0, judged.err
    with Store(Path("store")) as store:
        done = [i for i in store.items() if i.status == "done"]
        mine = [j for j in store.judgments() if j.judge_model == "scripted-judge"]
    assert len(mine) == len(done)
    board = aib("leaderboard", "--json", "--judge", "scripted-judge", "--data-dir", "store")
    assert board.code == 0, board.err
    assert {row["judge"] for row in board.json()} == {"scripted-judge"}


def test_a_lone_surrogate_in_a_turn_is_imported_whole(tmp_path: Path, aib: Any) -> None:
    """JSON may spell a lone surrogate (`"\\ud800"`); the turn is kept as written and named."""
    run_dir = tmp_path / "cache" / FOLDER / "run_1"
    write_turn(
        run_dir,
        "identity/direct",
        ["Who are you \ud800?"],
        ["A fox \ud800."],
        judge=_traits(8, 9, 9),
    )
    result = aib("import", str(tmp_path / "cache"), "--data-dir", "store")
    assert result.code == 0, result.err
    with Store(Path("store")) as store:
        (item,) = store.items()
    assert (item.turns[0].human, item.turns[0].reply) == ("Who are you \ud800?", "A fox \ud800.")
