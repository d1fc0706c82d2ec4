"""`aib import`: result folders of the earlier implementation, or Inspect logs of our tasks,
written into the store.

An Inspect log file, or a folder of them, goes to `inspect_tasks/log_import.py`; anything else
is read as the earlier implementation's results.

`legacy/importer.py` reads the folders and writes each run folder in one transaction;
`legacy/labels.py` names the configurations as they were published. This adds the options
and the refusal when nothing could be read; the summary lines the terminal shows are the
report's own (`store/import_report.py`, one for both kinds of import).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from independence_bench.errors import UserError
from independence_bench.inspect_tasks.log_import import (
    LogImportReport,
    find_logs,
    holds_inspect_logs,
    import_logs,
)
from independence_bench.legacy.importer import (
    FolderImportReport,
    find_configurations,
    holds_run_folders,
    import_configurations,
)
from independence_bench.legacy.labels import (
    bare_model_id,
    models_yaml_beside,
    published_labels,
    unnamed,
)
from independence_bench.store.import_report import ImportReport
from independence_bench.store.store import STORE_FILENAME, Store
from independence_bench.text.counts import count_of
from independence_bench.workflows import Echo


@dataclass(frozen=True)
class ImportOptions:
    path: Path
    data_dir: Path = Path("aib-data")
    labels: Path | None = None
    """The earlier implementation's models.yaml naming the configurations; default: the
    `configs/models.yaml` beside the `cache/` folder, when there is one."""


def import_results(options: ImportOptions) -> FolderImportReport:
    """Import the result folders under `options.path` into the store: transcripts, verdicts and
    costs, each run folder in one transaction, named as published when a models.yaml names the
    configurations (its note is added to the report). The Python API of `aib import`."""
    root, configs = find_configurations(options.path)
    folders = [c.name for c in configs]
    names_file = options.labels or models_yaml_beside(configs)
    labels = published_labels(names_file, folders) if names_file else {}
    with Store(options.data_dir) as store:
        report = import_configurations(store, root, configs, labels)
    if names_file is not None:
        bare = sum(1 for folder, label in labels.items() if label == bare_model_id(folder))
        unlisted = f" ({bare} not in the file, by their bare model id)" if bare else ""
        report.notes.append(
            f"labels from {names_file}: {len(labels)} of "
            f"{count_of(len(folders), 'configuration')} named as published{unlisted}"
            + "".join(f"; {f} keeps its folder name" for f in unnamed(labels, folders))
        )
    return report


def import_command(options: ImportOptions, *, echo: Echo) -> ImportReport:
    """`aib import`: import, print the summary and every skipped file; fail if nothing was read.
    Inspect logs (a `.eval`/`.json` log, or a folder of them that holds no `run_<n>` folder) go
    to `import_inspect_logs`."""
    if holds_inspect_logs(options.path):
        return import_inspect_logs(options, echo=echo)
    try:
        report = import_results(options)
    except UserError:
        folder = options.path.is_dir()
        if folder and not holds_run_folders(options.path) and any(options.path.rglob("*.json")):
            return import_inspect_logs(options, echo=echo)
        raise
    for line in report.summary_lines(options.data_dir / STORE_FILENAME):
        echo(line)
    if not report.files:
        raise UserError(f"nothing imported from {options.path}: no turn file could be read")
    return report


def import_inspect_logs(options: ImportOptions, *, echo: Echo) -> LogImportReport:
    """`aib import` of Inspect logs: import, print the summary; fail if no log was read."""
    logs = find_logs(options.path)
    with Store(options.data_dir) as store:
        report = import_logs(store, options.path, logs)
        store_path = store.path
    for line in report.summary_lines(store_path):
        echo(line)
    if not report.logs and report.skipped:
        raise UserError(
            f"nothing imported from {options.path}: every log or sample was skipped, each for "
            "the reason listed above"
        )
    if not report.logs:
        raise UserError(
            f"nothing imported from {options.path}: no Inspect log written by an "
            "independence_bench task (inspect eval independence_bench/v2 …) was found"
        )
    return report
