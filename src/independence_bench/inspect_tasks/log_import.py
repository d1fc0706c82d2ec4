"""`aib import` of Inspect logs (`.eval` or `.json`) written by our tasks, into the store.

Each log is read with Inspect's own `read_eval_log` (the `[inspect]` extra; imported only
here, when a log is given). Every epoch of a log becomes one run of the subject model (its
Inspect name is the label), numbered after the runs the store already holds for that label
and suite; the run's configuration records the log's eval id and epoch, so importing the same
log again finds the same runs and writes nothing. Each sample becomes an item with its
transcript, each turn's completion (request, reply, tokens, cost and latency as Inspect
recorded them), and the grader's verdict with its judge calls. Nothing is asked again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from independence_bench.errors import UserError
from independence_bench.inspect_tasks.log_format import (
    SCORER_NAME,
    TASK_MARK,
    TRANSCRIPT_KEY,
    completion_from_json,
)
from independence_bench.legacy.format import digest
from independence_bench.legacy.importer import import_detail_lines, item_key
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord, Verdict
from independence_bench.suites.kinds import kind_named
from independence_bench.suites.suite import load_suite
from independence_bench.text.counts import count_of

LOG_SUFFIXES = (".eval", ".json")
_LISTED = 20


def find_logs(path: Path) -> list[Path]:
    """The Inspect log files at `path`: the file itself, or every `.eval`/`.json` below it."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"{path} does not exist; give an Inspect log file or the folder of logs")
    return sorted(p for p in path.rglob("*") if p.suffix in LOG_SUFFIXES and p.is_file())


def holds_inspect_logs(path: Path) -> bool:
    """Whether `path` is an Inspect log file or a folder with `.eval` logs (`.json` logs too
    when no earlier result folders are there: `aib import` then reads it as Inspect logs)."""
    if path.is_file():
        return path.suffix in LOG_SUFFIXES
    return path.is_dir() and any(path.rglob("*.eval"))


@dataclass
class LogImportReport:
    """What an import of Inspect logs read, wrote and skipped."""

    path: Path
    logs: int = 0
    runs: Counter[str] = field(default_factory=Counter)
    items: int = 0
    judgments: int = 0
    failed: list[str] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    written: Counter[str] = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary_lines(self, store_path: Path | None = None) -> list[str]:
        """The report as the CLI prints it."""
        suites = ", ".join(f"{suite}: {count}" for suite, count in sorted(self.runs.items()))
        into = f" into {store_path}" if store_path else ""
        lines = [
            f"imported {count_of(self.logs, 'Inspect log')} from {self.path}: "
            f"{count_of(sum(self.runs.values()), 'run')} ({suites or 'none'})",
            f"  {count_of(self.items, 'conversation')} ({len(self.failed)} failed), "
            f"{count_of(self.judgments, 'judgment')} ({len(self.unscored)} unscored){into}",
        ]
        listed = (("failed", self.failed), ("unscored", self.unscored))
        return lines + import_detail_lines(self.written, listed, self.skipped)


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UserError(
            "reading Inspect logs needs Inspect AI: pip install 'ai-independence-bench[inspect]'"
        ) from None
    return read_eval_log(str(path))


def _timestamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _run_for(
    store: Store, task: Mapping[str, Any], log: Any, epoch: int, when: float
) -> tuple[RunRecord, bool]:
    """The run of `epoch` of this log: the one an earlier import made, else the next number."""
    label = str(log.eval.model)
    origin = {"eval_id": log.eval.eval_id, "epoch": epoch}
    mine = [
        r
        for r in store.runs(task["suite"])
        if r.model_label == label and r.suite_hash == task["suite_hash"]
    ]
    found = [r for r in mine if r.model_config.get("inspect", {}).get("origin") == origin]
    run_index = found[0].run_index if found else max((r.run_index for r in mine), default=0) + 1
    config = {
        "id": label,
        "label": label,
        "inspect": {
            "origin": origin,
            "run_id": log.eval.run_id,
            "task": log.eval.task,
            "task_args": dict(log.eval.task_args),
            "generate_config": log.eval.model_generate_config.model_dump(exclude_none=True),
        },
    }
    return store.ensure_run(
        model_label=label,
        model_id=label,
        suite_id=task["suite"],
        suite_version=int(task.get("suite_version", 1)),
        suite_hash=task["suite_hash"],
        run_index=run_index,
        model_config=config,
        package_version=f"inspect-ai {log.eval.packages.get('inspect_ai', '?')}",
        imported_at=when,
    )


def _completion_key(log: Any, sample: Any, role: str, index: int) -> str:
    return digest(
        {
            "inspect_eval": log.eval.eval_id,
            "sample": sample.id,
            "epoch": sample.epoch,
            "role": role,
            "call": index,
        }
    )


def _turns(
    store: Store,
    log: Any,
    sample: Any,
    record: Mapping[str, Any],
    when: float,
    written: Counter[str],
) -> tuple[TurnRecord, ...]:
    turns = []
    for index, turn in enumerate(record.get("turns") or ()):
        key = _completion_key(log, sample, "subject", index)
        completion = completion_from_json(turn.get("completion") or {})
        request = turn.get("request") or {}
        written["completions"] += store.put_completion(
            key, str(request.get("model", log.eval.model)), request, completion, imported_at=when
        )
        human_key = None
        if isinstance(turn.get("human_completion"), Mapping):
            # Suite adaptive: the user model's call that wrote this human turn.
            human_key = _completion_key(log, sample, "user_model", index)
            asked = turn.get("human_request") or {}
            written["completions"] += store.put_completion(
                human_key,
                str(asked.get("model", "user_model")),
                asked,
                completion_from_json(turn["human_completion"]),
                imported_at=when,
            )
        turns.append(
            TurnRecord(
                str(turn["human"]),
                str(turn["reply"]),
                key,
                bool(turn.get("protocol_ok", True)),
                turn.get("note"),
                turn.get("deviation"),
                human_key,
            )
        )
    return tuple(turns)


def _judgment(
    store: Store,
    log: Any,
    sample: Any,
    item: ItemRecord,
    judged: Mapping[str, Any],
    when: float,
    report: LogImportReport,
    written: Counter[str],
) -> None:
    keys = []
    for index, call in enumerate(judged.get("calls") or ()):
        key = _completion_key(log, sample, "judge", index)
        request = call.get("request") or {}
        completion = completion_from_json(call.get("completion") or {})
        written["completions"] += store.put_completion(
            key,
            str(request.get("model", judged.get("judge"))),
            request,
            completion,
            imported_at=when,
        )
        keys.append(key)
    judge = str(judged.get("judge"))
    if judged.get("judge_form") == "checklist":
        judge += "#checklist"  # as `ModelSpec.judge_label` names the checklist form
    scores = judged.get("scores")
    verdict = Verdict(
        status="scored" if judged.get("status") == "scored" else "unscored",
        scores=scores if isinstance(scores, Mapping) else None,
        reasoning=judged.get("reasoning"),
        raw_reply=judged.get("raw_reply"),
        error=judged.get("error"),
        attempts=int(judged.get("attempts") or len(keys)),
        completion_keys=tuple(keys),
    )
    report.judgments += 1
    if not verdict.scored:
        report.unscored.append(f"{sample.id} epoch {sample.epoch}: {verdict.error}")
    written["judgments"] += store.add_judgment(
        item_id=item.id,
        judge_model=judge,
        rubric_id=str(judged.get("rubric_id")),
        rubric_hash=str(judged.get("rubric_hash")),
        repeat=0,
        verdict=verdict,
        imported_at=when,
    )


def _import_sample(
    store: Store,
    log: Any,
    task: Mapping[str, Any],
    sample: Any,
    when: float,
    report: LogImportReport,
    written: Counter[str],
) -> None:
    run, changed = _run_for(store, task, log, int(sample.epoch), when)
    written["runs"] += changed
    meta = sample.metadata or {}
    record = (sample.store or {}).get(TRANSCRIPT_KEY) or {}
    score = (sample.scores or {}).get(SCORER_NAME)
    judged = dict(score.metadata or {}) if score is not None else {}
    turns = _turns(store, log, sample, record, when, written)
    error = record.get("error")
    if sample.error is not None:
        error = f"Inspect: {sample.error.message}"
    status = "done" if record.get("status") == "done" and sample.error is None else "failed"
    if status == "failed" and not error:
        error = "the conversation did not finish"
    scenario = str(meta.get("scenario"))
    kind = str(judged.get("kind") or _kind_of(task, scenario))
    item = ItemRecord(
        item_key(run, str(meta["variant"]), str(meta["mode"]), scenario),
        run,
        str(meta["variant"]),
        str(meta["mode"]),
        scenario,
        kind,
        kind_named(kind).experiment,
        status,
        error,
        turns,
    )
    written["items"] += store.put_item(item, imported_at=when)
    report.items += 1
    if status == "failed":
        report.failed.append(f"{sample.id} epoch {sample.epoch}: {error}")
    elif judged.get("status") in ("scored", "unscored"):
        _judgment(store, log, sample, item, judged, when, report, written)


def _kind_of(task: Mapping[str, Any], scenario: str) -> str:
    return load_suite(str(task["suite"])).scenario(scenario).kind


def import_log(store: Store, path: Path, report: LogImportReport) -> None:
    """Import one log file in one transaction; a file that is not such a log is skipped."""
    try:
        log = _read(path)
    except UserError:
        raise
    except Exception as exc:  # Inspect's reader raises many types for a file it cannot read
        report.skipped.append((str(path), f"not a readable Inspect log ({type(exc).__name__})"))
        return
    task = (log.eval.metadata or {}).get(TASK_MARK)
    if not isinstance(task, Mapping):
        report.skipped.append((str(path), "not written by an independence_bench task"))
        return
    if not log.samples:
        report.skipped.append((str(path), f"the log holds no samples (status {log.status})"))
        return
    written: Counter[str] = Counter()
    epochs = set()
    counts = (report.items, report.judgments, len(report.failed), len(report.unscored))
    try:
        when = _timestamp(log.eval.created)
        with store.transaction():  # a log is written whole or not at all
            for sample in sorted(log.samples, key=lambda s: (s.epoch, str(s.id))):
                _import_sample(store, log, task, sample, when, report, written)
                epochs.add(sample.epoch)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        report.items, report.judgments = counts[0], counts[1]
        del report.failed[counts[2] :], report.unscored[counts[3] :]
        why = f"{type(exc).__name__}: {exc}"[:200]
        report.skipped.append((str(path), f"malformed task record ({why}); nothing written"))
        return
    report.written.update(written)
    report.runs[str(task["suite"])] += len(epochs)
    report.logs += 1


def import_logs(store: Store, path: Path, logs: Iterable[Path] | None = None) -> LogImportReport:
    """Import every Inspect log at `path` (see the module docstring)."""
    report = LogImportReport(path=path)
    for log_path in logs if logs is not None else find_logs(path):
        import_log(store, log_path, report)
    return report
