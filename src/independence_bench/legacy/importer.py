"""Importing result folders of the earlier implementation of this benchmark (`aib import PATH`).

`import_legacy_tree` walks a tree of configuration folders
(``<provider>--<model>…@<effort>-tT``), reads each ``run_<n>`` folder's turn files with
`legacy/format.py`, and writes the run, every completion, every item and every judgment in one
transaction per run folder. Nothing is asked
again: transcripts, replies, reasoning, costs and verdicts are the ones on disk. The names a
model chose (``name_extraction.json``) are kept in the run's config JSON under
``chosen_names``.

Rows are keyed by path and content and keep their original timestamps, so importing the same
tree again writes nothing. A file that cannot be read is reported with its path and skipped;
the rest of its run is still imported.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from independence_bench.engine.admission import (
    Refused,
    admit_completion,
    admit_json,
    admit_turn,
)
from independence_bench.engine.request_keys import run_item_id
from independence_bench.errors import UserError
from independence_bench.legacy.format import (
    UNKNOWN_JUDGE,
    LegacyConfig,
    SkippedFile,
    TurnFile,
    build_transcript,
    judge_completion,
    judgment_of,
    kind_in_suite,
    legacy_request_of_turn,
    legacy_rubric,
    legacy_suite_hash,
    parse_config_folder,
    read_json,
    read_turn_file,
    subject_completion,
    subject_key,
    suite_of_run,
)
from independence_bench.store.import_report import ImportReport
from independence_bench.store.store import ItemRecord, Store
from independence_bench.suites.kinds import kind_named
from independence_bench.text.counts import count_of

NAMES_FILE = "name_extraction.json"
PACKAGE_VERSION = "legacy"
"""Recorded as the runs' package version: the earlier implementation produced them."""
SUITE_VERSION = 1
_RUN_DIR = re.compile(r"^run_(\d+)$")


def run_folders(config_dir: Path) -> list[tuple[int, Path]]:
    """The ``run_<n>`` folders of a configuration folder, by run number."""
    found = []
    for child in config_dir.iterdir():
        match = _RUN_DIR.match(child.name)
        if match and child.is_dir():
            found.append((int(match[1]), child))
    return sorted(found)


def holds_run_folders(path: Path) -> bool:
    """Whether a ``run_<n>`` folder lies anywhere under `path`: a tree of result folders, even
    one `find_configurations` cannot read (configuration folders one level too deep, as a
    model id with a ``/`` left them), is never taken for Inspect logs."""
    return any(_RUN_DIR.match(p.name) and p.is_dir() for p in path.rglob("run_*"))


def find_configurations(path: Path) -> tuple[Path, list[Path]]:
    """(the root stored paths are relative to, the configuration folders) found at `path`.

    `path` may be the folder holding configuration folders (``cache/``), its parent, or one
    configuration folder.
    """
    if not path.is_dir():
        raise UserError(f"{path} is not a folder; give the folder that holds the result folders")
    if run_folders(path):
        return path.parent, [path]
    configs = [c for c in sorted(path.iterdir()) if c.is_dir() and run_folders(c)]
    if not configs and (path / "cache").is_dir():
        return find_configurations(path / "cache")
    if not configs:
        raise UserError(
            f"no result folders under {path}: expected <provider>--<model>@<effort>-t<T>/"
            "run_<n>/<experiment>/<variant>/<mode>/<scenario>.json (see the README)"
        )
    return path, configs


@dataclass
class FolderImportReport(ImportReport):
    """What an import of result folders read, wrote and skipped."""

    configurations: int = 0
    files: int = 0
    """Turn files read and stored."""

    FAILED_AS: ClassVar[str] = "incomplete"

    def read_counts(self) -> tuple[str, ...]:
        return (
            count_of(self.files, "turn file"),
            count_of(self.configurations, "configuration"),
        )


def _read_run(root: Path, run_dir: Path, report: FolderImportReport) -> tuple[list[TurnFile], Any]:
    files: list[TurnFile] = []
    names: Any = None
    for path in sorted(run_dir.rglob("*.json")):
        rel = path.relative_to(root).as_posix()
        if path.name.startswith(".") or path.is_dir():
            continue
        try:
            if path.parent == run_dir and path.name == NAMES_FILE:
                names = admit_json(read_json(path, root), NAMES_FILE)
            else:
                turn = read_turn_file(path, rel, path.relative_to(run_dir).parts, root)
                # Before the run's transaction (no NaN, no depth, …); the verdict is
                # `judgment_of`'s to check: a bad one is stored unscored, its transcript kept.
                admit_json({k: v for k, v in turn.data.items() if k != "judge_scores"}, "it")
                files.append(turn)
        except SkippedFile as exc:
            report.skipped.append((rel, str(exc)))
        except Refused as exc:
            report.skipped.append((rel, str(exc)))
    return files, names


def _model_config(config: LegacyConfig, run_rel: str, names: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": config.model_id,
        "label": config.label,
        "provider": list(config.provider),
        "reasoning_effort": config.reasoning_effort,
        "temperature": config.temperature,
        "imported_from": run_rel,
    }
    if isinstance(names, dict):
        out["chosen_names"] = names
    return out


def import_run_folder(
    store: Store,
    root: Path,
    config: LegacyConfig,
    run_index: int,
    run_dir: Path,
    report: FolderImportReport,
) -> None:
    """Import one ``run_<n>`` folder in one transaction."""
    run_rel = run_dir.relative_to(root).as_posix()
    files, names = _read_run(root, run_dir, report)
    if not files:
        report.notes.append(f"{run_rel}: no readable turn files; run not imported")
        return
    suite_id = suite_of_run(files)
    groups: dict[tuple[str, str, str, str], list[TurnFile]] = defaultdict(list)
    for turn in files:
        kind = kind_in_suite(turn.kind, suite_id)
        groups[(turn.variant, turn.mode, kind, turn.scenario_id)].append(turn)
    written: Counter[str] = Counter()
    with store.transaction():
        run, changed = store.ensure_run(
            model_label=config.label,
            model_id=config.model_id,
            suite_id=suite_id,
            suite_version=SUITE_VERSION,
            suite_hash=legacy_suite_hash(suite_id),
            run_index=run_index,
            model_config=_model_config(config, run_rel, names),
            package_version=PACKAGE_VERSION,
            imported_at=min(turn.timestamp for turn in files),
        )
        written["runs"] += changed
        keys: dict[str, str] = {}
        for turn in files:
            keys[turn.rel] = subject_key(turn)
            written["completions"] += store.put_completion(
                keys[turn.rel],
                config.model_id,
                admit_json(legacy_request_of_turn(config, turn), "the request"),
                admit_completion(subject_completion(turn)),
                imported_at=turn.timestamp,
            )
        for (variant, mode, kind, scenario_id), members in sorted(groups.items()):
            where = f"{run_rel}/{variant}/{mode}/{scenario_id}"
            turns, error = build_transcript(members, keys)
            iid = run_item_id(run, variant, mode, scenario_id)
            status = "failed" if error else "done"
            experiment = kind_named(kind).experiment
            turns = [admit_turn(turn) for turn in turns]  # each reply held to the reply cap
            item = ItemRecord(
                iid, run, variant, mode, scenario_id, kind, experiment, status, error, tuple(turns)
            )
            written["items"] += store.put_item(
                item, imported_at=max(turn.timestamp for turn in members)
            )
            report.count_item(where, error or None)
            _import_judgment(store, iid, kind, members, where, report, written)
    report.written.update(written)
    report.runs[suite_id] += 1
    report.files += len(files)


def _import_judgment(
    store: Store,
    iid: str,
    kind: str,
    members: Sequence[TurnFile],
    where: str,
    report: FolderImportReport,
    written: Counter[str],
) -> None:
    """Store the verdict of an item's judged file (psych batches were judged on question 1)."""
    judged = sorted(
        (t for t in members if t.data.get("judge_scores") is not None),
        key=lambda t: (len(t.humans), t.rel),
    )
    if not judged:
        return
    if len(judged) > 1:
        report.notes.append(
            f"{where}: {count_of(len(judged), 'file')} hold a verdict; the last one is used"
        )
    source = judged[0] if kind == "psych" else judged[-1]
    judge = UNKNOWN_JUDGE
    completion_keys: tuple[str, ...] = ()
    call = judge_completion(source)
    if call is not None:
        key, judge, request, completion = call
        written["completions"] += store.put_completion(
            key, judge, request, admit_completion(completion), imported_at=source.timestamp
        )
        completion_keys = (key,)
    raw = source.data.get("judge_raw_response")
    verdict = judgment_of(
        kind,
        source.data["judge_scores"],
        raw_reply=raw if isinstance(raw, str) else None,
        completion_keys=completion_keys,
    )
    rubric_id, rubric_hash = legacy_rubric(kind)
    report.count_judgment(source.rel, verdict)
    written["judgments"] += store.add_judgment(
        item_id=iid,
        judge_model=judge,
        rubric_id=rubric_id,
        rubric_hash=rubric_hash,
        repeat=0,
        verdict=verdict,
        imported_at=source.timestamp,
    )


def import_configurations(
    store: Store, root: Path, configs: Sequence[Path], labels: Mapping[str, str] | None = None
) -> FolderImportReport:
    """Import every run folder of `configs` (paths stored relative to `root`).

    `labels` maps a folder name to the label its runs are stored under (`labels.py`: the
    published names); other folders are labelled by their name.
    """
    report = FolderImportReport(path=root if len(configs) != 1 else configs[0])
    for config_dir in configs:
        config = parse_config_folder(config_dir.name)
        if labels and config_dir.name in labels:
            config = replace(config, label=labels[config_dir.name])
        if config.temperature is None:
            report.notes.append(
                f"{config_dir.name}: name not <provider>--<model>[+pin]@<effort>-t<T>; "
                f"imported as model {config.model_id} with unknown settings"
            )
        runs = run_folders(config_dir)
        numbers = [number for number, _ in runs]
        missing = sorted(set(range(1, max(numbers) + 1)) - set(numbers))
        if missing:
            gaps = ", ".join(f"run_{n}" for n in missing)
            report.notes.append(f"{config_dir.name}: {gaps} missing; imported the other runs")
        before = sum(report.runs.values())
        for number, run_dir in runs:
            import_run_folder(store, root, config, number, run_dir, report)
        report.configurations += sum(report.runs.values()) > before
    return report


def import_legacy_tree(path: Path, store: Store) -> FolderImportReport:
    """Import the result tree at `path` into `store`, each configuration labelled by its folder
    name; see the module docstring. `workflows.imports.import_results` (the Python API of
    `aib import`) also names them as published."""
    root, configs = find_configurations(path)
    return import_configurations(store, root, configs)
