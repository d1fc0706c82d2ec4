"""Agreement between judgments: Spearman's ρ, Krippendorff's α, mean signed difference.

Pure numpy functions; anything random takes a seed and uses its own `numpy.random.Generator`,
so the same input always gives the same numbers.

- `average_ranks` / `spearman`: rank correlation, ties given the mean of the ranks they span.
- `krippendorff_alpha`: α for reliability data with missing values, with the interval (squared
  difference) or nominal (match / no match) metric. `alpha_estimate` adds a 95% interval from
  resampling units (the judged items) with replacement. This is the one implementation of α:
  inter-judge agreement, test-retest and calibration against a reference all use it.
- `arm_readings`: the control arms' manipulation check, each judge against the arm labels
  (below).
- `paired_agreement`: one judge against a reference on the same items — ρ, α and the mean of
  judge − reference, each with a 95% interval from resampling items (a drawn item brings both
  judges' values, so the comparison stays paired).
- `retest_agreement`: a judge that judged the same items twice, compared with itself.

**Judge calibration** (`calibrate_judges`): how far each judge is from a reference judge on
the items both scored. A judge is compared per *metric*, not per judge field: each item's
judgment becomes metrics through its scenario kind (`scoring.item_metrics`), so an imported
judgment under a legacy rubric and a new one under this version's rubric meet on the same
metric. Two views:

- *Items*: per metric, every item both judges scored, on the 0–1 scale where 1 is most
  independent (`scoring.normalised_metrics`): Spearman's ρ, Krippendorff's α and the mean of
  judge − reference, each with a paired 95% bootstrap interval (`paired_agreement`).
- *Models*: per metric and for the Independence Index, each model's value by the default method
  (`scoring.score_model`) from the shared items only, under either judge, and the Spearman ρ
  of the two judges' values over models: does the judge order the models as the reference
  does, whatever its scale?

Only first judgments (``repeat == 0``) count. Nothing here calls a model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean
from typing import Literal

import numpy as np
import numpy.typing as npt

from independence_bench.scoring.scoring import (
    METRIC_KEYS,
    ItemMetrics,
    Place,
    ScoredItem,
    measure_items,
    normalised_item_metrics,
    score_model,
)
from independence_bench.stats.bootstrap import Floats
from independence_bench.stats.core import ALPHA_RESAMPLES, CONFIDENCE, Estimate, Resampling

AlphaMetric = Literal["interval", "nominal"]
_TINY = 1e-12


def average_ranks(values: Sequence[float] | Floats) -> Floats:
    """Ranks 1..n of `values`; tied values share the mean of the ranks they occupy."""
    array = np.asarray(values, dtype=np.float64)
    _, inverse, counts = np.unique(array, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse.reshape(-1)]


def _pearson_rows(xs: Floats, ys: Floats) -> Floats:
    """Pearson r of each row pair; NaN where a row does not vary."""
    dx = xs - xs.mean(axis=1, keepdims=True)
    dy = ys - ys.mean(axis=1, keepdims=True)
    sxx, syy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1)
    out = np.full(len(xs), np.nan)
    ok = (sxx > _TINY) & (syy > _TINY)
    out[ok] = (dx * dy).sum(axis=1)[ok] / np.sqrt(sxx[ok] * syy[ok])
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's ρ (Pearson r of average ranks); None for < 3 pairs or a side that is constant."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs two sequences of the same length")
    if len(xs) < 3:
        return None
    value = _pearson_rows(average_ranks(xs)[None, :], average_ranks(ys)[None, :])[0]
    return None if np.isnan(value) else float(value)


ALPHA_METHOD = (
    "Krippendorff's alpha (interval metric) on scores rescaled to 0–1; 95% interval from "
    f"resampling the judged items with replacement, {ALPHA_RESAMPLES:,} resamples"
)
"""How every alpha interval is made, as printed beside it (the seed is the user's)."""


@dataclass(frozen=True)
class _Units:
    """What each pairable unit adds to α; rows of a resample are weights over these units."""

    n: Floats
    observed: Floats
    """Per unit, the sum of δ² over ordered pairs of its values, divided by (n − 1)."""
    total: Floats
    total_sq: Floats
    categories: Floats
    """Per unit, how often each distinct value occurs (columns: the distinct values)."""


def _units(rows: Iterable[Sequence[float | None]], metric: AlphaMetric) -> _Units:
    table = [[np.nan if v is None else float(v) for v in row] for row in rows]
    width = max((len(row) for row in table), default=0)
    values = np.full((len(table), width), np.nan)
    for i, row in enumerate(table):
        values[i, : len(row)] = row
    present = ~np.isnan(values)
    n = present.sum(axis=1).astype(np.float64)
    keep = n >= 2  # a value nobody else coded is not pairable
    values, present, n = values[keep], present[keep], n[keep]
    filled = np.where(present, values, 0.0)
    total, total_sq = filled.sum(axis=1), (filled * filled).sum(axis=1)
    distinct = np.unique(values[present])
    categories = (values[:, :, None] == distinct[None, None, :]).sum(axis=1).astype(np.float64)
    if metric == "interval":
        pairs = 2.0 * (n * total_sq - total * total)
    else:
        pairs = n * n - (categories * categories).sum(axis=1)
    observed = pairs / np.maximum(n - 1.0, 1.0)
    return _Units(n, observed, total, total_sq, categories)


def _alpha_weighted(units: _Units, weights: Floats, metric: AlphaMetric) -> Floats:
    """α for each row of `weights` (how often each unit is counted); NaN where undefined."""
    n = weights @ units.n
    if metric == "interval":
        total = weights @ units.total
        expected = 2.0 * (n * (weights @ units.total_sq) - total * total)
    else:
        counts = weights @ units.categories
        expected = n * n - (counts * counts).sum(axis=1)
    out = np.full(len(weights), np.nan)
    ok = (n >= 2) & (expected > _TINY)  # no variation at all: undefined, not perfect
    out[ok] = 1.0 - (n[ok] - 1.0) * (weights @ units.observed)[ok] / expected[ok]
    return out


def krippendorff_alpha(
    units: Iterable[Sequence[float | None]], metric: AlphaMetric = "interval"
) -> float | None:
    """Krippendorff's α = 1 − observed / expected disagreement.

    `units` holds one row per judged unit with one value per coder (judge), None when that coder
    gave no value. Units with fewer than two values are not pairable and are ignored. Returns
    None when no pairable values vary (α is undefined).
    """
    found = _units(units, metric)
    value = _alpha_weighted(found, np.ones((1, len(found.n))), metric)[0]
    return None if np.isnan(value) else float(value)


def _resample(n_units: int, resampling: Resampling) -> tuple[npt.NDArray[np.intp], Floats]:
    """Units drawn with replacement, one resample per row, and as weights: how often each unit
    was drawn in each resample."""
    shape = (resampling.n_resamples, n_units)
    draws = np.random.default_rng(resampling.seed).integers(0, n_units, size=shape)
    weights = np.zeros(shape)
    np.add.at(weights, (np.arange(resampling.n_resamples)[:, None], draws), 1.0)
    return draws, weights


def _estimate(point: float, draws: Floats) -> Estimate:
    """`point` with the central 95% of the defined (not NaN) draws."""
    defined = draws[~np.isnan(draws)]
    if len(defined) == 0:
        return Estimate(point)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return Estimate(point, float(low), float(high))


def alpha_estimate(
    units: Iterable[Sequence[float | None]],
    metric: AlphaMetric = "interval",
    *,
    resampling: Resampling = Resampling(ALPHA_RESAMPLES),
) -> Estimate | None:
    """α with a 95% percentile interval from resampling pairable units with replacement."""
    found = _units(units, metric)
    size = len(found.n)
    point = _alpha_weighted(found, np.ones((1, size)), metric)[0]
    if np.isnan(point):
        return None
    if size < 2:
        return Estimate(float(point))
    _, weights = _resample(size, resampling)
    return _estimate(float(point), _alpha_weighted(found, weights, metric))


@dataclass(frozen=True)
class PairedAgreement:
    """One judge against a reference on the same items (values on one scale)."""

    n_items: int
    spearman: Estimate | None
    """None when either judge gives every item the same value (ρ is undefined)."""
    alpha: Estimate | None
    """Interval α between the two; None when no value varies at all."""
    mean_difference: Estimate
    """Mean of judge − reference: positive when the judge scores higher."""


def paired_agreement(
    judge: Sequence[float],
    reference: Sequence[float],
    *,
    resampling: Resampling = Resampling(ALPHA_RESAMPLES),
) -> PairedAgreement:
    """ρ, α and mean signed difference of `judge` against `reference`, item by item.

    The intervals come from one set of resamples of the items (with replacement): a drawn item
    brings both judges' values, so all three figures are paired and seeded alike.
    """
    if len(judge) != len(reference):
        raise ValueError("paired agreement needs one reference value per judge value")
    if not judge:
        raise ValueError("paired agreement of no items")
    ours, theirs = np.asarray(judge, np.float64), np.asarray(reference, np.float64)
    size = len(ours)
    units = _units(zip(judge, reference, strict=True), "interval")
    alpha = _alpha_weighted(units, np.ones((1, size)), "interval")[0]
    point_rho = spearman(judge, reference)
    point_alpha = None if np.isnan(alpha) else float(alpha)
    difference = float((ours - theirs).mean())
    if size < 2:
        alpha_only = None if point_alpha is None else Estimate(point_alpha)
        rho_only = None if point_rho is None else Estimate(point_rho)
        return PairedAgreement(size, rho_only, alpha_only, Estimate(difference))
    draws, weights = _resample(size, resampling)
    drawn_ours, drawn_theirs = ours[draws], theirs[draws]
    rhos = _pearson_rows(
        np.apply_along_axis(average_ranks, 1, drawn_ours),
        np.apply_along_axis(average_ranks, 1, drawn_theirs),
    )
    alphas = _alpha_weighted(units, weights, "interval")
    return PairedAgreement(
        n_items=size,
        spearman=None if point_rho is None else _estimate(point_rho, rhos),
        alpha=None if point_alpha is None else _estimate(point_alpha, alphas),
        mean_difference=_estimate(difference, (drawn_ours - drawn_theirs).mean(axis=1)),
    )


@dataclass(frozen=True)
class RetestAgreement:
    """How well a judge agrees with itself on items it judged more than once, for one metric."""

    judge: str
    metric: str
    n_items: int
    alpha: Estimate | None
    """Interval alpha over normalised (0–1) values; None when undefined (no variation)."""
    mean_abs_diff: float
    """Mean absolute difference between judgments of one item, as a share of the metric's range
    (0.05 = half a point on a 0–10 scale)."""


def retest_agreement(
    items: Iterable[ScoredItem], *, resampling: Resampling = Resampling(ALPHA_RESAMPLES)
) -> list[RetestAgreement]:
    """Test-retest agreement per judge and metric over items judged more than once.

    An item is one conversation (model, run, variant, mode, scenario); its judgments by the same
    judge are told apart by `repeat`. Values are normalised to 0–1 so that resistance from v1
    (0–2) and boundary (0–10) items can be pooled.
    """
    judgments: dict[tuple[str, Place], dict[int, dict[str, float]]] = defaultdict(dict)
    for item in items:
        judgments[(item.judge, item.place)][item.repeat] = normalised_item_metrics(item)
    rows: dict[tuple[str, str], list[list[float | None]]] = defaultdict(list)
    for (judge, _), by_repeat in judgments.items():
        if len(by_repeat) < 2:
            continue
        repeats = [by_repeat[r] for r in sorted(by_repeat)]
        for metric in sorted({m for judged in repeats for m in judged}):
            rows[(judge, metric)].append([judged.get(metric) for judged in repeats])
    result = []
    for (judge, metric), units in sorted(rows.items()):
        diffs = [
            fmean(abs(a - b) for a, b in combinations([v for v in row if v is not None], 2))
            for row in units
            if sum(v is not None for v in row) >= 2
        ]
        if not diffs:
            continue  # e.g. a name/gender item declined in all but one judgment
        result.append(
            RetestAgreement(
                judge=judge,
                metric=metric,
                n_items=len(diffs),
                alpha=alpha_estimate(units, resampling=resampling),
                mean_abs_diff=fmean(diffs),
            )
        )
    return result


# -- judge calibration against a reference judge --------------------------------------------------

INDEX = "index"
"""The name of the Independence Index among the per-model comparisons."""


@dataclass(frozen=True)
class ModelOrder:
    """Per model, one metric (or the index) under the judge and under the reference."""

    metric: str
    judge_values: Mapping[str, float]
    reference_values: Mapping[str, float]
    """Only models with a value under both judges; native scale (index 0–100)."""
    spearman: float | None
    """ρ over those models; None with fewer than 3 or when one judge's values do not vary."""


@dataclass(frozen=True)
class JudgeCalibration:
    judge: str
    reference: str
    n_items: int
    """Items both judges scored."""
    metrics: Mapping[str, PairedAgreement]
    """Per metric, in `METRIC_KEYS` order: the judge against the reference item by item (0–1
    scale), over the shared items that gave the metric under both."""
    models: tuple[ModelOrder, ...]
    """The index first, then each metric in `METRIC_KEYS` order."""


def calibrate_judges(
    items: Sequence[ScoredItem],
    reference: str,
    formula: str,
    judges: Sequence[str] = (),
    *,
    resampling: Resampling = Resampling(ALPHA_RESAMPLES),
) -> list[JudgeCalibration]:
    """Every judge in `judges` (default: every other judge in `items`) against `reference`.

    A judge that shares no scored item with the reference is left out.
    """
    by_judge: dict[str, dict[Place, ScoredItem]] = defaultdict(dict)
    for item in items:
        if item.repeat == 0:
            by_judge[item.judge][item.place] = item
    theirs = by_judge.get(reference, {})
    chosen = [j for j in (judges or sorted(by_judge)) if j != reference]
    result = []
    for judge in chosen:
        shared = sorted(by_judge.get(judge, {}).keys() & theirs.keys())
        if not shared:
            continue
        ours = [by_judge[judge][key] for key in shared]
        reference_items = [theirs[key] for key in shared]
        result.append(
            JudgeCalibration(
                judge=judge,
                reference=reference,
                n_items=len(shared),
                metrics=_item_agreement(ours, reference_items, resampling),
                models=_model_orders(ours, reference_items, formula),
            )
        )
    return result


def _item_agreement(
    ours: Sequence[ScoredItem], theirs: Sequence[ScoredItem], resampling: Resampling
) -> dict[str, PairedAgreement]:
    pairs: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for mine, other in zip(ours, theirs, strict=True):
        a, b = normalised_item_metrics(mine), normalised_item_metrics(other)
        for metric in a.keys() & b.keys():  # a name/gender item may be declined under one
            pairs[metric][0].append(a[metric])
            pairs[metric][1].append(b[metric])
    return {
        metric: paired_agreement(*pairs[metric], resampling=resampling)
        for metric in METRIC_KEYS
        if metric in pairs
    }


def _model_values(items: Sequence[ScoredItem], formula: str) -> dict[str, dict[str, float]]:
    """model -> metric (and `INDEX`) -> value by the default method."""
    by_model: dict[str, list[ItemMetrics]] = defaultdict(list)
    for found in measure_items(items):
        by_model[found.model].append(found)
    out: dict[str, dict[str, float]] = {}
    for model, measured in sorted(by_model.items()):
        score = score_model(model, measured, formula)
        out[model] = dict(score.metrics)
        if score.index is not None:
            out[model][INDEX] = score.index
    return out


def _model_orders(
    ours: Sequence[ScoredItem], theirs: Sequence[ScoredItem], formula: str
) -> tuple[ModelOrder, ...]:
    mine, other = _model_values(ours, formula), _model_values(theirs, formula)
    orders = []
    for metric in (INDEX, *METRIC_KEYS):
        models = [m for m in mine if metric in mine[m] and metric in other.get(m, {})]
        if not models:
            continue
        judge_values = {m: mine[m][metric] for m in models}
        reference_values = {m: other[m][metric] for m in models}
        rho = spearman(list(judge_values.values()), list(reference_values.values()))
        orders.append(ModelOrder(metric, judge_values, reference_values, rho))
    return tuple(orders)


# -- the manipulation check -------------------------------------------------------------------
#
# The control arms' manipulation check: does each judge read the arms as they were written?
#
# The judge of a control conversation is never told its arm, but two of its fields describe the
# human's follow-up: `new_information` (a specific fact about this case) and `challenge_applies`
# (it counts against the first answer). The arm labels say what they should be: only a strong arm
# brings new information, and a pressure or weak follow-up always counts against the answer (a
# demand to change it does). A strong arm's `challenge_applies` is left out: whether the fact
# counts against the answer depends on which answer the model gave. Low agreement means either the
# judge misreads or an arm leaks (a weak arm read as new information should be rewritten). Only
# first judgments are counted; a repeat would count one reading twice.


@dataclass(frozen=True)
class ArmReading:
    """One judge's agreement with the arm labels, as shares of its control judgments."""

    judge: str
    items: int
    """Control conversations it judged (first judgments)."""
    new_information: float
    """Share whose `new_information` matches the arm (true only for strong arms)."""
    weak_read_as_new: float | None
    """Share of weak-arm conversations it read as new information (the leak); None without any."""
    challenge_applies: float | None
    """Share of pressure and weak arms it read as counting against the answer; None without any."""


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def arm_readings(items: Iterable[ScoredItem]) -> tuple[ArmReading, ...]:
    """Per judge (sorted), how its control judgments agree with the arms; judges with no control
    judgment carrying both fields are left out."""
    by_judge: dict[str, list[tuple[str, bool, bool]]] = {}
    for item in items:
        arm = item.arm
        scores = item.scores
        if (
            arm is None
            or item.repeat
            or not {"new_information", "challenge_applies"} <= set(scores)
        ):
            continue
        reading = (arm, bool(scores["new_information"]), bool(scores["challenge_applies"]))
        by_judge.setdefault(item.judge, []).append(reading)
    readings = []
    for judge, rows in sorted(by_judge.items()):
        agree = [new == (arm == "strong_argument") for arm, new, _ in rows]
        weak = [new for arm, new, _ in rows if arm == "weak_argument"]
        applies = [applies for arm, _, applies in rows if arm != "strong_argument"]
        share = sum(agree) / len(agree)
        readings.append(ArmReading(judge, len(rows), share, _share(weak), _share(applies)))
    return tuple(readings)
