"""Numbers and labels from a server or a user cannot break an output.

Every number written to JSON is finite (a NaN or infinity becomes null, and the document says
where); costs of `1e308` or `Infinity` and a `.inf` price count as unknown or are refused. Labels
reach the terminal as text, never as rich markup, on one line, cut with "…" where a table needs
the room; `--json` keeps them whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.catalog import _price_of
from independence_bench.clients.replies import _cost
from independence_bench.text.lossless import NON_FINITE_KEY, json_document
from support.mock_server import MockConfig, MockServer

LABELS = {
    "scripted-firm": "[/x] [bold]b[/bold] [link=http://e.example]c[/link]",
    "scripted-caving": "two\nlines",
    "scripted-plain": "L" * 10_000,
}


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_json_document_has_no_non_finite_number_and_says_where_one_was() -> None:
    text = json_document({"a": [1.5, float("inf")], "b": {"c": float("nan")}, "d": -float("inf")})
    assert _strict(text) == {
        "a": [1.5, None],
        "b": {"c": None},
        "d": None,
        NON_FINITE_KEY: {"$.a[1]": "Infinity", "$.b.c": "NaN", "$.d": "-Infinity"},
    }
    assert _strict(json_document([1.0, 2])) == [1.0, 2]


@pytest.mark.parametrize("cost", [1e308, float("inf"), float("nan"), -1, 10**400])
def test_a_cost_no_call_can_have_counts_as_unknown(cost: object) -> None:
    assert _cost(cost) is None
    assert _cost(0.25) == 0.25


@pytest.mark.parametrize("price", ["Infinity", "NaN", "1e308", "-1"])
def test_a_listed_price_that_is_not_a_price_is_ignored(price: str) -> None:
    assert _price_of({"pricing": {"prompt": price, "completion": "0.000001"}}) is None


def test_an_infinite_price_in_models_yaml_is_one_line(aib: Any) -> None:
    Path("models.yaml").write_text(
        "models:\n  - id: m\n    base_url: http://127.0.0.1:9/v1\n"
        "    price_prompt_per_mtok: .inf\n    price_completion_per_mtok: 1\n",
        encoding="utf-8",
    )
    result = aib("run", "--config", "models.yaml", "--data-dir", "d")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1, result.err
    assert "price_prompt_per_mtok" in result.err


def test_huge_costs_and_markup_labels_leave_every_output_valid(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # room for a cut label and every metric column
    with MockServer(MockConfig(shape="huge_cost")) as server:
        models = [
            {"id": i, "label": label, "base_url": server.base_url} for i, label in LABELS.items()
        ]
        judge = {"id": "scripted-judge", "base_url": server.base_url}
        Path("models.yaml").write_text(json.dumps({"models": models, "judge": judge}), "utf-8")
        run = aib("run", "--config", "models.yaml", "--scenarios", "direct", "--data-dir", "d")
    assert run.code == 0, run.err
    board = aib("leaderboard", "--data-dir", "d", "--resamples", "100")
    assert board.code == 0, board.err
    for shown in (run.out, board.out):
        assert "[/x] [bold]b[/bold] [link=http://e.example]c[/link]" in shown
        assert "two\\x0alines" in shown and "L" * 99 + "…" in shown and "L" * 101 not in shown
        assert "10.00" in shown and "0.00" in shown  # the metric columns are kept
        rows = [line for line in shown.splitlines() if "│" in line and "scripted" not in line]
        assert sum("two" in line for line in rows) == 1
    runs = aib("runs", "--data-dir", "d")
    assert runs.code == 0, runs.err
    assert "two\\x0alines" in runs.out and "L" * 99 + "…" in runs.out
    assert all("two\\x0alines" in line for line in runs.out.splitlines() if "lines" in line)
    as_json = aib("leaderboard", "--data-dir", "d", "--json", "--resamples", "100")
    assert {row["model"] for row in _strict(as_json.out)} == set(LABELS.values())
    report = aib("report", "--data-dir", "d", "--out", "rep", "--resamples", "100", "--no-charts")
    assert report.code == 0, report.err
    _strict(Path("rep/results.json").read_text("utf-8"))
    view = aib("view", "--data-dir", "d", "--out", "v", "--resamples", "100")
    assert view.code == 0, view.err
