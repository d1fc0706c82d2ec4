"""Every door checks what comes in (issue 35): Inspect logs mutated as a hostile server, a
damaged log or a careless user would leave them are imported in one go, each bad log, sample
or verdict skipped with one line naming the file and why, the rest imported; then every read
command works on the store. Skipped without the `[inspect]` extra."""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.inspect_tasks.log_format import SCORER_NAME, TASK_MARK, TRANSCRIPT_KEY
from independence_bench.store.store import Store
from support.mock_server import MockConfig, MockServer

SERVICE = "DOORS"
"""`openai-api/doors/<model>` reads `DOORS_BASE_URL` (Inspect keeps a model per name, so this
module's server has a name of its own)."""
SCORE_FIELD = "distinctiveness"
BAD_SCORES: dict[str, Any] = {
    "text": "8",
    "list": [8],
    "object": {"value": 8},
    "nan": math.nan,
    "infinity": math.inf,
    "huge": 1e308,
    "negative": -50,
    "too_high": 1000,
}
BAD_SUITES = {"nope": "nope", "path": "../../etc/passwd"}
READ_COMMANDS = (
    ("leaderboard",),
    ("leaderboard", "--json"),
    ("report", "--no-charts", "--out", "report-out"),
    ("view", "--out", "viewer-out"),
    ("runs",),
    ("runs", "--failed"),
    ("items",),
    ("judges",),
    ("compare",),
)


@pytest.fixture(scope="module")
def base_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One real log of `independence_bench/v2` (two samples), as Inspect's JSON."""
    folder = tmp_path_factory.mktemp("base")
    with MockServer(MockConfig()) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv(f"{SERVICE}_BASE_URL", server.base_url)
        patch.setenv(f"{SERVICE}_API_KEY", "loopback")
        [log] = inspect_eval(
            "independence_bench/v2",
            model=f"openai-api/{SERVICE.lower()}/scripted-firm",
            model_roles={"grader": f"openai-api/{SERVICE.lower()}/scripted-judge-graded"},
            task_args={"scenarios": "negotiation,name_gender"},
            log_dir=str(folder),
            display="none",
            max_retries=2,
            timeout=60,
            log_format="json",
        )
    assert log.status == "success", log.error
    [path] = folder.glob("*.json")
    yield json.loads(path.read_text(encoding="utf-8"))


def _negotiation(data: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in data["samples"] if s["metadata"]["scenario"] == "negotiation")


def _with_score(value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        sample = _negotiation(data)
        sample["scores"][SCORER_NAME]["metadata"]["scores"][SCORE_FIELD] = value

    return mutate


def _with_suite(suite: str) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        data["eval"]["metadata"][TASK_MARK]["suite"] = suite

    return mutate


def _write(folder: Path, name: str, data: dict[str, Any], index: int) -> Path:
    """`data` as its own log (its own eval id and model name, so its own run)."""
    data["eval"]["eval_id"] = f"doors-{index}"
    data["eval"]["model"] = f"openai-api/doors/m{index:02d}-{name}"
    path = folder / f"{index:02d}-{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity as JSON5 literals
    return path


def _huge_reply_eval(data: dict[str, Any], json_path: Path, eval_path: Path) -> int:
    """An `.eval` whose first reply is just over the reply cap, in the transcript and in its
    completion; returns that reply's length."""
    sample = _negotiation(data)
    turn = sample["store"][TRANSCRIPT_KEY]["turns"][0]
    huge = "I keep my view. " * (REPLY_CAP_CHARS // 16 + 2)
    turn["reply"] = huge
    turn["completion"]["content"] = huge
    json_path.write_text(json.dumps(data), encoding="utf-8")
    write_eval_log(read_eval_log(str(json_path)), str(eval_path), format="eval")
    json_path.unlink()
    return len(huge)


def test_every_mutation_is_skipped_or_held_and_every_read_command_works(
    base_log: dict[str, Any], aib: Any, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    mutations: dict[str, Callable[[dict[str, Any]], None]] = {
        **{f"score-{n}": _with_score(v) for n, v in BAD_SCORES.items()},
        **{f"suite-{n}": _with_suite(v) for n, v in BAD_SUITES.items()},
    }
    written: dict[str, Path] = {}
    for index, (name, mutate) in enumerate(mutations.items(), start=1):
        data = copy.deepcopy(base_log)
        mutate(data)
        written[name] = _write(logs, name, data, index)
    good = _write(logs, "good", copy.deepcopy(base_log), 90)
    huge_data = copy.deepcopy(base_log)
    huge_data["eval"]["eval_id"], huge_data["eval"]["model"] = "doors-huge", "openai-api/doors/huge"
    huge = _huge_reply_eval(huge_data, tmp_path / "huge.json", logs / "95-huge.eval")

    result = aib("import", str(logs), "--data-dir", "store")
    assert result.code == 0, result.err
    assert "Traceback" not in result.out + result.err
    skipped = [line for line in result.out.splitlines() if line.startswith("  /")]
    for name in BAD_SCORES:
        [line] = [s for s in skipped if str(written[f"score-{name}"]) in s]
        assert "negotiation" in line and f"score {SCORE_FIELD} is" in line, line
        assert "the transcript is kept" in line, line
    for name, value in BAD_SUITES.items():
        [line] = [s for s in skipped if str(written[f"suite-{name}"]) in s]
        assert f"suite {value!r} is not one this aib ships" in line, line
    assert not [s for s in skipped if str(good) in s or "95-huge" in s]
    # Ten logs imported (eight with one verdict skipped, the good one, the huge one).
    assert "imported 10 Inspect logs" in result.out, result.out

    with Store(Path("store")) as store:
        runs = {r.model_label: r for r in store.runs()}
        assert set(runs) == {
            *(f"openai-api/doors/m{i:02d}-score-{n}" for i, n in enumerate(BAD_SCORES, 1)),
            "openai-api/doors/m90-good",
            "openai-api/doors/huge",
        }
        scores = [j.scores for j in store.judgments() if j.scores]
        for score in scores:
            value = score.get(SCORE_FIELD, 5)
            assert isinstance(value, int | float) and 0 <= value <= 10
        assert len(store.judgments()) == 2 * 2 + 8  # both verdicts of 2 logs, 1 of 8
        [item] = [
            i
            for i in store.items()
            if i.run.model_label == "openai-api/doors/huge" and i.scenario_id == "negotiation"
        ]
        assert len(item.turns[0].reply) == REPLY_CAP_CHARS < huge
        completion = store.get_completion(item.turns[0].completion_key)
        assert completion is not None and completion.cut_chars == huge - REPLY_CAP_CHARS

    for command in READ_COMMANDS:
        out = aib(*command, "--data-dir", "store")
        assert out.code == 0, f"{command}: {out.err}"
        assert "Traceback" not in out.err and "nan" not in out.out.lower().split(), command
    # v2 has one cell: `configs` refuses it in its one line, as on any v2 store.
    configs = aib("configs", "--data-dir", "store")
    assert configs.code == 0 or (configs.err.count("\n") == 1 and "config analysis" in configs.err)
    board = aib("leaderboard", "--json", "--data-dir", "store").json()
    assert isinstance(board, list)
    for row in board:
        assert row["index"] is None or 0 <= row["index"] <= 100, row


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")
def test_a_log_folder_holding_a_fifo_a_device_or_a_link_out_reads_none_of_them(
    aib: Any, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    os.mkfifo(logs / "fifo.json")
    (logs / "zero.eval").symlink_to("/dev/zero")
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    (logs / "out.json").symlink_to(tmp_path / "elsewhere.json")
    result = aib("import", str(logs), "--data-dir", "store")
    assert result.code == 2 and "every log or sample was skipped" in result.err, result.err
    assert f"{logs / 'fifo.json'}: not a regular file" in result.out
    assert f"{logs / 'zero.eval'}: a link to a file outside the folder" in result.out
    assert f"{logs / 'out.json'}: a link to a file outside the folder" in result.out
