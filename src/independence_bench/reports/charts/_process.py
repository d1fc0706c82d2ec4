"""Charts drawn in a second process while the rest of the report is gathered and written.

At 150 models the charts take about as long as everything else in `aib report` together, and
they need only the leaderboard (`gathering.suite_report.ChartData`). So `ChartDrawing` forks
one worker before the store is opened, which imports matplotlib at once; each suite's charts are
handed to it the moment that suite's leaderboard exists (`build_reports(on_chart_data=…)`), and
`paths` waits for them after the exports are written. On a two-core machine the charts then
cost little more wall time than the slowest of them.

Where processes cannot be forked (not Linux or macOS… or a platform without `fork`), the
charts are drawn in this process when handed over, as before. Errors raised while drawing
(e.g. an unwritable folder) are raised again by `paths`.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from types import TracebackType

from independence_bench.gathering.suite_report import ChartData
from independence_bench.reports.charts._draw import (
    chart_folder_name,
    load_matplotlib,
    write_charts,
)


class ChartDrawing:
    """A context in which `draw` starts a suite's charts and `paths` collects them."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._pool: Executor | None = None
        self._pending: dict[str, Future[list[Path]]] = {}

    def __enter__(self) -> ChartDrawing:
        if "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
            self._pool.submit(load_matplotlib)  # forks now, before the store is opened
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def draw(self, data: ChartData) -> None:
        """Start drawing one suite's charts into `<out>/charts/<suite>-<hash>/`."""
        folder = self.out / "charts" / chart_folder_name(data)
        if self._pool is None:
            done: Future[list[Path]] = Future()
            done.set_result(write_charts(data, folder))
            self._pending[data.suite_id] = done
        else:
            self._pending[data.suite_id] = self._pool.submit(write_charts, data, folder)

    def paths(self) -> dict[str, list[Path]]:
        """Each suite's chart files (PNG), once drawn; raises what drawing raised."""
        return {suite: pending.result() for suite, pending in self._pending.items()}
