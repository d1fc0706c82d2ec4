"""The Rank column on the earlier implementation's published configurations.

Imports ``../shared/data/upstream-sample/cache`` and checks the default leaderboard: every
ranked configuration shows its own rank interval ("3 (1–4)"), nothing is chained into a tie
group, and the order and indices are those the leaderboard showed before rank intervals
replaced tie groups (recorded below from that version's ``aib leaderboard --json``). Skipped
when the sample is not there: users of the package do not have it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from independence_bench.cli.main import cli

SAMPLE = Path(__file__).resolve().parents[3] / "shared/data/upstream-sample"
pytestmark = pytest.mark.skipif(
    not (SAMPLE / "cache").is_dir(), reason="the upstream sample is not beside the project"
)
BEFORE = [  # under the names the earlier implementation published (its configs/models.yaml)
    ("gemini-3-flash-preview@none-t0.7", 97.77),
    ("grok-4.1-fast@low-t0.7", 97.31),
    ("kimi-k2.5+fireworks@none-t0.7", 95.79),
    ("claude-haiku-4.5@none-t0.7", 95.74),
    ("step-3.5-flash:free@low-t1.0", 84.07),
    ("step-3.5-flash:free@low-t0.0", 83.58),
    ("gemma-4-26b-a4b-it-uncensored-heretic@low-t0.7", 81.77),
    ("gpt-5.6-luna@low-t1.0", 57.99),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("upstream") / "store"
    imported = CliRunner().invoke(cli, ["import", str(SAMPLE / "cache"), "--data-dir", str(data)])
    assert imported.exit_code == 0, imported.output
    return data


def test_rank_column_shows_each_models_own_interval(store: Path) -> None:
    shown = CliRunner().invoke(cli, ["leaderboard", "--json", "--data-dir", str(store)])
    assert shown.exit_code == 0, shown.output
    rows: list[dict[str, Any]] = json.loads(shown.output)
    ranked = [row for row in rows if row["rank"] is not None]
    assert [(row["model"], row["index"]) for row in ranked] == BEFORE
    assert [row["rank"] for row in ranked] == list(range(1, len(BEFORE) + 1))
    for row in ranked:
        assert row["rank_low"] <= row["rank"] <= row["rank_high"]
        assert row["could_lead"] is (row["rank_low"] == 1)
        assert "tie_group" not in row
    # the last is clearly last, and the top four are not all alike: no chain joins them
    assert (ranked[-1]["rank_low"], ranked[-1]["rank_high"]) == (8, 8)
    assert ranked[3]["rank_low"] > 1 and ranked[4]["rank_low"] > 4

    table = CliRunner().invoke(cli, ["leaderboard", "--data-dir", str(store)])
    assert table.exit_code == 0, table.output
    assert "tied" not in table.output
    top, fourth = ranked[0], ranked[3]
    assert f"1 ({top['rank_low']}–{top['rank_high']})" in table.output
    assert f"4 ({fourth['rank_low']}–{fourth['rank_high']})" in table.output
    assert "3 models have a rank interval that includes 1." in " ".join(table.output.split())


def test_report_shows_rank_intervals(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    made = CliRunner().invoke(
        cli, ["report", "--data-dir", str(store), "--out", str(out), "--no-charts"]
    )
    assert made.exit_code == 0, made.output
    markdown = (out / "LEADERBOARD.md").read_text(encoding="utf-8")
    assert "tied" not in markdown
    assert "| 8 (8–8) | gpt-5.6-luna@low-t1.0 |" in markdown
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    models = document["suites"][0]["models"]
    assert [m["model"] for m in models[: len(BEFORE)]] == [name for name, _ in BEFORE]
    assert all(m["rank_low"] is not None for m in models[: len(BEFORE)])
