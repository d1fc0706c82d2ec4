"""`aib import` of Inspect logs (`.eval` or `.json`) written by our tasks, into the store.

Each log is read with Inspect's own `read_eval_log` (the `[inspect]` extra; imported only
here, when a log is given). Every epoch of a log becomes one run of the subject model (its
Inspect name is the label), numbered after the runs the store already holds for that label
and suite; the run's configuration records the log's eval id and epoch, so importing the same
log again finds the same runs and writes nothing. Each sample becomes an item with its
transcript, each turn's completion (request, reply, tokens, cost and latency as Inspect
recorded them), and the grader's verdict with its judge calls. Nothing is asked again.

A log is read only when it is a regular file under the folder given, within its size cap, and
(an `.eval`) its zip members' names and sizes pass (`text/import_files.py`). Every run, sample,
turn, completion, request and verdict passes the checks `aib run`'s replies pass
(`engine/admission.py`: the reply cap, JSON depth, types, ranges, a shipped suite and its
formula, finite numbers) before it is written. A log that fails is skipped with one line; a
sample that fails is skipped with one line naming its log and sample, and the log's other
samples are imported; a verdict that fails is skipped the same way and its transcript kept
(to be judged again).
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from independence_bench.engine.admission import (
    Refused,
    admit_completion,
    admit_json,
    admit_scores,
    admit_suite,
    admit_text,
    admit_turn,
)
from independence_bench.engine.request_keys import digest, run_item_id
from independence_bench.errors import UserError
from independence_bench.inspect_tasks.log_format import (
    SCORER_NAME,
    TASK_MARK,
    TRANSCRIPT_KEY,
    completion_from_json,
)
from independence_bench.store.import_report import ImportReport
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord, Verdict
from independence_bench.suites.kinds import kind_named
from independence_bench.suites.suite import Suite
from independence_bench.text.counts import count_of
from independence_bench.text.import_files import (
    LOG_FILE_CAP,
    ImportFileRefused,
    check_import_file,
    check_zip,
)

LOG_SUFFIXES = (".eval", ".json")


def find_logs(path: Path) -> list[Path]:
    """The Inspect log files at `path`: the file itself, or every `.eval`/`.json` below it
    (whatever they are: `import_log` checks each before reading it)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"{path} does not exist; give an Inspect log file or the folder of logs")
    return sorted(p for p in path.rglob("*") if p.suffix in LOG_SUFFIXES and not p.is_dir())


def holds_inspect_logs(path: Path) -> bool:
    """Whether `path` is an Inspect log file or a folder with `.eval` logs (`.json` logs too
    when no earlier result folders are there: `aib import` then reads it as Inspect logs)."""
    if path.is_file():
        return path.suffix in LOG_SUFFIXES
    return path.is_dir() and any(path.rglob("*.eval"))


@dataclass
class LogImportReport(ImportReport):
    """What an import of Inspect logs read, wrote and skipped."""

    logs: int = 0

    def read_counts(self) -> tuple[str, ...]:
        return (count_of(self.logs, "Inspect log"),)


def _reader() -> Any:
    """Inspect's `read_eval_log`; a `UserError` saying how to install it when it is not."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UserError(
            "reading Inspect logs needs Inspect AI: pip install 'ai-independence-bench[inspect]'"
        ) from None
    return read_eval_log


def _timestamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


@dataclass(frozen=True)
class _OpenLog:
    """One log being imported inside its transaction: the store, the log, what our task
    recorded in it (`TASK_MARK`), its suite and time, and what its samples added so far."""

    store: Store
    path: Path
    log: Any
    task: Mapping[str, Any]
    suite: Suite
    when: float
    report: LogImportReport
    written: Counter[str]
    """Rows inserted or changed, per table, by this log's samples."""


def _run_for(
    store: Store, task: Mapping[str, Any], log: Any, epoch: int, when: float
) -> tuple[RunRecord, bool]:
    """The run of `epoch` of this log: the one an earlier import made, else the next number."""
    label = admit_text(str(log.eval.model), "the model's name", 1000)
    suite_hash = admit_text(task["suite_hash"], "the suite hash", 128)
    origin = admit_json({"eval_id": log.eval.eval_id, "epoch": epoch}, "the log's eval id")
    mine = [
        r
        for r in store.runs(task["suite"])
        if r.model_label == label and r.suite_hash == suite_hash
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
    version = task.get("suite_version", 1)
    return store.ensure_run(
        model_label=label,
        model_id=label,
        suite_id=task["suite"],
        suite_version=version if type(version) is int and 0 < version < 10_000 else 1,
        suite_hash=suite_hash,
        run_index=run_index,
        model_config=admit_json(config, "the run's configuration"),
        package_version=f"inspect-ai {log.eval.packages.get('inspect_ai', '?')}"[:200],
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


def _turns(reading: _OpenLog, sample: Any, record: Mapping[str, Any]) -> tuple[TurnRecord, ...]:
    log, written = reading.log, reading.written
    turns = []
    listed = record.get("turns")
    listed = [] if listed is None else listed
    if not isinstance(listed, list):
        raise Refused("its turns are not a list")
    for index, turn in enumerate(listed):
        key = _completion_key(log, sample, "subject", index)
        completion = admit_completion(completion_from_json(_mapping(turn.get("completion"))))
        request = admit_json(_mapping(turn.get("request")), "a turn's request")
        model = admit_text(str(request.get("model", log.eval.model)), "the model's name", 1000)
        human_call = None
        if turn.get("human_completion") is not None:
            # Suite adaptive: the user model's call that wrote this human turn.
            asked = admit_json(_mapping(turn.get("human_request")), "a user-model request")
            human_call = (
                _completion_key(log, sample, "user_model", index),
                admit_text(str(asked.get("model", "user_model")), "the user model's name", 1000),
                asked,
                admit_completion(completion_from_json(_mapping(turn["human_completion"]))),
            )
        turns.append(
            admit_turn(
                TurnRecord(
                    turn["human"],
                    turn["reply"],
                    key,
                    turn.get("protocol_ok", True) is not False,
                    turn.get("note"),
                    turn.get("deviation"),
                    human_call[0] if human_call is not None else None,
                )
            )
        )
        written["completions"] += reading.store.put_completion(
            key, model, request, completion, imported_at=reading.when
        )
        if human_call is not None:
            human_key, human_model, asked, human_completion = human_call
            written["completions"] += reading.store.put_completion(
                human_key, human_model, asked, human_completion, imported_at=reading.when
            )
    return tuple(turns)


def _mapping(value: Any) -> Mapping[str, Any]:
    """An object of the record; `Refused` when it is there but not an object."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise Refused(f"{type(value).__name__} where an object belongs")
    return value


def _judgment(reading: _OpenLog, sample: Any, item: ItemRecord, judged: Mapping[str, Any]) -> None:
    store, written, when = reading.store, reading.written, reading.when
    calls = []
    for index, call in enumerate(judged.get("calls") or ()):
        request = admit_json(_mapping(_mapping(call).get("request")), "a judge request")
        completion = admit_completion(completion_from_json(_mapping(call.get("completion"))))
        judge_model = str(request.get("model", judged.get("judge")))
        calls.append(
            (_completion_key(reading.log, sample, "judge", index), judge_model, request, completion)
        )
    judge = admit_text(str(judged.get("judge")), "the judge's name", 1000)
    if judged.get("judge_form") == "checklist":
        judge += "#checklist"  # as `judging.forms.judge_label_of` names the checklist form
    scored = judged.get("status") == "scored"
    attempts = judged.get("attempts")
    verdict = Verdict(
        status="scored" if scored else "unscored",
        scores=admit_scores(item.kind, judged.get("scores")) if scored else None,
        reasoning=_optional_text(judged.get("reasoning"), "the verdict's reasoning"),
        raw_reply=_optional_text(judged.get("raw_reply"), "the judge's reply"),
        error=_optional_text(judged.get("error"), "the verdict's error"),
        attempts=attempts if type(attempts) is int and 0 < attempts <= 100 else len(calls),
        completion_keys=tuple(key for key, *_ in calls),
    )
    rubric_id = admit_text(str(judged.get("rubric_id")), "the rubric id", 200)
    rubric_hash = admit_text(str(judged.get("rubric_hash")), "the rubric hash", 200)
    for key, judge_model, request, completion in calls:
        written["completions"] += store.put_completion(
            key, judge_model[:1000], request, completion, imported_at=when
        )
    reading.report.count_judgment(f"{sample.id} epoch {sample.epoch}", verdict)
    written["judgments"] += store.add_judgment(
        item_id=item.id,
        judge_model=judge,
        rubric_id=rubric_id,
        rubric_hash=rubric_hash,
        repeat=0,
        verdict=verdict,
        imported_at=when,
    )


def _optional_text(value: Any, what: str) -> str | None:
    return None if value is None else admit_text(value, what)


def _import_sample(reading: _OpenLog, sample: Any) -> None:
    store, suite, when, report = reading.store, reading.suite, reading.when, reading.report
    epoch = sample.epoch
    if type(epoch) is not int or not 0 < epoch < 1_000_000:
        raise Refused(f"epoch {epoch!r} is not a run number")
    meta = _mapping(sample.metadata)
    variant, mode, scenario_id = (
        admit_text(meta.get(name), name, 200) for name in ("variant", "mode", "scenario")
    )
    try:
        scenario = suite.scenario(scenario_id)
        suite.variant(variant)
    except (KeyError, ValueError, UserError):
        why = f"no scenario {scenario_id!r} or variant {variant!r} in suite {suite.id}"
        raise Refused(why) from None
    if mode not in suite.delivery_modes:
        raise Refused(f"delivery mode {mode!r} is not one of suite {suite.id}'s")
    run, changed = _run_for(store, reading.task, reading.log, epoch, when)
    reading.written["runs"] += changed
    record = _mapping(_mapping(sample.store).get(TRANSCRIPT_KEY))
    score = (sample.scores or {}).get(SCORER_NAME)
    judged = dict(_mapping(score.metadata)) if score is not None else {}
    turns = _turns(reading, sample, record)
    error = _optional_text(record.get("error"), "the conversation's error")
    if sample.error is not None:
        error = admit_text(f"Inspect: {sample.error.message}", "Inspect's error", 2000)
    status = "done" if record.get("status") == "done" and sample.error is None else "failed"
    if status == "failed" and not error:
        error = "the conversation did not finish"
    kind = scenario.kind
    item = ItemRecord(
        run_item_id(run, variant, mode, scenario_id),
        run,
        variant,
        mode,
        scenario_id,
        kind,
        kind_named(kind).experiment,
        status,
        error,
        turns,
    )
    reading.written["items"] += store.put_item(item, imported_at=when)
    failed = error if status == "failed" else None
    report.count_item(f"{sample.id} epoch {sample.epoch}", failed)
    if failed is None and judged.get("status") in ("scored", "unscored"):
        try:  # every check runs before the verdict's first write
            _judgment(reading, sample, item, judged)
        except Refused as exc:
            why = f"its verdict: {exc}; the transcript is kept, to be judged again"
            report.skipped.append((_sample_place(reading.path, sample), why))


def _sample_place(path: Path, sample: Any) -> str:
    return f"{path}: sample {str(sample.id)[:200]} epoch {str(sample.epoch)[:20]}"


def _checked(path: Path, root: Path) -> str | None:
    """Why the file at `path` is not read (`text/import_files.py`), or None."""
    try:
        check_import_file(path, root, LOG_FILE_CAP)
        if path.suffix == ".eval" or zipfile.is_zipfile(path):
            check_zip(path)
    except ImportFileRefused as exc:
        return str(exc)
    return None


def import_log(store: Store, path: Path, report: LogImportReport, root: Path | None = None) -> None:
    """Import one log file in one transaction: each sample that passes the checks (a sample
    that does not is skipped with its line); a file that is not such a log is skipped."""
    read = _reader()
    if (refused := _checked(path, root or path.parent)) is not None:
        report.skipped.append((str(path), refused))
        return
    try:
        log = read(str(path))
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
    try:
        suite = admit_suite(task.get("suite"), task.get("formula"))
        when = _timestamp(log.eval.created)
    except (Refused, TypeError, ValueError) as exc:
        report.skipped.append((str(path), f"{exc}; nothing written"))
        return
    reading = _OpenLog(store, path, log, task, suite, when, report, Counter())
    epochs = set()
    with store.transaction() as db:
        for sample in sorted(log.samples, key=lambda s: (str(s.epoch), str(s.id))):
            if _import_one(reading, db, sample):
                epochs.add(sample.epoch)
    if not epochs:
        return
    report.written.update(reading.written)
    report.runs[suite.id] += len(epochs)
    report.logs += 1


def _import_one(reading: _OpenLog, db: Any, sample: Any) -> bool:
    """Import one sample under a savepoint; roll it back and list it as skipped when it fails
    the checks or is malformed (the log's other samples go on)."""
    report, written = reading.report, reading.written
    counts = (report.items, report.judgments, len(report.failed), len(report.unscored))
    before = Counter(written)
    db.execute("SAVEPOINT sample")
    try:
        _import_sample(reading, sample)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        db.execute("ROLLBACK TO sample")
        db.execute("RELEASE sample")
        report.items, report.judgments = counts[0], counts[1]
        del report.failed[counts[2] :], report.unscored[counts[3] :]
        written.clear()
        written.update(before)
        why = str(exc) if isinstance(exc, Refused) else f"malformed ({type(exc).__name__}: {exc})"
        report.skipped.append((_sample_place(reading.path, sample), why[:300] + "; skipped"))
        return False
    db.execute("RELEASE sample")
    return True


def import_logs(store: Store, path: Path, logs: Iterable[Path] | None = None) -> LogImportReport:
    """Import every Inspect log at `path` (see the module docstring)."""
    report = LogImportReport(path=path)
    root = path if path.is_dir() else path.parent
    for log_path in logs if logs is not None else find_logs(path):
        import_log(store, log_path, report, root)
    return report
