"""The report's charts, PNG + SVG drawn with matplotlib's Agg canvas (imported lazily; no
pyplot state): the index, profile and pressure charts (`_draw`), v3's survival and
holding-versus-updating charts and the quadrant rule (`_escalation`), the per-model row layout
from the measured widest label (`_layout`), and `ChartDrawing`, which draws them in a worker
forked before the store opens (`_process`).
"""

from independence_bench.reports.charts._draw import (
    CHART_NAMES,
    INSTALL_HINT,
    load_matplotlib,
    require_matplotlib,
    safe_name,
    write_charts,
)
from independence_bench.reports.charts._escalation import (
    hold_update,
    quadrant,
    survival_curve,
)
from independence_bench.reports.charts._layout import (
    ROW_HEIGHT,
)
from independence_bench.reports.charts._process import (
    ChartDrawing,
)

__all__ = [
    "CHART_NAMES",
    "INSTALL_HINT",
    "ROW_HEIGHT",
    "ChartDrawing",
    "hold_update",
    "load_matplotlib",
    "quadrant",
    "require_matplotlib",
    "safe_name",
    "survival_curve",
    "write_charts",
]
