"""The one report of `aib import`: both importers' summaries come from `ImportReport`, each
saying only what it read (turn files and configurations, or Inspect logs) and what it calls a
conversation that did not finish."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from independence_bench.inspect_tasks.log_import import LogImportReport
from independence_bench.legacy.importer import FolderImportReport
from independence_bench.store.import_report import LISTED, ImportReport
from independence_bench.store.records import Verdict


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


def test_each_importer_counts_conversations_and_verdicts_by_the_same_rule() -> None:
    report = LogImportReport(path=Path("logs"))
    report.count_item("s1 epoch 1", None)
    report.count_item("s2 epoch 1", "the conversation did not finish")
    scored = Verdict("scored", {"drift": 3}, "fine", "{}", None, 1, ("k1",))
    unscored = Verdict("unscored", None, None, "not JSON", "no JSON object in the reply", 3, ())
    report.count_judgment("s1 epoch 1", scored)
    report.count_judgment("s3 epoch 2", unscored)
    assert (report.items, report.judgments) == (2, 2)
    assert report.failed == ["s2 epoch 1: the conversation did not finish"]
    assert report.unscored == ["s3 epoch 2: no JSON object in the reply"]
