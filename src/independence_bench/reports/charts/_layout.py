"""The layout of the per-model charts: one row per model, margins measured, not searched for.

matplotlib's constrained layout finds margins by measuring every tick label of a figure, twice,
and a tick per model is a full `Tick` (two marks, two labels, a grid line). At 150 models that
was most of `aib report`'s time. A row chart knows its shape in advance, so here:

- the figure is `top + rows × ROW_HEIGHT + bottom` inches tall, and the left margin is the
  widest model label, measured once with the font the labels are drawn in
  (`text_to_path`, no renderer needed);
- model labels are plain text artists at each row (`label_rows`), not ticks;
- the y-limits are fixed to the rows, so no autoscaling leaves an empty band.

Both PNG and SVG are saved from the same figure with no layout engine, so they match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROW_HEIGHT = 0.3
"""Inches per model row (21.6 points for 9-point labels)."""
LABEL_SIZE = 9.0
LABEL_PAD = 0.08
"""Inches between a model label and the plot."""
EDGE = 0.1
"""Inches left free at the figure's edges."""


@dataclass(frozen=True)
class Margins:
    """Inches around the plot area, apart from the labels' width on the left."""

    top: float
    bottom: float
    right: float


def label_width(labels: Sequence[str], size: float = LABEL_SIZE) -> float:
    """The width in inches of the widest label, drawn in the charts' font at `size` points."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(family="DejaVu Sans", size=size)
    widest = 0.0
    for label in labels:
        width, _, _ = text_to_path.get_text_width_height_descent(label, font, ismath=False)
        widest = max(widest, width)
    return widest / 72.0


def row_axes(
    labels: Sequence[str], width: float, margins: Margins, min_plot_height: float = 0.0
) -> tuple[Any, Any]:
    """A figure `width` inches wide with one plot area of len(labels) rows, at least
    `min_plot_height` inches tall; (figure, axes).

    Row y is at data y = index (0 at the top); the caller draws into it and calls `label_rows`.
    """
    from matplotlib.figure import Figure

    rows = max(len(labels), 1)
    plot_height = max(rows * ROW_HEIGHT, min_plot_height)
    height = margins.top + plot_height + margins.bottom
    left = EDGE + label_width(labels) + LABEL_PAD
    figure = Figure(figsize=(width, height))
    plot_width = max(width - left - margins.right, 1.0)
    ax = figure.add_axes(
        (left / width, margins.bottom / height, plot_width / width, plot_height / height)
    )
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_yticks([])
    return figure, ax


def label_rows(ax: Any, labels: Sequence[str]) -> None:
    """Each label right-aligned just left of the plot, at its row."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    shift = ScaledTranslation(-LABEL_PAD, 0.0, ax.figure.dpi_scale_trans)
    where = blended_transform_factory(ax.transAxes, ax.transData) + shift
    for y, label in enumerate(labels):
        ax.text(0.0, y, label, transform=where, ha="right", va="center", size=LABEL_SIZE,
                clip_on=False)  # fmt: skip


def place_title(figure: Any, text: str) -> None:
    """A left-aligned title whose first line starts 0.08 inches below the figure's top."""
    height = figure.get_figheight()
    figure.suptitle(text, x=EDGE / figure.get_figwidth(), y=1.0 - 0.08 / height, ha="left",
                    va="top", fontsize=10)  # fmt: skip


def colour_bar_axes(figure: Any, ax: Any) -> Any:
    """Axes for a colour bar right of `ax`, as tall as the plot but at most 3 inches, at its
    top (a bar 45 inches tall beside 150 rows would say nothing more)."""
    width, height = figure.get_figwidth(), figure.get_figheight()
    left, bottom, plot_width, plot_height = ax.get_position().bounds
    bar_height = min(plot_height * height, 3.0)
    top = bottom + plot_height
    x = left + plot_width + 0.15 / width
    return figure.add_axes((x, top - bar_height / height, 0.15 / width, bar_height / height))
