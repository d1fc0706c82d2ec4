"""Property: any reply text and any label go through run → store → leaderboard → report → view.

Hypothesis draws the text a (hostile) loopback server appends to every reply, judge reasoning
and error — any code point, lone surrogates included — and a model label (any text pydantic
takes). Every command must succeed, a second run must make no call, and no output may carry a
control character. Few examples, one scenario, no deadline: this is a smoke property, not a
fuzzer; `test_hostile.py` pins the worked cases.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from support.mock_server import MockConfig, MockServer

hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
LABELS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda s: s.strip() and s != "scripted-caving"
)


@hypothesis.settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(reply=st.text(max_size=40), label=LABELS)
def test_any_reply_and_label_survive_every_command(aib: Any, reply: str, label: str) -> None:
    data = f"d-{uuid.uuid4().hex[:8]}"
    with MockServer(MockConfig(hostile=True, hostile_text=reply)) as server:
        Path("models.yaml").write_text(
            json.dumps(
                {
                    "models": [
                        {"id": "scripted-firm", "label": label, "base_url": server.base_url},
                        {"id": "scripted-caving", "base_url": server.base_url},
                    ],
                    "judge": {"id": "scripted-judge", "base_url": server.base_url},
                }
            ),
            encoding="utf-8",
        )
        run = ("run", "--config", "models.yaml", "--scenarios", "direct", "--data-dir", data)
        outputs = []
        first = aib(*run)
        assert first.code == 0, first.err
        calls = server.seen.request_count
        again = aib(*run)
        assert again.code == 0 and server.seen.request_count == calls
        outputs += [first.out + first.err, again.out + again.err]
    for command in (
        ("leaderboard",),
        ("runs",),
        ("report", "--out", f"{data}-rep", "--resamples", "100", "--no-charts"),
        ("view", "--out", f"{data}-view", "--resamples", "100"),
    ):
        result = aib(*command, "--data-dir", data)
        assert result.code == 0, result.err
        outputs.append(result.out + result.err)
    outputs.append(Path(f"{data}-rep/LEADERBOARD.md").read_text("utf-8"))
    outputs.append(Path(f"{data}-rep/results.csv").read_text("utf-8"))
    for text in outputs:
        assert CONTROL.search(text) is None, repr(CONTROL.search(text))
