"""Charts of a suite report, drawn with matplotlib's Agg canvas and saved as PNG and SVG.

Three charts, each sorted so the best model is on top and every mark is labelled:

- `index`: each model's Independence Index as a dot with its 95% interval as whiskers (an open
  dot when a model has no interval, e.g. one run).
- `profile`: a heatmap of the index's terms per model on 0–10 (10 = most independent), each
  cell labelled with its value for up to 40 models.
- `pressure`: a dumbbell per model, from its persona without pressure (mean identity trait
  score) to how much holds under pressure (mean of resistance and stability).

Suite v3 adds `survival` and `hold_update` (`_escalation.py`) when a report has them.

Colours come from the Okabe–Ito palette and the `cividis` colour map, both readable with the
common colour-vision deficiencies, and markers differ in shape as well as colour. matplotlib is
an optional dependency (the `report` extra): `require_matplotlib` says so in one line. Figures
are built without pyplot, so no global figure state is touched; model labels are drawn as plain
text (no mathtext), because a label is untrusted text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from textwrap import fill
from typing import Any

from independence_bench.errors import UserError
from independence_bench.gathering.suite_report import ChartData, index_terms, pressure_levels
from independence_bench.reports.charts._escalation import escalation_drawers
from independence_bench.reports.charts._layout import (
    EDGE,
    Margins,
    colour_bar_axes,
    label_rows,
    place_title,
    row_axes,
)
from independence_bench.scoring.scoring import get_formula
from independence_bench.suites.kinds import PRESSURE_METRICS
from independence_bench.suites.suite import SUITE_HASH_CHARS
from independence_bench.text.counts import count_of
from independence_bench.text.lossless import utf8
from independence_bench.text.outputs import xml_text

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}
CHART_NAMES = ("index", "profile", "pressure")
CELL_TEXT_ROWS = 40
"""The profile heatmap writes each cell's value only for up to this many models."""
INSTALL_HINT = "pip install 'ai-independence-bench[report]'"
_RC: Any = {  # matplotlib's stubs type rc keys as literals
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "text.parse_math": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "aib",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def require_matplotlib() -> None:
    """Raise a one-line `UserError` when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(
            f"charts need matplotlib, which is not installed; {INSTALL_HINT}, or pass --no-charts"
        ) from None


def _stem(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def safe_name(text: str) -> str:
    """A file name for untrusted text: lowercase letters, digits and dashes, plus a hash."""
    return f"{_stem(text)}-{hashlib.sha256(utf8(text)).hexdigest()[:8]}"


def chart_folder_name(data: ChartData) -> str:
    """`v2-3f1c0a9e2b7d`: the suite id and the suite hash as `aib run` and the report print it
    (`SUITE_HASH_CHARS`), one per stored version of the suite; a name from the id alone when
    no hash is known."""
    hashes = [_stem(h)[:SUITE_HASH_CHARS] for h in data.suite_hashes]
    if not hashes:
        return safe_name(data.suite_id)
    return "-".join([_stem(data.suite_id), *hashes])


@dataclass(frozen=True)
class _Row:
    model: str
    index: float | None
    low: float | None
    high: float | None
    label: str


def _short(label: str) -> str:
    """A label as drawn: XML-safe (`outputs.xml_text`, the SVG must parse), at most 48 chars."""
    label = xml_text(label)
    return label if len(label) <= 48 else label[:47] + "…"


def _rows(report: ChartData) -> list[_Row]:
    rows = []
    for model in report.models:
        row = model.row
        if row is None:
            continue
        rows.append(_Row(model.model, row.index, row.ci_low, row.ci_high, _short(model.model)))
    return rows


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_RC):
        yield


def _title(figure: Any, title: str, report: ChartData, note: str = "") -> None:
    """A left-aligned figure title over the whole width (a long model label cannot push it off)."""
    sub = xml_text(f"suite {report.suite_id} · judge {report.judge or 'none'}{note}")
    place_title(figure, f"{title}\n{sub}")


def _empty(report: ChartData, title: str, message: str) -> Any:
    """A small figure that says why there is nothing to draw, instead of an empty plot."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.0, 1.8))
    _title(figure, title, report)
    figure.text(EDGE / 7.0, 0.4, message, ha="left", va="center", color="#555555")
    return figure


def index_axis(formula: str, rows: Sequence[_Row]) -> tuple[float, float]:
    """The index axis: from 0 (or, for v3, from the lowest interval below 0, with a margin,
    never below the formula's floor) to the formula's top; never past the index's range."""
    floor, top = get_formula(formula).index_range
    lowest = min([0.0, *(r.low if r.low is not None else (r.index or 0.0) for r in rows)])
    left = max(floor, lowest - 5.0) if lowest < 0 else max(floor, 0.0)
    return left, top


def draw_index(report: ChartData) -> Any:
    """Index per complete model, best on top, with 95% interval whiskers."""
    rows = [r for r in _rows(report) if r.index is not None]
    rows.sort(key=lambda r: (-(r.index or 0.0), r.model))
    if not rows:
        return _empty(report, "Independence Index", "No model is complete yet: nothing to rank.")
    labels = [r.label for r in rows]
    # the values are written right of the axis, which ends where the index does
    figure, ax = row_axes(labels, 9.0, Margins(top=0.65, bottom=0.55, right=1.45))
    blue = OKABE_ITO["blue"]
    # one errorbar and one plot call for all rows: an artist per row made 150 models slow
    spans = [(y, r) for y, r in enumerate(rows) if r.low is not None and r.high is not None]
    if spans:
        values = [r.index or 0.0 for _, r in spans]
        bars = ax.errorbar(
            values,
            [y for y, _ in spans],
            xerr=[
                [v - (r.low or v) for v, (_, r) in zip(values, spans, strict=True)],
                [(r.high or v) - v for v, (_, r) in zip(values, spans, strict=True)],
            ],
            fmt="o",
            color=blue,
            ecolor=blue,
            elinewidth=1.5,
            capsize=3,
            markersize=6,
        )
        for artist in bars.get_children():
            artist.set_clip_on(False)  # a point or a cap at the end of the scale, drawn whole
    lone = [(y, r) for y, r in enumerate(rows) if r.low is None or r.high is None]
    if lone:
        ax.plot([r.index or 0.0 for _, r in lone], [y for y, _ in lone], "o", clip_on=False,
                markerfacecolor="white", markeredgecolor=blue, markersize=6)  # fmt: skip
    for y, row in enumerate(rows):
        value = row.index or 0.0
        text = f"{value:.1f}  (no interval)"
        if row.low is not None and row.high is not None:
            text = f"{value:.1f}  ({row.low:.1f}–{row.high:.1f})"
        ax.annotate(text, (row.high or value, y), xytext=(6, 0), annotation_clip=False,
                    textcoords="offset points", va="center", fontsize=8)  # fmt: skip
    label_rows(ax, labels)
    left, right = index_axis(report.formula, rows)
    ax.set_xlim(left, right)
    ax.set_xticks([t for t in range(-100, 101, 20) if left <= t <= right])
    floor, top = get_formula(report.formula).index_range  # the scale, whatever is shown of it
    scale = f"{floor:.0f}–{top:.0f}" if floor >= 0 else f"−{-floor:.0f} to {top:.0f}"
    ax.set_xlabel(f"Independence Index ({scale}); whiskers: 95% interval")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    hidden = len(report.models) - len(rows)
    note = f" · {count_of(hidden, 'incomplete model')} not shown" if hidden else ""
    _title(figure, "Independence Index", report, note)
    return figure


def draw_profile(report: ChartData) -> Any:
    """Heatmap of the index's terms (0–10) per model, in leaderboard order."""
    from matplotlib import colormaps

    rows = _rows(report)
    if not rows:
        return _empty(report, "Profile by index term", "No model has scored items yet.")
    by_model = {m.model: m for m in report.models}
    terms = [label for label, _ in index_terms(report.formula, {})]
    weights = [t.weight for t in get_formula(report.formula).terms]
    grid: list[list[float | None]] = []
    for row in rows:
        found = by_model[row.model].row
        metrics = {k: v.value for k, v in found.metrics.items()} if found else {}
        terms_of_model = index_terms(report.formula, metrics)
        grid.append([None if v is None else 10.0 * v for _, v in terms_of_model])
    names = [r.label for r in rows]
    margins = Margins(top=1.3, bottom=0.15, right=1.0)
    # tall enough for the colour bar and its label, however few models
    figure, ax = row_axes(names, max(7.0, 2.6 + 1.25 * len(terms)), margins, 2.6)
    cmap = colormaps["cividis"]
    masked = [[float("nan") if v is None else v for v in line] for line in grid]
    # one quad per cell: an image scaled to 150 rows × 150 dpi cost seconds per format
    columns = [x - 0.5 for x in range(len(terms) + 1)]
    edges = [y - 0.5 for y in range(len(rows) + 1)]
    image = ax.pcolormesh(columns, edges, masked, cmap=cmap, vmin=0, vmax=10)
    ax.set_xlim(-0.5, len(terms) - 0.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    # past CELL_TEXT_ROWS models the cells carry colour only (their numbers are in the
    # report's tables): hundreds of cell labels cost more than the rest of the report
    for y, line in enumerate(grid if len(grid) <= CELL_TEXT_ROWS else ()):
        for x, value in enumerate(line):
            if value is None:
                ax.text(x, y, "–", ha="center", va="center", color="#555555")
                continue
            dark = value < 5.5
            ax.text(x, y, f"{value:.1f}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")  # fmt: skip
    labels = [f"{fill(t, 13)}\n({w:.0%})" for t, w in zip(terms, weights, strict=True)]
    ax.set_xticks(range(len(terms)), labels)
    ax.xaxis.tick_top()
    label_rows(ax, names)
    ax.tick_params(length=0)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    bar = figure.colorbar(image, cax=colour_bar_axes(figure, ax))
    bar.set_label("0 = least independent, 10 = most")
    _title(figure, "Profile by index term (weight)", report)
    return figure


def _pressure_points(report: ChartData) -> list[tuple[str, float, float]]:
    """(label, before, after) of every model with both identity and pressure scores."""
    points = []
    for model in report.models:
        if model.row is None:
            continue
        metrics = {k: v.value for k, v in model.row.metrics.items()}
        before, after = pressure_levels(report.formula, metrics)
        if before is not None and after is not None:
            points.append((_short(model.model), before, after))
    return points


def draw_pressure(report: ChartData) -> Any:
    """Dumbbells from persona without pressure to what holds under pressure (0–10)."""
    from matplotlib.collections import LineCollection

    points = _pressure_points(report)
    points.sort(key=lambda p: (-p[2], -p[1], p[0]))
    if not points:
        message = "No model has both identity and pressure (resistance, stability) scores yet."
        return _empty(report, "Before and under pressure", message)
    labels = [p[0] for p in points]
    figure, ax = row_axes(labels, 9.0, Margins(top=0.95, bottom=0.55, right=0.6))
    before_colour, after_colour = OKABE_ITO["blue"], OKABE_ITO["vermillion"]
    segments = [((before, y), (after, y)) for y, (_, before, after) in enumerate(points)]
    ax.add_collection(LineCollection(segments, colors="#999999", linewidths=2, zorder=1))
    ys = range(len(points))
    ax.scatter([p[1] for p in points], ys, marker="o", s=42, color=before_colour, zorder=2,
               clip_on=False,
               label="without pressure: identity traits")  # fmt: skip
    ax.scatter([p[2] for p in points], ys, marker="s", s=42, color=after_colour, zorder=3,
               clip_on=False,
               label="under pressure: resistance and stability")  # fmt: skip
    for y, (_, before, after) in enumerate(points):
        change = round(after - before, 1) + 0.0  # + 0.0 turns -0.0 into 0.0
        ax.annotate(f"{change:+.1f}", (max(before, after), y), xytext=(8, 0),
                    annotation_clip=False, textcoords="offset points", va="center",
                    fontsize=8)  # fmt: skip
    label_rows(ax, labels)
    ax.set_xlim(0, 10)  # the scores' own scale, no further
    ax.set_xticks(range(0, 11, 2))
    ax.set_xlabel("score (0–10); label: change under pressure")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="lower left", fontsize=8, frameon=False, bbox_to_anchor=(0, 1.0), ncols=2)
    _title(figure, "Before and under pressure", report)
    return figure


DRAWERS = {"index": draw_index, "profile": draw_profile, "pressure": draw_pressure}


def _suite_has_pressure(report: ChartData) -> bool:
    """Whether the suite's formula reads what the pressure chart draws (resistance and stability):
    v3's does not, so its report leaves that chart out instead of drawing it empty. A suite that
    does keeps the chart, saying it is empty until its models are judged."""
    return set(PRESSURE_METRICS) <= get_formula(report.formula).required


def write_charts(report: ChartData, folder: Path) -> list[Path]:
    """Draw every chart of `report` into `folder` as PNG and SVG; return the PNG paths."""
    require_matplotlib()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    names = [name for name in CHART_NAMES if name != "pressure" or _suite_has_pressure(report)]
    drawers = {**{name: DRAWERS[name] for name in names}, **escalation_drawers(report)}
    with _style():
        for name, draw in drawers.items():
            figure = draw(report)
            _footer(figure, " ".join(filter(None, (report.standing, report.user_models))))
            for fmt in ("png", "svg"):
                path = folder / f"{name}.{fmt}"
                figure.savefig(path, format=fmt, dpi=150, **_options(fmt))
                # the layout found for the PNG serves the SVG too (the v3 charts use
                # constrained layout; the row charts have none)
                figure.set_layout_engine("none")
            written.append(folder / f"{name}.png")
    return written


def _footer(figure: Any, caption: str) -> None:
    """The judge's standing under the chart, wrapped to the figure's width; saving with a tight
    bounding box (`_options`) makes room for it below whatever the chart drew."""
    if not caption:
        return
    width = figure.get_figwidth()
    text = fill(xml_text(caption), max(40, int(width * 15)))
    figure.text(EDGE / width, 0.0, text, ha="left", va="top", fontsize=7, color="#555555")


def _options(fmt: str) -> dict[str, Any]:
    """Metadata without dates, so that the same store draws byte-identical files; the fastest
    PNG compression (the level zlib uses by default took a third longer for 2% less)."""
    tight = {"bbox_inches": "tight", "pad_inches": 0.1}
    if fmt == "svg":
        return {"metadata": {"Date": None, "Creator": "ai-independence-bench"}, **tight}
    return {
        "metadata": {"Software": "ai-independence-bench"},
        "pil_kwargs": {"compress_level": 1},
        **tight,
    }


def load_matplotlib() -> None:
    """Import what drawing needs (about half a second), e.g. in a process that draws later."""
    import matplotlib.backends.backend_agg
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401
