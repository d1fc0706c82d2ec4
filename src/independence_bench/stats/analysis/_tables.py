"""Analysis: the tables a user reads, computed as pure functions of judged items.

Every analysis takes a `scoring.ScoredSet`: the stored `ScoredItem`s, a formula, and a choice
of judges: none (the items must come from one judge), one (its judgments only), or several (a
*panel*: each item's metrics are the mean over the judges that scored it). Only first judgments
(``repeat == 0``) count; repeats are for `agreement.retest_agreement`. Nothing here calls a model.

- `rank_models`: index, intervals, rank and rank interval per model.
- `compare_judges`: index per model per judge, spread, and each judge's self-preference.
- `compare_settings`: rows that share a base model but differ in provider pin, reasoning
  effort or temperature (labels read by the caller's `LabelReader`, the label grammar of
  `clients.config.parse_label`), and how far each setting moves the index (paired).
- `item_difficulty`: per scenario, how high models score and how well it separates them, with
  each metric's discrimination from `_discrimination.py`.
- `analyse_configs`: the `full` suite's prompt variant × delivery mode cells against the
  ``neutral`` + ``user_role`` baseline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import Any, Protocol

import numpy as np

from independence_bench.errors import UserError
from independence_bench.scoring.scoring import (
    ItemMetrics,
    Place,
    ScoredItem,
    ScoredSet,
    measure_items,
    normalised_item_metrics,
    normalised_metrics,
    score_model,
    score_models,
)
from independence_bench.stats.agreement import alpha_estimate
from independence_bench.stats.analysis._discrimination import (
    MetricDiscrimination,
    metric_discrimination,
)
from independence_bench.stats.bootstrap import (
    Floats,
    PairedComparison,
    Subject,
    bootstrap_method,
    bootstrap_models,
    compare_paired,
    could_lead,
    draw_resamples,
    interval_of,
)
from independence_bench.stats.core import ALPHA_RESAMPLES, Estimate, Resampling, pearson


class ModelLabel(Protocol):
    """A model label read by its grammar, as the comparisons need it (`clients.config.LabelParts`
    is one): the statistics take the reader as a value instead of importing the grammar."""

    @property
    def base(self) -> str:
        """The base model id, without pin, effort or temperature."""
        ...

    @property
    def family(self) -> str | None:
        """The provider prefix of the base model id ("openai" in "openai/gpt-4o")."""
        ...

    def settings(self) -> tuple[str, ...]:
        """The settings the label adds to its base, in words."""
        ...


LabelReader = Callable[[str], ModelLabel]
"""Reads a label (`clients.config.parse_label`); a ValueError for one it cannot read."""


def judges_of(items: Sequence[ScoredItem]) -> tuple[str, ...]:
    """Every judge with at least one judgment in `items`, sorted."""
    return tuple(sorted({item.judge for item in items}))


def _chosen_judges(items: Sequence[ScoredItem], judges: Sequence[str]) -> tuple[str, ...]:
    present = judges_of(items)
    if not judges:
        if len(present) > 1:
            raise UserError(
                f"the store holds judgments by several judges ({', '.join(present)}); "
                "choose one with --judge or a panel with --judges"
            )
        return present
    unknown = [judge for judge in judges if judge not in present]
    if unknown:
        raise UserError(
            f"no judgments by {', '.join(unknown)}; judges in the store: "
            f"{', '.join(present) or 'none'}"
        )
    return tuple(dict.fromkeys(judges))


def panel_items(items: Sequence[ScoredItem], judges: Sequence[str] = ()) -> list[ItemMetrics]:
    """Item metrics from one judge, or per item the mean over a panel of judges.

    A panel item is declined only when every judge that scored it found it declined.
    """
    chosen = _chosen_judges(items, judges)
    measured: dict[Place, list[ItemMetrics]] = defaultdict(list)
    for found in measure_items(item for item in items if item.judge in chosen):
        measured[found.place].append(found)
    if len(chosen) < 2:
        return [found for group in measured.values() for found in group]
    averaged = []
    for group in measured.values():
        keys = sorted({key for found in group for key in found.metrics})
        metrics = {k: fmean(f.metrics[k] for f in group if k in f.metrics) for k in keys}
        declined = not metrics and any(found.declined for found in group)
        averaged.append(replace(group[0], metrics=metrics, declined=declined))
    return averaged


def _rows_by_unit(
    items: Sequence[ScoredItem], judges: Sequence[str]
) -> dict[str, list[list[float | None]]]:
    """Per metric, one row per item with one normalised value per judge (None if unscored)."""
    values: dict[Place, dict[str, dict[str, float]]] = defaultdict(dict)
    for item in items:
        if item.judge in judges and item.repeat == 0:
            values[item.place][item.judge] = normalised_item_metrics(item)
    rows: dict[str, list[list[float | None]]] = defaultdict(list)
    for by_judge in values.values():
        for metric in sorted({m for scored in by_judge.values() for m in scored}):
            rows[metric].append([by_judge.get(j, {}).get(metric) for j in judges])
    return rows


def shared_items(items: Sequence[ScoredItem], judges: Sequence[str]) -> dict[str, int]:
    """Per metric, the items at least two of `judges` scored: what alpha is computed over (0
    says why it is undefined better than "no variation")."""
    return {
        metric: sum(1 for row in rows if sum(v is not None for v in row) >= 2)
        for metric, rows in _rows_by_unit(items, judges).items()
    }


def judge_agreement(
    items: Sequence[ScoredItem],
    judges: Sequence[str],
    *,
    resampling: Resampling = Resampling(ALPHA_RESAMPLES),
) -> dict[str, Estimate | None]:
    """Krippendorff's alpha (interval, on 0–1 normalised values) between judges, per metric."""
    return {
        metric: alpha_estimate(rows, resampling=resampling)
        for metric, rows in sorted(_rows_by_unit(items, judges).items())
    }


@dataclass(frozen=True)
class LeaderboardRow:
    """One model configuration's line on the leaderboard, in the terminal, the report, the
    exports and the viewer alike (legacy scoring fills the same row)."""

    model: str
    index: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    """1 + the number of complete models with a higher index; None when incomplete."""
    rank_low: int | None
    rank_high: int | None
    """The model's own 95% rank interval; None without an interval (see `why_no_interval`)."""
    runs: int
    metrics: Mapping[str, Estimate]
    n_items: int
    """Conversations run (the store's count; judged ones when built from judgments alone)."""
    n_scored: int
    n_declined: int
    missing: tuple[str, ...]
    why_no_interval: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Method-specific values for the JSON output (legacy scoring's drift total, say)."""

    @property
    def complete(self) -> bool:
        return self.index is not None

    @property
    def could_lead(self) -> bool:
        """True when the rank interval includes 1: not distinguishable from the leader."""
        return could_lead(self.rank_low)


@dataclass(frozen=True)
class Leaderboard:
    suite_id: str
    formula: str
    judges: tuple[str, ...]
    rows: tuple[LeaderboardRow, ...]
    """Complete models by index (highest first), then incomplete ones by name."""
    agreement: Mapping[str, Estimate | None]
    """Inter-judge alpha per metric; empty for a single judge."""
    method: str

    @property
    def judge(self) -> str | None:
        """The judge, or the panel as "a + b"; None before anything was judged."""
        return " + ".join(self.judges) or None


def sort_rows(rows: Iterable[LeaderboardRow]) -> tuple[LeaderboardRow, ...]:
    """Complete rows by index, highest first, then incomplete rows; by label within."""
    return tuple(sorted(rows, key=lambda row: (row.index is None, -(row.index or 0.0), row.model)))


def rank_models(
    scored: ScoredSet, *, suite_id: str = "", resampling: Resampling = Resampling()
) -> Leaderboard:
    """The leaderboard for one judge or a panel; see `bootstrap.bootstrap_models`."""
    items, formula = scored.items, scored.formula
    chosen = _chosen_judges(items, scored.judges)
    results = bootstrap_models(panel_items(items, chosen), formula, resampling=resampling)
    rows = [
        LeaderboardRow(
            model=r.model,
            index=r.index.value if r.index else None,
            ci_low=r.index.low if r.index else None,
            ci_high=r.index.high if r.index else None,
            rank=r.rank,
            rank_low=r.rank_low,
            rank_high=r.rank_high,
            runs=len(r.score.runs),
            metrics=r.metrics,
            n_items=r.score.n_items,
            n_scored=r.score.n_items,
            n_declined=r.score.n_declined,
            missing=r.score.missing,
            why_no_interval=r.why_no_interval,
        )
        for r in results.values()
    ]
    alpha = resampling.for_alpha()
    agreement = judge_agreement(items, chosen, resampling=alpha) if len(chosen) > 1 else {}
    method = bootstrap_method(resampling)
    return Leaderboard(suite_id, formula, chosen, sort_rows(rows), agreement, method)


@dataclass(frozen=True)
class JudgeComparison:
    judges: tuple[str, ...]
    index: Mapping[str, Mapping[str, float | None]]
    """model -> judge -> index (None when that judge did not score the model completely)."""
    spread: Mapping[str, float | None]
    """model -> highest minus lowest index across judges (None with fewer than two)."""
    self_preference: Mapping[str, float | None]
    """judge -> mean over its own family's models of (its index − the other judges' mean)."""


def compare_judges(scored: ScoredSet, *, read_label: LabelReader) -> JudgeComparison:
    """Index per model per judge (each of `scored.judges` on its own, not as a panel), spread
    across judges, and self-preference per judge (a judge's family and its models' by
    `read_label`)."""
    items, formula = scored.items, scored.formula
    chosen = tuple(scored.judges) or judges_of(items)
    index: dict[str, dict[str, float | None]] = defaultdict(dict)
    for judge in _chosen_judges(items, chosen):
        for model, score in score_models(panel_items(items, [judge]), formula).items():
            index[model][judge] = score.index
    spread: dict[str, float | None] = {}
    for model, by_judge in index.items():
        known = [v for v in by_judge.values() if v is not None]
        spread[model] = max(known) - min(known) if len(known) >= 2 else None
    preference: dict[str, float | None] = {}
    for judge in chosen:
        family = read_label(judge).family
        gaps = []
        for model, by_judge in index.items():
            own = by_judge.get(judge)
            others = [v for j, v in by_judge.items() if j != judge and v is not None]
            if family and read_label(model).family == family and own is not None and others:
                gaps.append(own - fmean(others))
        preference[judge] = fmean(gaps) if gaps else None
    table = {model: {j: index[model].get(j) for j in chosen} for model in sorted(index)}
    return JudgeComparison(chosen, table, spread, preference)


@dataclass(frozen=True)
class SettingEffect:
    """How far one labelled setting moves its base model's index, against a reference row."""

    base: str
    changes: tuple[str, ...]
    """The settings the label adds to its base, in words (e.g. `effort low`)."""
    comparison: PairedComparison
    """The label (`model_a`) against the reference row (`model_b`)."""

    @property
    def label(self) -> str:
        return self.comparison.model_a

    @property
    def reference(self) -> str:
        return self.comparison.model_b


def compare_settings(
    scored: ScoredSet, *, read_label: LabelReader, resampling: Resampling = Resampling()
) -> list[SettingEffect]:
    """For each base model with several labels (read by `read_label`): every label against the
    one with the fewest settings (the bare base id when present), as a paired difference in
    index."""
    items, formula = scored.items, scored.formula
    chosen = _chosen_judges(items, scored.judges)
    by_base: dict[str, list[str]] = defaultdict(list)
    for model in sorted({item.model for item in items if item.judge in chosen}):
        by_base[read_label(model).base].append(model)
    by_base = {base: labels for base, labels in by_base.items() if len(labels) > 1}
    if not by_base:
        return []  # most stores have no settings to compare: nothing to measure
    # only the models compared are measured
    compared = {label for labels in by_base.values() for label in labels}
    measured = panel_items([item for item in items if item.model in compared], chosen)
    effects = []
    for base, labels in sorted(by_base.items()):
        reference = min(labels, key=lambda label: (len(read_label(label).settings()), label))
        for label in labels:
            if label == reference:
                continue
            comparison = compare_paired(measured, label, reference, formula, resampling=resampling)
            changes = read_label(label).settings()
            effects.append(SettingEffect(base, changes, comparison))
    return effects


@dataclass(frozen=True)
class ItemDifficulty:
    """One scenario across models: mean normalised score (0–1) and how it separates them."""

    kind: str
    scenario_id: str
    n_models: int
    mean_score: float
    lowest: float
    highest: float
    discrimination: float | None
    """Correlation of the models' scores on this scenario with their index."""
    top_minus_bottom: float | None
    """Mean score of the top half of models by index minus that of the bottom half."""
    metrics: tuple[MetricDiscrimination, ...] = ()
    """Each metric the scenario feeds: share at its maximum, spread, item–rest correlation."""


def item_difficulty(scored: ScoredSet) -> list[ItemDifficulty]:
    """Per scenario and kind, from each model's mean normalised item score; ceilinged
    scenarios show a mean near 1 and no discrimination. Each row carries its per-metric
    discrimination (`_discrimination.metric_discrimination`)."""
    formula = scored.formula
    measured = panel_items(scored.items, scored.judges)
    per_metric = metric_discrimination(measured, formula)
    indexes = {m: s.index for m, s in score_models(measured, formula).items()}
    scores: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item in measured:
        normalised = normalised_metrics(item.kind, item.metrics)
        if normalised:
            scores[(item.kind, item.scenario_id)][item.model].append(fmean(normalised.values()))
    table = []
    for (kind, scenario_id), by_model in sorted(scores.items()):
        means = {model: fmean(values) for model, values in by_model.items()}
        ranked = sorted(
            (index, means[model])
            for model, index in indexes.items()
            if index is not None and model in means
        )
        half = len(ranked) // 2
        table.append(
            ItemDifficulty(
                kind=kind,
                scenario_id=scenario_id,
                n_models=len(means),
                mean_score=fmean(means.values()),
                lowest=min(means.values()),
                highest=max(means.values()),
                discrimination=pearson([s for _, s in ranked], [i for i, _ in ranked]),
                top_minus_bottom=(
                    fmean(s for _, s in ranked[-half:]) - fmean(s for _, s in ranked[:half])
                    if half
                    else None
                ),
                metrics=per_metric.get((kind, scenario_id), ()),
            )
        )
    return table


@dataclass(frozen=True)
class ConfigCell:
    """One prompt variant × delivery mode cell: mean index over models and its gap to baseline."""

    variant: str
    mode: str
    n_models: int
    mean_index: Estimate
    vs_baseline: Estimate | None
    """Cell minus baseline; None for the baseline cell itself."""


def baseline_of(cells: Iterable[ConfigCell]) -> tuple[str, str]:
    """The (variant, mode) of the baseline among analysed cells (the one without a gap)."""
    return next(((c.variant, c.mode) for c in cells if c.vs_baseline is None), ("neutral", ""))


def config_baseline(cells: Collection[tuple[str, str]]) -> tuple[str, str]:
    """The cell others are compared with: ``neutral`` + ``user_role``, else ``neutral`` in the
    first mode that has it (v3 runs only ``tool_role``, so there the gap is the prompt effect)."""
    neutral = sorted((mode != "user_role", mode) for variant, mode in cells if variant == "neutral")
    return ("neutral", neutral[0][1] if neutral else "user_role")


def analyse_configs(
    scored: ScoredSet,
    *,
    baseline: tuple[str, str] | None = None,
    resampling: Resampling = Resampling(),
) -> list[ConfigCell]:
    """Mean index per (variant, mode) cell over the models complete in every cell.

    Each cell is scored like a suite of its own. Intervals come from one shared bootstrap in
    which all cells draw the same scenarios and each model draws the same runs in every cell,
    so a cell's difference from the baseline (`config_baseline` unless given) is paired.
    Models with one run get no interval.
    """
    formula = scored.formula
    measured = panel_items(scored.items, scored.judges)
    cells = sorted({(item.variant, item.mode) for item in measured})
    baseline = baseline or config_baseline(cells)
    if baseline not in cells:
        raise UserError(f"no items in the baseline cell {' + '.join(baseline)}")
    split: dict[tuple[str, tuple[str, str]], list[ItemMetrics]] = defaultdict(list)
    for item in measured:
        split[(item.model, (item.variant, item.mode))].append(replace(item, variant="", mode=""))
    points: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for (model, cell), cell_items in split.items():
        index = score_model(model, cell_items, formula).index
        if index is not None:
            points[cell][model] = index
    models = sorted(set.intersection(*(set(points[cell]) for cell in cells)))
    if not models:
        return []
    subjects = [
        Subject(f"{model}\0{cell[0]}\0{cell[1]}", tuple(split[(model, cell)]), run_group=model)
        for model in models
        for cell in cells
    ]
    one_run = any(len({i.run for i in s.items}) < 2 for s in subjects)
    draws = {} if one_run else draw_resamples(subjects, formula, resampling=resampling)

    def cell_means(cell: tuple[str, str]) -> Floats:
        """Per resample, the mean index over models in this cell (NaN if any had none)."""
        if not draws:
            return np.full(0, np.nan)
        columns = [draws[f"{m}\0{cell[0]}\0{cell[1]}"].index for m in models]
        means: Floats = np.mean(np.column_stack(columns), axis=1)
        return means

    base_draws = cell_means(baseline)
    base_point = fmean(points[baseline][m] for m in models)
    result = []
    for cell in cells:
        point = fmean(points[cell][m] for m in models)
        found = cell_means(cell)
        gap = None if cell == baseline else interval_of(point - base_point, found - base_draws)
        result.append(ConfigCell(cell[0], cell[1], len(models), interval_of(point, found), gap))
    return result
