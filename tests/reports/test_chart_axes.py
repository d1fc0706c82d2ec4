"""The charts' axes end where their scales do: the index at the formula's range (v2 0–100,
v3 −30–100), the 0–10 metrics at 10, whatever the models scored."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from independence_bench.gathering.suite_report import ChartData, RankedModel
from independence_bench.reports.charts._draw import draw_index, draw_pressure
from independence_bench.scoring.formulas import FORMULAS, get_formula

pytest.importorskip("matplotlib")


def _estimate(value: float) -> Any:
    return SimpleNamespace(value=value, low=value, high=value)


def _chart(formula: str, *rows: tuple[float, float, float]) -> ChartData:
    """Models at these (index, low, high), every metric at 10 or 0 (the ends of the scale)."""
    metrics = {
        key: _estimate(0.0 if key in ("drift", "name_gender_changes") else 10.0)
        for key in get_formula(formula).required
    }
    models = tuple(
        RankedModel(
            f"m{n}",
            SimpleNamespace(index=index, ci_low=low, ci_high=high, metrics=metrics),  # type: ignore[arg-type]
        )
        for n, (index, low, high) in enumerate(rows)
    )
    return ChartData(f"{formula}-suite", "j", formula, models)


def test_each_formula_knows_its_range() -> None:
    assert get_formula("v2").index_range == (0.0, 100.0)
    assert get_formula("v3").index_range == (-30.0, 100.0)
    assert all(f.index_range[1] == 100.0 for f in FORMULAS.values())


@pytest.mark.parametrize(
    ("formula", "rows", "expected"),
    [
        ("v2", ((100.0, 98.0, 100.0), (61.8, 50.0, 70.0)), (0.0, 100.0)),
        ("v3", ((100.0, 97.0, 100.0), (10.0, -12.0, 30.0)), (-17.0, 100.0)),
        ("v3", ((-29.0, -30.0, -28.0),), (-30.0, 100.0)),
    ],
)
def test_the_index_axis_never_runs_past_the_index_range(
    formula: str, rows: tuple[tuple[float, float, float], ...], expected: tuple[float, float]
) -> None:
    figure = draw_index(_chart(formula, *rows))
    assert figure.axes[0].get_xlim() == pytest.approx(expected)


def test_the_0_to_10_axis_ends_at_10() -> None:
    figure = draw_pressure(_chart("v2", (100.0, 100.0, 100.0)))
    assert figure.axes[0].get_xlim() == (0.0, 10.0)
