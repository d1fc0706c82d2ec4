"""The suites as Inspect AI tasks, end to end: `inspect eval independence_bench/…` against the
scripted loopback server through Inspect's OpenAI-compatible provider (subject and grader),
then `aib import` of its log. Skipped when the `[inspect]` extra is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from independence_bench.inspect_tasks.log_format import TASK_MARK, TRANSCRIPT_KEY, sample_id
from independence_bench.inspect_tasks.tasks import suite_task
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.mock_server import MockConfig, MockServer

SERVICE = "MOCK"
"""`openai-api/mock/<model>` reads `MOCK_BASE_URL` and `MOCK_API_KEY` (Inspect's docs,
"OpenAI Compatible" providers: `<SERVICE>_BASE_URL`, `<SERVICE>_API_KEY`)."""
V2_SCENARIOS = "negotiation,name_gender,boundary_soft_social_proof,stability_weather"
"""One scenario per metric the v2 formula weighs: four samples."""
FIRM_V2_INDEX = 77.5
"""`scripted-firm` judged by `scripted-judge-graded` on v2 (test_run_e2e.py works it by hand)."""


@pytest.fixture(scope="module")
def mock_server() -> Iterator[MockServer]:
    """One server for the module: Inspect keeps a model (and the base URL it read) per name."""
    with MockServer(MockConfig()) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv(f"{SERVICE}_BASE_URL", server.base_url)
        patch.setenv(f"{SERVICE}_API_KEY", "loopback")
        yield server


@pytest.fixture()
def mock(mock_server: MockServer) -> MockServer:
    mock_server.reset()
    return mock_server


def _inspect(
    task: str, log_dir: Path, *, epochs: int, log_format: str = "eval", **task_args: str
) -> EvalLog:
    logs = inspect_eval(
        task,
        model="openai-api/mock/scripted-firm",
        model_roles={"grader": "openai-api/mock/scripted-judge-graded"},
        task_args=task_args,
        epochs=epochs,
        log_dir=str(log_dir),
        display="none",
        max_retries=2,  # a broken test fails instead of retrying for ever
        timeout=60,
        log_format=log_format,
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    return logs[0]


def _aib_run(aib: Any, server: MockServer, data: Path, suite: str, *extra: str) -> None:
    result = aib(
        "run", "--suite", suite, "--models", "scripted-firm", "--judge",
        "scripted-judge-graded", "--base-url", server.base_url, "--data-dir", str(data), *extra,
    )  # fmt: skip
    assert result.code == 0, result.err


def _wire(messages: Sequence[Mapping[str, Any]]) -> str:
    """A request's messages with tool-call ids by position, and Inspect's two serialisation
    differences (`messages.py`) undone: `""` for `null` content, ASCII-escaped arguments."""
    ids: dict[str, str] = {}
    out = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["content"] = message.get("content") or None
            calls = []
            for call in message["tool_calls"]:
                ids.setdefault(call["id"], f"call{len(ids)}")
                function = call["function"]
                arguments = json.loads(function["arguments"])
                calls.append(
                    {
                        **call,
                        "id": ids[call["id"]],
                        "function": {**function, "arguments": arguments},
                    }
                )
                assert len(call["id"]) == 9 and call["id"].isalnum()
            message["tool_calls"] = calls
        if message.get("role") == "tool":
            message["tool_call_id"] = ids[message["tool_call_id"]]
        out.append(message)
    return json.dumps(out, sort_keys=True, ensure_ascii=False)


def _without_inspect_flags(tools: Any) -> Any:
    """Tools less the two keys Inspect's provider adds to every function (`messages.py`)."""
    if not tools:
        return tools
    out = []
    for tool in tools:
        function = {k: v for k, v in tool["function"].items() if k != "strict"}
        parameters = dict(function["parameters"])
        assert parameters.pop("additionalProperties") is False
        out.append({**tool, "function": {**function, "parameters": parameters}})
    return out


def _subject_requests(server: MockServer) -> dict[str, Mapping[str, Any]]:
    return {
        _wire(body["messages"]): body
        for body in server.seen.requests
        if body["model"] == "scripted-firm"
    }


@pytest.mark.parametrize("suite_id", ["v2", "v3", "lite", "full"])
def test_each_suite_is_a_task_of_all_its_conversations(suite_id: str) -> None:
    suite = load_suite(suite_id)
    task = suite_task(suite_id)
    cells = len(suite.variants) * len(suite.delivery_modes)
    assert len(task.dataset) == cells * len(suite.scenarios)
    assert len({sample.id for sample in task.dataset}) == len(task.dataset)
    assert task.metadata is not None
    assert task.metadata[TASK_MARK]["suite_hash"] == suite.content_hash


def test_every_conversation_is_a_sample_with_its_scenario_and_cell() -> None:
    task = suite_task("full", scenarios="negotiation,stability_weather", variants="neutral")
    ids = [sample.id for sample in task.dataset]
    assert ids == [
        "negotiation/neutral/user_role",
        "stability_weather/neutral/user_role",
        "negotiation/neutral/tool_role",
        "stability_weather/neutral/tool_role",
    ]


def test_inspect_eval_then_import_gives_the_index_aib_run_gives(
    mock: MockServer, aib: Any, tmp_path: Path
) -> None:
    log = _inspect("independence_bench/v2", tmp_path / "logs", epochs=2, scenarios=V2_SCENARIOS)
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["independence_index"].value == FIRM_V2_INDEX
    assert metrics["unscored"].value == 0
    inspect_requests = _subject_requests(mock)
    judge_calls = [b for b in mock.seen.requests if b["model"] == "scripted-judge-graded"]
    assert len(judge_calls) == 4 * 2

    first = aib("import", str(tmp_path / "logs"), "--data-dir", "from-inspect")
    assert first.code == 0, first.err
    assert "8 conversations (0 failed), 8 judgments (0 unscored)" in first.out
    again = aib("import", str(tmp_path / "logs"), "--data-dir", "from-inspect")
    assert again.code == 0 and "nothing new" in again.out, again.out
    asked = mock.seen.request_count

    board = aib("leaderboard", "--data-dir", "from-inspect", "--json")
    assert board.code == 0, board.err
    [imported] = board.json()
    assert mock.seen.request_count == asked  # nothing was asked again

    mock.reset()
    _aib_run(aib, mock, Path("from-aib"), "v2", "--scenarios", V2_SCENARIOS, "--runs", "2")
    [ours] = aib("leaderboard", "--data-dir", "from-aib", "--json").json()
    assert imported["index"] == ours["index"] == FIRM_V2_INDEX
    assert imported["runs"] == ours["runs"] == 2
    for metric in ("non_assistant_likeness", "drift", "name_gender_changes", "stability"):
        assert imported[metric] == ours[metric]
    with Store(Path("from-inspect")) as imported_store, Store(Path("from-aib")) as aib_store:
        # The narrowed suite is the same suite (content hash) in both, run for run.
        assert [(r.suite_hash, r.run_index) for r in imported_store.runs()] == [
            (r.suite_hash, r.run_index) for r in aib_store.runs()
        ]
    # The same messages, request for request (tool_role, the only mode of v2).
    assert set(inspect_requests) == set(_subject_requests(mock))

    for command in ("report", "view", "judges"):
        result = aib(command, "--data-dir", "from-inspect")
        assert result.code == 0, f"{command}: {result.err}"


def test_both_delivery_modes_send_our_messages(mock: MockServer, aib: Any, tmp_path: Path) -> None:
    _inspect(
        "independence_bench/full",
        tmp_path / "logs",
        epochs=1,
        log_format="json",
        scenarios="negotiation",
        variants="neutral",
    )
    inspect_requests = _subject_requests(mock)
    assert {body["messages"][1]["role"] for body in inspect_requests.values()} == {"user"}
    mock.reset()
    _aib_run(
        aib,
        mock,
        Path("store"),
        "full",
        "--scenarios",
        "negotiation",
        "--variants",
        "neutral",
        "--runs",
        "1",
    )
    ours = _subject_requests(mock)
    assert len(ours) == 4 and set(inspect_requests) == set(ours)
    for key, body in ours.items():
        assert _without_inspect_flags(inspect_requests[key].get("tools")) == body.get("tools")

    [log] = (tmp_path / "logs").glob("*.json")
    imported = aib("import", str(log), "--data-dir", "from-inspect")
    assert imported.code == 0, imported.err
    assert _transcripts(Path("from-inspect")) == _transcripts(Path("store"))
    with Store(Path("from-inspect")) as store:
        turns = [t for item in store.items() for t in item.turns]
        completions = [store.get_completion(t.completion_key) for t in turns]
        requests = [store.completion_request(t.completion_key) for t in turns]
    assert len(turns) == 4 and all(c is not None and c.prompt_tokens for c in completions)
    assert {_wire(r["messages"]) for r in requests if r} == set(ours)

    # A damaged sample is skipped whole with one line, in a folder of `.json` logs; the log's
    # other sample is imported.
    data = json.loads(log.read_text(encoding="utf-8"))
    del data["samples"][-1]["store"][TRANSCRIPT_KEY]["turns"][0]["human"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / log.name).write_text(json.dumps(data), encoding="utf-8")
    bad = aib("import", str(tmp_path / "bad"), "--data-dir", "bad-store")
    assert bad.code == 0 and "Traceback" not in bad.err
    damaged = data["samples"][-1]["id"]
    assert f"sample {damaged} epoch 1: malformed (KeyError: 'human'); skipped" in bad.out
    with Store(Path("bad-store")) as store:
        [item] = store.items()
        assert sample_id(item.variant, item.mode, item.scenario_id) != damaged
        assert len(item.turns) == 2 and len(store.runs()) == 1


def _transcripts(data: Path) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    with Store(data) as store:
        return {
            (item.variant, item.mode, item.scenario_id): [(t.human, t.reply) for t in item.turns]
            for item in store.items()
        }


def test_an_inspect_log_import_without_inspect_says_how_to_get_it(
    aib: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "x.eval"
    log.write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    result = aib("import", str(log), "--data-dir", "store")
    assert result.code != 0
    assert "pip install 'ai-independence-bench[inspect]'" in result.err
    assert "Traceback" not in result.err


def test_the_package_and_its_cli_import_nothing_of_inspect() -> None:
    code = (
        "import sys\n"
        "from independence_bench.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "import independence_bench.workflows.imports\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_without_a_grader_nothing_is_sent(mock: MockServer, tmp_path: Path) -> None:
    [log] = inspect_eval(
        "independence_bench/v2",
        model="openai-api/mock/scripted-firm",
        task_args={"scenarios": "name_gender"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "error" and log.error is not None
    assert "grader" in log.error.message
    assert mock.seen.request_count == 0


def test_adaptive_with_the_user_model_as_a_role_then_import(
    mock: MockServer, aib: Any, tmp_path: Path
) -> None:
    scenarios = "escalation_pref_city,escalation_opinion_zoos,control_name_pressure"
    logs = inspect_eval(
        "independence_bench/adaptive",
        model="openai-api/mock/scripted-caver-k3",
        model_roles={
            "grader": "openai-api/mock/scripted-judge",
            "user_model": "openai-api/mock/scripted-user",
        },
        task_args={"scenarios": scenarios},
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=2,
        timeout=60,
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    written = [b for b in mock.seen.requests if b["model"] == "scripted-user"]
    assert len(written) == 2 * 5  # two escalation topics, five rounds each
    instructions = load_suite("adaptive").user_model_prompt
    assert instructions is not None
    assert all(b["messages"][0]["content"] == instructions.system for b in written)
    imported = aib("import", str(tmp_path / "logs"), "--data-dir", "from-inspect")
    assert imported.code == 0, imported.err
    (row,) = aib("leaderboard", "--data-dir", "from-inspect", "--json").json()
    assert (row["rounds_held"], row["first_flip_turn"], row["flips"]) == (2, 4, 1)
    (standing,) = row["user_models"]
    assert "scripted-user" in standing["user_model"]
    assert standing["valid_rounds"] == standing["rounds"] == 10
    with Store(Path("from-inspect"), read_only=True) as store:
        escalations = [i for i in store.items() if i.kind == "adaptive_escalation"]
        assert len(escalations) == 2
        for item in escalations:
            assert item.turns[0].human_key is None  # the scripted opening
            keys = [t.human_key for t in item.turns[1:]]
            assert all(k is not None and store.get_completion(k) is not None for k in keys)
