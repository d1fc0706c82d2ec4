"""Per-metric discrimination: for each scenario and each metric it feeds, whether it separates
models, as pure functions of measured items.

Each model's mean on a (scenario, metric) pair is the mean of its items' normalised values
(0–1, 1 = most independent, `scoring.normalised_metrics`) over every run. Over the models:

- `share_at_max`: the share whose mean is at the metric's best value (1), i.e. every run there.
  At `CEILING_SHARE` or more the metric is *ceilinged* on that scenario: it cannot tell those
  models apart, so it only dilutes the index's differences.
- `sd` and `spread`: the standard deviation (over models, not a sample estimate) and the
  max − min of the models' means.
- `item_rest`: Pearson's r between the models' means and their *rest index*, the index
  computed from every item except this scenario's (the corrected item–total correlation: the
  scenario does not correlate with itself). None with fewer than 3 models or when either side
  does not vary — every model at the maximum gives None, never NaN.

The rest index aggregates like `scoring.score_model` (per run the mean of each metric over
its items, then the mean over runs). A term left without any measured part once the scenario
is removed (name and gender alone feeding identity autonomy) is dropped and the remaining
weights rescaled to sum to 1, so every scenario gets a corrected correlation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev

from independence_bench.scoring.scoring import (
    METRIC_KEYS,
    ItemMetrics,
    get_formula,
    normalised_metrics,
)
from independence_bench.stats.core import pearson

CEILING_SHARE = 0.8
"""A metric is ceilinged on a scenario when at least this share of models is at its maximum."""
AT_MAX = 1.0 - 1e-9
"""A normalised mean this high counts as at the maximum (float sums of 1.0 may fall short)."""

ScenarioKey = tuple[str, str]
"""(kind, scenario id), as `analysis.item_difficulty` groups items."""


class _Sum:
    """A running sum of native metric values and how many items gave one."""

    __slots__ = ("count", "value")

    def __init__(self) -> None:
        self.value, self.count = 0.0, 0

    def add(self, value: float) -> None:
        self.value += value
        self.count += 1


class _RunSums:
    """One model's run: per metric, the sums over all its items and per scenario, so that the
    rest without a scenario is one subtraction."""

    def __init__(self) -> None:
        self.total: dict[str, _Sum] = defaultdict(_Sum)
        self.parts: dict[ScenarioKey, dict[str, _Sum]] = defaultdict(lambda: defaultdict(_Sum))

    def add(self, scenario: ScenarioKey, metric: str, value: float) -> None:
        self.total[metric].add(value)
        self.parts[scenario][metric].add(value)

    def rest_means(self, left_out: ScenarioKey) -> dict[str, float]:
        """Per metric, the mean over this run's items outside `left_out` (when any)."""
        part = self.parts.get(left_out, {})
        means = {}
        for metric, total in self.total.items():
            removed = part.get(metric)
            count = total.count - (removed.count if removed else 0)
            if count:
                means[metric] = (total.value - (removed.value if removed else 0.0)) / count
        return means


@dataclass(frozen=True)
class MetricDiscrimination:
    """One metric on one scenario across models."""

    kind: str
    scenario_id: str
    metric: str
    n_models: int
    share_at_max: float
    sd: float
    spread: float
    item_rest: float | None
    """Correlation of the models' means with their index without this scenario."""

    @property
    def ceilinged(self) -> bool:
        return self.share_at_max >= CEILING_SHARE


def rest_index(metrics: Mapping[str, float], formula: str) -> float | None:
    """0–100 from metric means on native scales, over the formula's terms that have a measured
    part, their weights rescaled to sum to 1; None when no term has one."""
    shares = [
        (term.weight, share)
        for term in get_formula(formula).terms
        if (share := term.share(metrics)) is not None
    ]
    total = sum(weight for weight, _ in shares)
    if not total:
        return None
    return 100.0 * sum(weight * share for weight, share in shares) / total


def _rest_metrics(runs: Mapping[int, _RunSums], left_out: ScenarioKey) -> dict[str, float]:
    """A model's metric means without `left_out`: per run means, then the mean over runs."""
    per_run: dict[str, list[float]] = defaultdict(list)
    for sums in runs.values():
        for metric, mean in sums.rest_means(left_out).items():
            per_run[metric].append(mean)
    return {key: fmean(per_run[key]) for key in METRIC_KEYS if per_run.get(key)}


def metric_discrimination(
    measured: Sequence[ItemMetrics], formula: str
) -> dict[ScenarioKey, tuple[MetricDiscrimination, ...]]:
    """Per (kind, scenario id), one row per metric the scenario feeds, in `METRIC_KEYS` order."""
    normalised: dict[ScenarioKey, dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    runs: dict[str, dict[int, _RunSums]] = defaultdict(lambda: defaultdict(_RunSums))
    for item in measured:
        scenario = (item.kind, item.scenario_id)
        for key, value in normalised_metrics(item.kind, item.metrics).items():
            normalised[scenario][key][item.model].append(value)
        for key, value in item.metrics.items():
            runs[item.model][item.run].add(scenario, key, value)
    table: dict[ScenarioKey, tuple[MetricDiscrimination, ...]] = {}
    for scenario, by_metric in sorted(normalised.items()):
        rest = {model: rest_index(_rest_metrics(r, scenario), formula) for model, r in runs.items()}
        rows = []
        for metric in (key for key in METRIC_KEYS if key in by_metric):
            means = {model: fmean(values) for model, values in by_metric[metric].items()}
            paired = [(mean, r) for m, mean in sorted(means.items()) if (r := rest[m]) is not None]
            rows.append(
                MetricDiscrimination(
                    kind=scenario[0],
                    scenario_id=scenario[1],
                    metric=metric,
                    n_models=len(means),
                    share_at_max=sum(v >= AT_MAX for v in means.values()) / len(means),
                    sd=pstdev(means.values()),
                    spread=max(means.values()) - min(means.values()),
                    item_rest=pearson([mean for mean, _ in paired], [r for _, r in paired]),
                )
            )
        table[scenario] = tuple(rows)
    return table
