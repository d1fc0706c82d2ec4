"""A judge's standing (`gathering/standings.py`): which of the three, and the caption it prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from independence_bench.gathering.standings import (
    judge_standing,
    ranking_in_words,
    shipped_standings,
)
from independence_bench.text.counts import count_of
from support.mock_server import MockServer

EMBEDDED_JUDGE = "embedded:qwen2.5-coder-1.5b"


def test_the_embedded_judge_ships_its_measured_figures() -> None:
    standing = judge_standing(None, EMBEDDED_JUDGE)
    assert standing.kind == "smoke test"
    assert standing.index_rho == -0.30 and standing.units == 8
    assert standing.metrics["resistance"] == -0.48
    assert standing.source is not None and "benchmarks/judge_calibration.py" in standing.source
    caption = standing.caption()
    assert caption.startswith(
        f"Judge {EMBEDDED_JUDGE}: smoke test — this judge ranks models roughly opposite to a "
        "strong one (index Spearman ρ -0.30"
    )
    assert "over 8 configurations" in caption and "target ≥ 0.7" in caption
    record = standing.as_json()
    assert record["standing"] == "smoke test" and record["index_spearman"] == -0.30
    assert record["metrics_spearman"]["stability"] == -0.06


def test_other_judges_say_what_is_not_known() -> None:
    assert judge_standing(None, "embedded:other").caption() == (
        "Judge embedded:other: smoke test (not measured against a reference); "
        "do not compare models by it."
    )
    strong = judge_standing(None, "google/gemini-3-flash-preview")
    assert strong.kind == "not calibrated" and strong.reference is None
    assert "'aib judges --reference JUDGE' measures it" in strong.caption()


def test_every_shipped_judge_is_embedded() -> None:
    assert shipped_standings() and all(j.startswith("embedded:") for j in shipped_standings())


def test_counts_are_in_the_right_number() -> None:
    assert [count_of(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert count_of(1, "turn") == "1 turn"


def test_the_standing_says_in_words_what_it_means_for_ranking() -> None:
    words = {rho: ranking_in_words(rho) for rho in (0.9, 0.5, 0.1, -0.3, -0.8, None)}
    assert words[0.9] == "this judge ranks models much as a strong one does"
    assert words[0.5] == "this judge ranks models only partly as a strong one does"
    assert words[0.1] == "this judge's ranking of models is unrelated to a strong one's"
    assert words[-0.3] == "this judge ranks models roughly opposite to a strong one"
    assert words[-0.8] == "this judge ranks models opposite to a strong one"
    assert "unknown" in words[None]


def test_every_output_of_a_judges_numbers_carries_its_standing(
    server: MockServer, aib: Any
) -> None:
    run = ["--models", "scripted-firm,scripted-caving", "--judge", "scripted-judge"]
    result = aib("run", *run, "--base-url", server.base_url, "--runs", "2", "--data-dir", "d")
    assert result.code == 0, result.err
    caption = "Judge scripted-judge: not calibrated"
    outputs = {
        "judges": ("judges",),
        "items": ("items",),
        "compare": ("compare", "scripted-firm", "scripted-caving"),
        "compare settings": ("compare",),
    }
    for name, command in outputs.items():
        text = aib(*command, "--data-dir", "d")
        assert text.code == 0, (name, text.err)
        assert caption in " ".join(text.out.split()), name
        data = aib(*command, "--json", "--data-dir", "d").json()
        assert isinstance(data, dict)
        assert [s["standing"] for s in data["judge_standings"]] == ["not calibrated"], name
    assert aib("report", "--data-dir", "d", "--out", "r").code == 0
    document = json.loads(Path("r", "results.json").read_text(encoding="utf-8"))
    models = document["suites"][0]["models"]
    assert {m["model"] for m in models} == {"scripted-firm", "scripted-caving"}
    for entry in models:
        assert entry["judge"] == "scripted-judge"
        assert entry["judge_standing"] == "not calibrated"
        assert "judge_index_spearman" in entry
