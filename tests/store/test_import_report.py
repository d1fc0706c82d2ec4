"""The one report of `aib import`: both importers' summaries come from `ImportReport`, each
saying only what it read (turn files and configurations, or Inspect logs) and what it calls a
conversation that did not finish."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from independence_bench.inspect_tasks.log_import import LogImportReport
from independence_bench.legacy.importer import FolderImportReport
from independence_bench.store.import_report import LISTED, ImportReport


def test_a_folder_import_reports_its_files_configurations_and_incomplete_conversations() -> None:
    report = FolderImportReport(
        path=Path("cache"),
        configurations=2,
        files=40,
        runs=Counter({"v2": 3, "v1": 1}),
        items=22,
        judgments=21,
        failed=[f"cfg/run_1/s{i}: cut short" for i in range(LISTED + 2)],
        unscored=["f.json: no verdict"],
        written=Counter({"runs": 4, "completions": 60, "items": 22, "judgments": 21}),
        skipped=[("cfg/run_1/x.json", "not JSON")],
        notes=["cfg: run_2 missing"],
    )
    lines = report.summary_lines(Path("aib-data/store.sqlite"))
    assert lines[:4] == [
        "imported 40 turn files from cache: 2 configurations, 4 runs (v1: 1, v2: 3)",
        "  22 conversations (22 incomplete), 21 judgments (1 unscored) into aib-data/store.sqlite",
        "  new or changed rows: 4 runs, 60 completions, 22 items, 21 judgments",
        "  incomplete: cfg/run_1/s0: cut short",
    ]
    assert lines[3 + LISTED - 1 :] == [
        f"  incomplete: cfg/run_1/s{LISTED - 1}: cut short",
        "  … and 2 more incomplete",
        "  unscored: f.json: no verdict",
        "  note: cfg: run_2 missing",
        "skipped 1 file:",
        "  cfg/run_1/x.json: not JSON",
    ]


def test_a_log_import_reports_its_logs_and_failed_conversations() -> None:
    report = LogImportReport(
        path=Path("logs"),
        logs=1,
        runs=Counter({"adaptive": 1}),
        items=1,
        failed=["7 epoch 1: timeout"],
    )
    assert report.summary_lines() == [
        "imported 1 Inspect log from logs: 1 run (adaptive: 1)",
        "  1 conversation (1 failed), 0 judgments (0 unscored)",
        "  nothing new: every row was already in the store",
        "  failed: 7 epoch 1: timeout",
    ]


def test_both_importers_fill_the_one_report() -> None:
    assert issubclass(FolderImportReport, ImportReport)
    assert issubclass(LogImportReport, ImportReport)
