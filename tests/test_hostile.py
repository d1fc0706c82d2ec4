"""Nothing a server or a label holds can crash a command or reach an output as a control code.

A hostile loopback server (`MockConfig(hostile=True)`) puts a lone surrogate, NUL, terminal
escape sequences, a C1 CSI, bidi overrides and bytes that are not UTF-8 into every reply, judge
reasoning and error, and reports NaN costs and impossible token counts. A run against it must
finish, store every reply exactly, resume without a single new call, and write a terminal
output, LEADERBOARD.md, results.csv, SVG charts and a viewer free of control sequences.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import xml.dom.minidom
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.clients.protocol import CompletionRequest
from independence_bench.engine.request_keys import request_key
from independence_bench.store.store import Store
from independence_bench.text import lossless
from independence_bench.text.outputs import csv_cell, terminal_text, visible, xml_text
from support.mock_hostile import HOSTILE_TEXT, INVALID_UTF8_MARK
from support.mock_server import MockConfig, MockServer

SCENARIOS = "direct,psych"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
"""What no output may contain (tab and newline aside)."""
LABEL = "evil\x1b[2J\x1b]0;title\x07\u202e\x00label"
RECEIVED = HOSTILE_TEXT.replace(INVALID_UTF8_MARK, "\udcff\udcfe\udcc3(")
"""What the client makes of `HOSTILE_TEXT` on the wire: invalid bytes as U+DCxx."""


def test_ordinary_text_hashes_to_the_same_bytes_and_any_text_hashes() -> None:
    for text in ("plain", "Grüße 😀 \u2028", ""):
        assert lossless.utf8(text) == text.encode("utf-8")
    assert lossless.utf8("a\ud800") == b"a\xed\xa0\x80"
    request = CompletionRequest(model="m", messages=({"role": "user", "content": "x\ud800"},))
    assert request_key(request, sample="run1") != request_key(
        CompletionRequest(model="m", messages=({"role": "user", "content": "x"},)), sample="run1"
    )


@pytest.mark.parametrize("text", ["plain", "a\ud800b", "\udcff\x00", "\ud83d\ude00", None])
def test_sql_and_json_forms_give_back_the_same_code_points(text: str | None) -> None:
    stored = lossless.to_sql(text)
    assert lossless.from_sql(stored) == text
    assert isinstance(stored, str) == (text is not None and not lossless.has_surrogates(text))
    if text is not None:
        assert lossless.json_from_sql(lossless.json_to_sql({"t": text})) == {"t": text}
        assert json.loads(lossless.json_dumps(text).encode("utf-8")) == text.replace(
            "\ud83d\ude00",
            "😀",  # the one documented edge: a pair on the wire is its character
        )


def test_each_output_kind_escapes_controls_visibly() -> None:
    assert terminal_text("a\x1b[2Jb\nc\td") == "a\\x1b[2Jb\nc\td"
    assert visible("x\ty\n", lines=False) == "x\\x09y\\x0a"
    assert terminal_text("\u202eabc\x9b\ud800") == "\\u202eabc\\x9b\\ud800"
    assert csv_cell("a\x00b") == "a\\x00b" and csv_cell(3.5) == 3.5
    assert xml_text("a\x00\ufffe") == "a\\x00\\ufffe"
    xml.dom.minidom.parseString(f"<a>{xml_text(HOSTILE_TEXT)}</a>".replace("&", "&amp;"))


@pytest.fixture()
def hostile() -> Any:
    with MockServer(MockConfig(hostile=True)) as server:
        yield server


def _models_yaml(server: MockServer) -> None:
    Path("models.yaml").write_text(
        json.dumps(
            {
                "models": [
                    {"id": "scripted-firm", "label": LABEL, "base_url": server.base_url},
                    {"id": "scripted-caving", "base_url": server.base_url},
                ],
                "judge": {"id": "scripted-judge", "base_url": server.base_url},
            }
        ),
        encoding="utf-8",
    )


def _no_control(where: str, text: str) -> None:
    found = CONTROL.search(text)
    assert found is None, f"{found.group()!r} reached {where}"


def test_a_hostile_server_neither_crashes_nor_reaches_any_output(
    hostile: MockServer, aib: Any
) -> None:
    _models_yaml(hostile)
    run = ("run", "--config", "models.yaml", "--scenarios", SCENARIOS, "--data-dir", "d")
    first = aib(*run)
    assert first.code == 0, first.err
    calls = hostile.seen.request_count
    assert calls > 0
    with closing(sqlite3.connect("d/aib.sqlite3")) as db:
        judged = db.execute("SELECT status, reasoning FROM judgments").fetchall()
    with Store(Path("d"), read_only=True) as store:
        rows = [store.get_completion(key) for key in store.completion_keys()]
    replies = [c.content for c in rows if c is not None and c.content is not None]
    for completion in rows:
        assert completion is not None
        for call in completion.tool_calls:
            replies.append(json.loads(call.arguments)["message"])
    assert sum(1 for r in replies if r is not None and r.endswith(RECEIVED)) >= len(rows) // 2
    judge_replies = [json.loads(r) for r in replies if r and r.startswith("{")]
    assert judge_replies and all(j["reasoning"].endswith(RECEIVED) for j in judge_replies)
    assert judged and all(status == "scored" for status, _ in judged)

    again = aib(*run)
    assert again.code == 0, again.err
    assert hostile.seen.request_count == calls, "a resumed hostile run paid again"
    assert "0 API calls" in again.out

    outputs = {"run": first.out + first.err, "rerun": again.out + again.err}
    for command in (("leaderboard",), ("runs",), ("runs", "--failed")):
        result = aib(*command, "--data-dir", "d")
        assert result.code == 0, result.err
        outputs[" ".join(command)] = result.out + result.err
    report = aib("report", "--data-dir", "d", "--out", "rep", "--resamples", "100")
    assert report.code == 0, report.err
    view = aib("view", "--data-dir", "d", "--out", "view", "--resamples", "100")
    assert view.code == 0, view.err
    for where, text in outputs.items():
        _no_control(where, text)
    assert "evil\\x1b[2J" in outputs["leaderboard"]
    markdown = Path("rep/LEADERBOARD.md").read_text("utf-8")
    _no_control("LEADERBOARD.md", markdown)
    assert "evil\\\\x1b\\[2J" in markdown  # visible, then Markdown-escaped
    table = Path("rep/results.csv").read_text("utf-8")
    _no_control("results.csv", table)
    assert any("evil\\x1b[2J" in row[3] for row in csv.reader(io.StringIO(table)))
    assert LABEL in {
        m["model"] for m in json.loads(Path("rep/results.json").read_text())["suites"][0]["models"]
    }
    svgs = list(Path("rep").rglob("*.svg"))
    assert svgs
    for svg in svgs:
        xml.dom.minidom.parse(str(svg))
    for script in Path("view").rglob("*.js"):
        script.read_bytes().decode("utf-8")  # valid UTF-8: no raw surrogate reached a file


def test_server_errors_reach_the_failure_lines_without_escape_sequences(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))  # fail fast
    config = MockConfig(hostile=True, fault_rate=1.0, fault_kinds=("500",))
    with MockServer(config) as server:
        _models_yaml(server)
        result = aib("run", "--config", "models.yaml", "--scenarios", "direct", "--data-dir", "d")
        failed = aib("runs", "--failed", "--data-dir", "d")
    assert result.code == 3, result.err
    assert "Upstream error 500 (mock)" in result.out + result.err
    assert "\\x1b[2J" in result.out + result.err
    _no_control("the run's failure summary", result.out + result.err)
    assert failed.code == 0 and "\\x1b]0;pwned" in failed.out
    _no_control("aib runs --failed", failed.out + failed.err)
