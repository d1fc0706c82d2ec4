"""Which conversations a task runs: a suite narrowed by the task parameters as `aib run` does."""

from __future__ import annotations

from independence_bench.suites.selection import Selection, split_list
from independence_bench.suites.suite import Suite, load_suite


def narrowed_suite(
    suite_id: str, *, variants: str = "", modes: str = "", scenarios: str = ""
) -> Suite:
    """The suite as `aib run --scenarios … --variants … --modes …` narrows it."""
    suite = load_suite(suite_id)
    if split_list(scenarios):
        suite = suite.subset(split_list(scenarios))
    return suite.select(Selection.parse(None, variants, modes))
