"""Which conversations a task runs: a suite narrowed by the task parameters as `aib run` does."""

from __future__ import annotations

from collections.abc import Sequence

from independence_bench.suites.selection import Selection, split_list
from independence_bench.suites.suite import Suite, load_suite

Names = str | Sequence[str]
"""A task parameter naming some of a kind: `a,b` (Python) or a list (Inspect's `-T x=a,b`)."""


def as_text(names: Names) -> str:
    """`names` as one comma-separated string, as `aib run`'s options take them."""
    return names if isinstance(names, str) else ",".join(str(name) for name in names)


def narrowed_suite(
    suite_id: str, *, variants: Names = "", modes: Names = "", scenarios: Names = ""
) -> Suite:
    """The suite as `aib run --scenarios … --variants … --modes …` narrows it."""
    selection = Selection.parse(None, as_text(variants), as_text(modes))
    return load_suite(suite_id).narrowed(split_list(as_text(scenarios)), selection)
