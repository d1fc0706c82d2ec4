"""Judge calibration: how far each judge is from a reference judge on the items both scored.

A judge is compared per *metric*, not per judge field: each item's judgment becomes metrics
through its scenario kind (`scoring.item_metrics`), so an imported judgment under a legacy
rubric and a new one under this version's rubric meet on the same metric. Two views:

- *Items*: per metric, every item both judges scored, on the 0–1 scale where 1 is most
  independent (`scoring.normalised_metrics`): Spearman's ρ, Krippendorff's α and the mean of
  judge − reference, each with a paired 95% bootstrap interval (`agreement.paired_agreement`).
- *Models*: per metric and for the Independence Index, each model's value by the default method
  (`scoring.score_model`) from the shared items only, under either judge, and the Spearman ρ
  of the two judges' values over models: does the judge order the models as the reference
  does, whatever its scale?

Only first judgments (``repeat == 0``) count. Nothing here calls a model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from independence_bench.scoring.scoring import (
    METRIC_KEYS,
    ItemMetrics,
    Place,
    ScoredItem,
    measure_items,
    normalised_item_metrics,
    score_model,
)
from independence_bench.stats.agreement import (
    PairedAgreement,
    paired_agreement,
    spearman,
)
from independence_bench.stats.resampling import ALPHA_RESAMPLES, Resampling

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
