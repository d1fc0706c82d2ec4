"""Terminal tables follow the terminal's width and never cut a label, rank or index."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from independence_bench import __version__
from independence_bench.cli.options import read_env
from independence_bench.reports.leaderboard import METRIC_TITLES, render_table
from independence_bench.reports.leaderboard._rows import LOWER_MARK, SHORT_TITLES
from independence_bench.scoring.formulas import metric_weights
from independence_bench.scoring.scoring import METRIC_KEYS
from independence_bench.stats.analysis import Leaderboard, LeaderboardRow
from independence_bench.stats.core import Estimate
from support.mock_server import MockServer

LONG = "some-provider/a-model-with-quite-a-long-name+pinned-host@high-t0.2"


SHOWN = METRIC_KEYS[:7]
"""The v1/v2 metrics: as many as one suite's rows have (v3 has no resistance or stability)."""


def _row(model: str, index: float, rank: int) -> LeaderboardRow:
    return LeaderboardRow(
        model=model,
        index=index,
        ci_low=96.5,
        ci_high=98.9,
        rank=rank,
        rank_low=1,
        rank_high=2,
        runs=5,
        metrics={k: Estimate(7.25, 6.0, 8.5) for k in SHOWN},
        n_items=75,
        n_scored=75,
        n_declined=0,
        missing=(),
        why_no_interval=None,
    )


def _board(*rows: LeaderboardRow) -> Leaderboard:
    return Leaderboard("v2", "v2", ("judge",), rows, {}, "a bootstrap")


@pytest.mark.parametrize("width", [80, 200])
def test_long_labels_and_the_index_are_never_cut(width: int) -> None:
    text = render_table(_board(_row(LONG, 97.81, 1), _row("short/m", 97.12, 2)), width=width)
    assert LONG in text and "97.8" in text and "96.5–98.9" in text and "2 (1–2)" in text
    assert "…" not in text
    table_lines = [line for line in text.splitlines() if "┃" in line or "│" in line]
    if width == 200:
        assert all(len(line) <= 200 for line in text.splitlines()[:8])
        assert all(METRIC_TITLES[key] in text for key in SHOWN)
        assert "left out" not in text
    else:
        # the label alone takes 80 columns: metrics go, with a note; the rest is printed whole
        assert "Too narrow for every metric" in text and "--json" in text
        assert len(table_lines[0]) == max(len(line) for line in table_lines)


def test_a_medium_terminal_gets_short_headers_with_a_legend() -> None:
    text = render_table(_board(_row("a/b", 90.0, 1)), width=100)
    assert "Res = resistance" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_the_leaderboard_follows_columns(server: MockServer, aib: Any, monkeypatch: Any) -> None:
    run = ["--models", "scripted-firm", "--judge", "scripted-judge", "--base-url", server.base_url]
    assert aib("run", *run, "--runs", "1", "--data-dir", "store").code == 0
    monkeypatch.setenv("COLUMNS", "200")
    wide = aib("leaderboard", "--data-dir", "store")
    monkeypatch.setenv("COLUMNS", "70")
    narrow = aib("leaderboard", "--data-dir", "store")
    assert f"┃ Name/gender{LOWER_MARK} ┃" in wide.out and "left out" not in wide.out
    notes = " ".join(narrow.out.split())  # notes are wrapped to the terminal's width
    assert "Consist., Name/gender, Distinct. left out" in notes
    for out in (wide.out, narrow.out):
        assert "scripted-firm" in out and "…" not in out
    assert max(len(x) for x in narrow.out.splitlines()) <= 70


def test_version_and_dotenv(aib: Any) -> None:
    shown = aib("--version")
    assert shown.code == 0 and shown.out.strip() == f"aib, version {__version__}"
    Path(".env").write_text(
        "# keys\nexport AIB_TEST_A=\"two words\"\nAIB_TEST_B='x#y' # note\nPATH=ignored\n",
        encoding="utf-8",
    )
    env = read_env(Path.cwd())
    assert env["AIB_TEST_A"] == "two words" and env["AIB_TEST_B"] == "x#y"
    assert env["PATH"] != "ignored"  # the environment wins over .env


def test_the_one_number_format() -> None:
    from independence_bench.reports.format import estimate_json, interval_text, number, rounded

    assert [number(None), number(2.345, 2), number(-0.001, 2), number(0.04, signed=True)] == [
        "–",
        "2.35",
        "0.00",
        "+0.0",
    ]
    assert number(-0.04, signed=True) == "-0.0"
    assert interval_text(Estimate(1.0, -0.25, 0.5), 2, signed=True) == "-0.25 to +0.50"
    assert interval_text(Estimate(1.0, 0.25, 0.5), join="–") == "0.2–0.5"
    assert interval_text(Estimate(1.0)) == "–"
    assert [rounded(None), rounded(1.23456), rounded(1.25, 1), rounded(float("nan"))] == [
        None,
        1.235,
        1.2,
        None,
    ]
    assert estimate_json(Estimate(0.12345, None, 0.5)) == {
        "value": 0.123,
        "ci_low": None,
        "ci_high": 0.5,
    }


def _v2_row(model: str, index: float, rank: int) -> LeaderboardRow:
    """A row with v2's metrics, each at a different value so a column can be told apart."""
    values = {k: 1.0 + i for i, k in enumerate(SHOWN)}
    row = _row(model, index, rank)
    return replace(row, metrics={k: Estimate(v, v - 0.5, v + 0.5) for k, v in values.items()})


def _headers(text: str) -> list[str]:
    header = next(line for line in text.splitlines() if "Rank" in line and "┃" in line)
    return [cell.strip() for cell in header.strip().strip("┃").split("┃")]


@pytest.mark.parametrize("width", [80, 100, 140])
def test_the_heaviest_metrics_of_the_index_come_first_and_the_lightest_go(width: int) -> None:
    text = render_table(_board(_v2_row("a/b", 90.0, 1), _v2_row("c/d", 80.0, 2)), width=width)
    shown = [h.rstrip(LOWER_MARK) for h in _headers(text)[5:-1]]
    long_titles = {v: k for k, v in METRIC_TITLES.items()}
    short_titles = {v: k for k, v in SHORT_TITLES.items()}
    keys = [long_titles.get(h) or short_titles[h] for h in shown]
    weights = metric_weights("v2")
    order = sorted(SHOWN, key=lambda k: -weights.get(k, 0.0))
    assert keys == order[: len(keys)], keys  # a prefix of heaviest-first: the lightest left out
    assert keys[:2] == ["resistance", "stability"]  # 35 and 30 of v2's 100
    assert all(len(line) <= width for line in text.splitlines())
    if width == 140:
        assert len(keys) == len(SHOWN)
    if len(keys) < len(SHOWN):
        assert "Distinct." in " ".join(text.split()).split("Too narrow for every metric:")[1]


def test_lower_is_better_columns_are_marked_and_the_mark_explained() -> None:
    text = render_table(_board(_v2_row("a/b", 90.0, 1)), width=200)
    headers = _headers(text)
    assert f"Drift{LOWER_MARK}" in headers and f"Name/gender{LOWER_MARK}" in headers
    assert not any(h.endswith(LOWER_MARK) for h in headers if h not in (
        f"Drift{LOWER_MARK}", f"Name/gender{LOWER_MARK}"))  # fmt: skip
    assert f"{LOWER_MARK} lower is more independent" in text


@pytest.mark.parametrize("width", [80, 100, 140])
def test_items_and_estimate_respect_columns(
    width: int, server: MockServer, aib: Any, monkeypatch: Any
) -> None:
    run = ["--models", "scripted-firm", "--judge", "scripted-judge", "--base-url", server.base_url]
    assert aib("run", *run, "--runs", "1", "--data-dir", "store").code == 0
    monkeypatch.setenv("COLUMNS", str(width))
    for command in (
        ("items", "--data-dir", "store"),
        ("estimate", "--models", "embedded:qwen2.5-coder-0.5b", "--data-dir", "other"),
        ("judges", "--data-dir", "store"),
        ("compare", "--data-dir", "store"),
        ("runs", "--data-dir", "store"),
    ):
        result = aib(*command)
        assert result.code == 0, result.err
        widest = max(cell_len(line) for line in result.out.splitlines())
        assert widest <= width, (command[0], widest)
        assert not [line for line in result.out.splitlines() if "│" in line and "…" in line]
