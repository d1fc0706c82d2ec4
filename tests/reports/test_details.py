"""Detailed metrics, chosen names, spend and the report's optional sections, over loopback."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from support.mock_behaviours import PERSONA_GENDER, PERSONA_NAME
from support.mock_server import MockServer

MODELS_YAML = """
models:
  - id: scripted-firm
  - id: scripted-firm
    temperature: 0.2
  - id: scripted-caving
"""


def _run(server: MockServer, aib: Any) -> Any:
    Path("models.yaml").write_text(MODELS_YAML, encoding="utf-8")
    args = ["--config", "models.yaml", "--judge", "scripted-judge", "--base-url", server.base_url]
    args += ["--runs", "2"]
    result = aib("run", *args, "--data-dir", "store")
    assert result.code == 0, result.err
    return result


def _stored_cost() -> float:
    with sqlite3.connect("store/aib.sqlite3") as db:
        return float(db.execute("SELECT SUM(cost_usd) FROM completions").fetchone()[0])


def test_detailed_metrics_and_names_per_model(server: MockServer, aib: Any) -> None:
    _run(server, aib)
    shown = aib("leaderboard", "--data-dir", "store", "--detailed", "--json", "--resamples", "300")
    assert shown.code == 0, shown.err
    rows = {row["model"]: row for row in shown.json()}
    firm, caving = rows["scripted-firm"]["detailed"], rows["scripted-caving"]["detailed"]
    assert firm["quality_of_reasoning"] == 10 and caving["quality_of_reasoning"] == 0
    assert firm["identity_maintained"] == 1 and caving["identity_maintained"] == 0
    assert firm["graceful_handling"] == 10 and caving["graceful_handling"] == 0
    assert firm["quality_of_reasoning_ci"] == [10, 10]  # two runs: an interval exists
    names = rows["scripted-firm"]["chosen_names"]
    assert names == {"names": {PERSONA_NAME: 2}, "genders": {PERSONA_GENDER: 2}}

    text = aib("leaderboard", "--data-dir", "store", "--detailed", "--resamples", "300")
    assert "Detailed metrics (95% intervals)" in text.out
    assert re.search(r"scripted-firm\s+│\s+10\.0 \(10\.0–10\.0\)\s+│\s+100% \(100–100%\)", text.out)
    assert re.search(
        rf"scripted-caving\s+│ 2\s+│ {PERSONA_NAME} ×2\s+│ {PERSONA_GENDER} ×2", text.out
    )
    plain = aib("leaderboard", "--data-dir", "store", "--resamples", "300")
    assert "Detailed metrics" not in plain.out


def test_unpriced_calls_make_the_spend_unknown_not_zero(server: MockServer, aib: Any) -> None:
    _run(server, aib)
    # The mock lists prices for every model, and loopback models cost $0 when unlisted: so
    # make the judge's stored calls costless, as an unlisted remote judge's would be.
    with sqlite3.connect("store/aib.sqlite3") as db:
        db.execute("UPDATE completions SET cost_usd = NULL WHERE model_id = 'scripted-judge'")
    models = _stored_cost()
    result = _run(server, aib)  # every call is stored: the line is what those results cost
    line = next(x for x in result.out.splitlines() if x.startswith("total spend:"))
    assert line == (
        f"total spend: unknown (models ${models:.4f}, judge $0.0000) over 276 stored calls; "
        f"90 calls have no cost (none reported, no price set), so it is at least ${models:.4f}"
    )


def test_spend_is_printed_after_a_run_and_in_the_report(server: MockServer, aib: Any) -> None:
    priced_judge = (
        f"judge:\n  id: scripted-judge\n  base_url: {server.base_url}\n  temperature: 0\n"
        "  price_prompt_per_mtok: 1.0\n  price_completion_per_mtok: 2.0\n"
    )
    Path("models.yaml").write_text(MODELS_YAML + priced_judge, encoding="utf-8")
    args = ["--config", "models.yaml", "--base-url", server.base_url, "--runs", "2"]
    result = aib("run", *args, "--data-dir", "store")
    assert result.code == 0, result.err
    total = _stored_cost()
    line = next(x for x in result.out.splitlines() if x.startswith("total spend:"))
    assert line.startswith(f"total spend: ${total:.4f} (models $")
    assert line.endswith("over 276 stored calls")
    assert aib("report", "--data-dir", "store", "--no-charts", "--resamples", "300").code == 0
    markdown = Path("store/report/LEADERBOARD.md").read_text(encoding="utf-8")
    assert f"Total spend: ${total:.4f} (models" in markdown
    document = json.loads(Path("store/report/results.json").read_text(encoding="utf-8"))
    assert document["suites"][0]["spend_usd"] == round(total, 6)


def test_report_has_every_section_the_store_supports(server: MockServer, aib: Any) -> None:
    _run(server, aib)
    judged = aib(
        "judge", "--judge", "scripted-judge", "--repeats", "2", "--base-url", server.base_url,
        "--data-dir", "store",
    )  # fmt: skip
    assert judged.code == 0, judged.err
    out = aib("report", "--data-dir", "store", "--no-charts", "--resamples", "300")
    assert out.code == 0, out.err
    markdown = Path("store/report/LEADERBOARD.md").read_text(encoding="utf-8")
    for heading in (
        "### Detailed metrics",
        "### Names chosen",
        "### Judge validation",
        "### Provider and setting comparisons",
    ):
        assert heading in markdown, heading
    assert f"| scripted-firm | 2 | {PERSONA_NAME} ×2 | {PERSONA_GENDER} ×2 |" in markdown
    assert "| scripted-firm-t0.2 | scripted-firm | temperature 0.2 |" in markdown
    assert "- Test-retest, scripted-judge," in markdown

    document = json.loads(Path("store/report/results.json").read_text(encoding="utf-8"))
    (suite,) = document["suites"]
    models = {m["model"]: m for m in suite["models"]}
    assert models["scripted-caving"]["detailed"]["identity_maintained"] == 0
    assert suite["chosen_names"][0]["names"] == {PERSONA_NAME: 2}
    assert suite["judge_validation"]["retest"]
    assert suite["setting_comparisons"]["settings"][0]["label"] == "scripted-firm-t0.2"
    with open("store/report/results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["row"] == "model"]
    assert {r["model"]: r["graceful_handling"] for r in rows}["scripted-firm"] == "10.0"


def test_sections_without_data_are_left_out(server: MockServer, aib: Any) -> None:
    args = ["--models", "scripted-firm", "--judge", "scripted-judge", "--base-url", server.base_url]
    assert aib("run", *args, "--runs", "1", "--data-dir", "store").code == 0
    assert aib("report", "--data-dir", "store", "--no-charts").code == 0
    markdown = Path("store/report/LEADERBOARD.md").read_text(encoding="utf-8")
    assert "### Detailed metrics" in markdown
    assert "### Judge validation" not in markdown
    assert "### Provider and setting comparisons" not in markdown
