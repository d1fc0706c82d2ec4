"""The published figures of the earlier implementation, reproduced from its own result folders.

Imports ``../shared/data/upstream-sample/cache`` (beside the project) and checks every figure of
its ``EXPECTED.md`` against ``aib leaderboard --json --method legacy``: index and each metric to
one decimal, the run counts, and which configurations are not ranked. The 95% intervals are
Monte Carlo (a bootstrap over runs), so they are checked to within 0.15. Skipped when the sample
is not there: users of the package do not have it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from independence_bench.cli.main import cli
from independence_bench.legacy.labels import published_labels

SAMPLE = Path(__file__).resolve().parents[3] / "shared/data/upstream-sample"
pytestmark = pytest.mark.skipif(
    not (SAMPLE / "cache").is_dir() or not (SAMPLE / "EXPECTED.md").is_file(),
    reason="the upstream sample is not beside the project",
)
COLUMNS = {
    "Non-Asst.": "non_assistant_likeness",
    "Consist.": "internal_consistency",
    "Resist.": "resistance",
    "Stability": "stability",
    "Drift (0–12)": "drift_total",
}


def _published() -> tuple[list[dict[str, str]], list[str]]:
    """The ranked table (one dict per row, keyed by header) and the folders not ranked."""
    text = (SAMPLE / "EXPECTED.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [
        dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]
    match = re.search(r"Not ranked there[^:]*:(.*?)\n\n", text, re.DOTALL)
    assert match is not None, "EXPECTED.md no longer lists the unranked configurations"
    unranked = [name.strip().rstrip(".") for name in match[1].split(",")]
    return rows, unranked


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    data = tmp_path_factory.mktemp("legacy") / "store"
    runner = CliRunner()
    imported = runner.invoke(cli, ["import", str(SAMPLE / "cache"), "--data-dir", str(data)])
    assert imported.exit_code == 0, imported.output
    shown = runner.invoke(
        cli, ["leaderboard", "--json", "--method", "legacy", "--data-dir", str(data)]
    )
    assert shown.exit_code == 0, shown.output
    return {row["model"]: row for row in json.loads(shown.output)}


@pytest.fixture(scope="module")
def label_of_folder() -> Any:
    """The published name of a folder: `aib import` read it from configs/models.yaml."""
    folders = [p.name for p in (SAMPLE / "cache").iterdir() if p.is_dir()]
    labels = published_labels(SAMPLE / "configs" / "models.yaml", folders)
    assert len(labels) == len(folders) == len(set(labels.values()))
    return labels.__getitem__


def test_every_published_figure_is_reproduced(
    board: dict[str, dict[str, Any]], label_of_folder: Any
) -> None:
    rows, _ = _published()
    assert len(rows) == 8
    ranked = [model for model, row in board.items() if row["complete"]]
    assert ranked == [label_of_folder(row["Configuration folder"]) for row in rows]
    for published in rows:
        ours = board[label_of_folder(published["Configuration folder"])]
        where = published["Configuration folder"]
        assert f"{ours['index']:.1f}" == published["Index"], where
        assert str(ours["runs"]) == published["Runs"], where
        for column, key in COLUMNS.items():
            assert f"{round(ours[key], 1):.1f}" == published[column], (where, column)
        low, high = (float(x) for x in published["95% CI"].split("–"))
        assert ours["ci_low"] == pytest.approx(low, abs=0.15), where
        assert ours["ci_high"] == pytest.approx(high, abs=0.15), where


def test_configurations_without_every_dimension_are_not_ranked(
    board: dict[str, dict[str, Any]], label_of_folder: Any
) -> None:
    _, unranked = _published()
    assert len(unranked) == 4
    for folder in unranked:
        row = board[label_of_folder(folder)]
        assert row["index"] is None and not row["complete"], folder
        assert row["missing"], folder
    assert len(board) == 12


def test_every_configuration_is_named_as_the_earlier_leaderboard_named_it(
    board: dict[str, dict[str, Any]],
) -> None:
    """All 12 configurations of the sample (8 ranked, 4 not) under their published names.

    The names are worked out here from the sample's README rule, apart from `legacy/labels.py`:
    `display_label` when the entry has one, else the model id without its provider prefix,
    `@<reasoning>-t<temperature>`. Every folder of the sample is listed in its models.yaml.
    """
    entries = yaml.safe_load((SAMPLE / "configs" / "models.yaml").read_text("utf-8"))["models"]
    published = {
        entry.get("display_label")
        or f"{entry['model_id'].split('/', 1)[1]}@{entry['reasoning_effort']}"
        f"-t{float(entry['temperature'])}"
        for entry in entries
    }
    assert len(published) == len(entries) == 12
    assert set(board) == published
