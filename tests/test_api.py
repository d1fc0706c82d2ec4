"""The package's Python API: `import independence_bench` loads nothing, and its names run a
suite, judge it, rank it and report it as the commands do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import independence_bench as aib
from independence_bench.cli.main import main
from support.mock_server import MockServer


def test_importing_the_package_loads_none_of_it() -> None:
    code = (
        "import sys, independence_bench; "
        "print(sorted(m for m in sys.modules if m.startswith('independence_bench.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_public_name_resolves_and_unknown_names_do_not() -> None:
    for name in aib.__all__:
        assert getattr(aib, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'run'"):
        _ = aib.run  # type: ignore[attr-defined]


def test_a_suite_run_judged_and_ranked_through_the_api_matches_the_commands(
    server: MockServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "store"
    result = aib.run_suite(
        aib.RunOptions(
            models="scripted-firm,scripted-caving",
            judge="scripted-judge",
            base_url=server.base_url,
            runs=2,
            data_dir=data,
            show_progress=False,
        )
    )
    assert not result.summary.failures
    summary = aib.judge(
        aib.JudgeOptions(
            judge="scripted-judge-graded",
            base_url=server.base_url,
            data_dir=data,
            show_progress=False,
        )
    )
    assert summary.judged > 0 and not summary.failures
    board = aib.build_leaderboard(aib.LeaderboardOptions(data_dir=data, judge="scripted-judge"))
    assert [row.model for row in board.rows] == ["scripted-firm", "scripted-caving"]
    capsys.readouterr()
    assert (
        main(["leaderboard", "--json", "--judge", "scripted-judge", "--data-dir", str(data)]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert [(r["model"], r["index"]) for r in printed] == [
        (row.model, None if row.index is None else round(row.index, 2)) for row in board.rows
    ]
    folder, _charts = aib.write_report(
        aib.ReportOptions(data_dir=data, out=tmp_path / "report", charts=False)
    )
    assert "scripted-firm" in (folder / "LEADERBOARD.md").read_text(encoding="utf-8")
