"""AI Independence Bench: does a model keep its own persona, preferences and boundaries?

The Python API, the same library functions the `aib` commands call:

- `run_suite(RunOptions(...))` runs a suite against the models (and judges it) -> `RunResult`
- `judge(JudgeOptions(...))` judges the stored transcripts with a judge -> `RunSummary`
- `build_leaderboard(LeaderboardOptions(...))` ranks the stored models -> `Leaderboard`
- `import_results(ImportOptions(...))` imports the earlier implementation's result folders
- `write_report(ReportOptions(...))` writes LEADERBOARD.md, results.json/.csv and charts

Importing the package loads nothing else: each name is imported from its workflow module when
first asked for (`aib --help` must stay fast), and `__version__` from `version.py` then too.
Nothing inside the package imports this front: it sits above every layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from independence_bench.workflows.imports import ImportOptions, import_results
    from independence_bench.workflows.judge import JudgeOptions
    from independence_bench.workflows.judge import judge_stored as judge
    from independence_bench.workflows.leaderboard import LeaderboardOptions, build_leaderboard
    from independence_bench.workflows.plan import RunOptions
    from independence_bench.workflows.report import ReportOptions, write_report
    from independence_bench.workflows.run import run_benchmark as run_suite

    __version__: str

__all__ = [
    "ImportOptions",
    "JudgeOptions",
    "LeaderboardOptions",
    "ReportOptions",
    "RunOptions",
    "__version__",
    "build_leaderboard",
    "import_results",
    "judge",
    "run_suite",
    "write_report",
]

_API = {
    "RunOptions": ("independence_bench.workflows.plan", "RunOptions"),
    "run_suite": ("independence_bench.workflows.run", "run_benchmark"),
    "JudgeOptions": ("independence_bench.workflows.judge", "JudgeOptions"),
    "judge": ("independence_bench.workflows.judge", "judge_stored"),
    "LeaderboardOptions": ("independence_bench.workflows.leaderboard", "LeaderboardOptions"),
    "build_leaderboard": ("independence_bench.workflows.leaderboard", "build_leaderboard"),
    "ImportOptions": ("independence_bench.workflows.imports", "ImportOptions"),
    "import_results": ("independence_bench.workflows.imports", "import_results"),
    "ReportOptions": ("independence_bench.workflows.report", "ReportOptions"),
    "write_report": ("independence_bench.workflows.report", "write_report"),
}
"""Each public name and the module attribute it is."""


def __getattr__(name: str) -> object:
    """A public name, imported from its workflow on first use; `__version__` from `version.py`."""
    if name == "__version__":
        from independence_bench.version import __version__

        return __version__
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    module, attribute = _API[name]
    return getattr(import_module(module), attribute)
