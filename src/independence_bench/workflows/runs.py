"""`aib runs`: what the store holds, run by run, or every failed conversation with its error.

Reads the store only, after checking every page of it (`opening.check_intact`: a damaged
store is the damaged-store line, never a table of what could be read);
`store/run_status.py` decides whether a run is complete and `engine/failures.py` renders the
failed items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from independence_bench.engine.failures import render_failed_items
from independence_bench.reports.format import terminal_width, wrap_notes
from independence_bench.store.opening import check_intact
from independence_bench.store.run_status import render_run_states, run_states
from independence_bench.store.store import Store
from independence_bench.workflows import Echo


@dataclass(frozen=True)
class RunsOptions:
    suite_id: str | None = None
    data_dir: Path = Path("aib-data")
    failed: bool = False
    """List every failed conversation with its full error instead of the runs."""


def runs_command(options: RunsOptions, *, echo: Echo) -> None:
    """`aib runs`: every stored run with its state, or (`failed`) every failed conversation."""
    with Store(options.data_dir, read_only=True) as store:
        # Counts leave most pages unread: a damaged store must not show as a table of them.
        check_intact(store.connection)
        if options.failed:
            echo(render_failed_items(store.items(suite_id=options.suite_id, status="failed")))
        else:
            states = run_states(store, suite_id=options.suite_id)
            echo(wrap_notes(render_run_states(states, terminal_width())))
