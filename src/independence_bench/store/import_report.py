"""What an import into the store read, wrote and skipped: the one report of `aib import`.

Both importers fill it: `legacy/importer.py` (the earlier implementation's result folders,
`FolderImportReport`) and `inspect_tasks/log_import.py` (Inspect logs, `LogImportReport`).
They share the counts of conversations and judgments, the rows written per table, the failed
and unscored entries, the notes and the skipped files, and the summary the terminal prints;
each adds only what it reads (turn files and configurations, or logs).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from independence_bench.store.records import Verdict
from independence_bench.text.counts import count_of

LISTED = 20
"""How many entries of each list (failed, unscored) a summary prints before "… and N more"."""
TABLES = ("runs", "completions", "items", "judgments")
"""The tables an import writes, in the order the summary counts them."""


@dataclass
class ImportReport(ABC):
    """What an import read, wrote and skipped (see the module docstring)."""

    path: Path
    runs: Counter[str] = field(default_factory=Counter)
    """Runs imported, per suite."""
    items: int = 0
    judgments: int = 0
    failed: list[str] = field(default_factory=list)
    """Conversations stored as failed, each with where it is and why."""
    unscored: list[str] = field(default_factory=list)
    written: Counter[str] = field(default_factory=Counter)
    """Rows inserted or changed, per table (all zero when the source was imported before)."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of every file (or part of one) that could not be imported."""
    notes: list[str] = field(default_factory=list)

    FAILED_AS: ClassVar[str] = "failed"
    """What the summary calls a failed conversation."""

    def count_item(self, where: str, failed: str | None) -> None:
        """A conversation stored; `failed`: why it did not finish, None when it did."""
        self.items += 1
        if failed is not None:
            self.failed.append(f"{where}: {failed}")

    def count_judgment(self, where: str, verdict: Verdict) -> None:
        """A verdict stored, scored or not."""
        self.judgments += 1
        if not verdict.scored:
            self.unscored.append(f"{where}: {verdict.error}")

    @abstractmethod
    def read_counts(self) -> tuple[str, ...]:
        """What was read (``3 turn files``), then the counts the summary names before the runs
        (``1 configuration``)."""

    def summary_lines(self, store_path: Path | None = None) -> list[str]:
        """The report as the CLI prints it: the counts, the rows written (or that nothing was
        new), the first `LISTED` failed and unscored entries, the notes, the skipped files."""
        suites = ", ".join(f"{suite}: {count}" for suite, count in sorted(self.runs.items()))
        read, *before_runs = self.read_counts()
        runs = f"{count_of(sum(self.runs.values()), 'run')} ({suites or 'none'})"
        into = f" into {store_path}" if store_path else ""
        lines = [
            f"imported {read} from {self.path}: " + ", ".join([*before_runs, runs]),
            f"  {count_of(self.items, 'conversation')} ({len(self.failed)} {self.FAILED_AS}), "
            f"{count_of(self.judgments, 'judgment')} ({len(self.unscored)} unscored){into}",
        ]
        if any(self.written.values()):
            counts = ", ".join(f"{self.written[table]} {table}" for table in TABLES)
            lines.append(f"  new or changed rows: {counts}")
        else:
            lines.append("  nothing new: every row was already in the store")
        for label, entries in ((self.FAILED_AS, self.failed), ("unscored", self.unscored)):
            lines.extend(f"  {label}: {entry}" for entry in entries[:LISTED])
            if len(entries) > LISTED:
                lines.append(f"  … and {len(entries) - LISTED} more {label}")
        lines.extend(f"  note: {note}" for note in self.notes)
        if self.skipped:
            lines.append(f"skipped {count_of(len(self.skipped), 'file')}:")
            lines.extend(f"  {path}: {why}" for path, why in self.skipped)
        return lines
