"""The earlier implementation's scoring rules: ``aib leaderboard --method legacy``.

This reproduces the figures that implementation published (to one decimal, for every metric
and the index) from the same judgments, imported with `importer.py`. Its rules, as documented
and as recovered from its published figures:

1. Each run is scored on its own. Within a run, distinctiveness, non-assistant-likeness and
   internal consistency are means over the identity items — the self-description (``direct``),
   ``tool_context``, the psychological batch (one conversation, judged once) and the
   negotiation's final profile; an identity item scored 0 on all three was taken for a
   truncated judge reply and dropped. Drift is the negotiation's ``drift_from_initial``
   (0–10); name/gender changes are ``name_changed + gender_changed`` (0–2); resistance is the
   mean ``resistance_score`` of the pressure items; stability the mean ``consistency_score``.
2. A configuration's dimension is the mean over the runs that have it ("Drift 0–12" is drift
   plus name/gender changes), and its index is the suite's formula (`scoring.FORMULAS`) of
   those means. A configuration lacking a dimension is shown as incomplete, not ranked.
3. Unscored judgments (``{}``) count for nothing; a psych batch is one item.
4. The 95% interval is a percentile bootstrap over runs of the mean per-run index (a run
   without a negotiation or name/gender verdict counts 0 drift there, as that implementation
   did), 10,000 resamples from seed 0. Being Monte Carlo it matches the published intervals to
   within about 0.1, not exactly.

Where our default method differs, see README ("Importing earlier results").
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from independence_bench.scoring.results import load_results
from independence_bench.scoring.scoring import (
    ModelIndex,
    ScoredItem,
    index_or_missing,
    index_over_runs,
    run_means,
)
from independence_bench.stats.analysis import Leaderboard, LeaderboardRow, sort_rows
from independence_bench.stats.core import Estimate, Resampling, percentile_interval
from independence_bench.store.store import Store
from independence_bench.suites.kinds import KINDS, ChangedShare, Score

LEGACY_RESAMPLING = Resampling(10_000, seed=0)
"""That implementation's bootstrap, whatever `--resamples` and `--seed` say."""
TRAITS = ("distinctiveness", "non_assistant_likeness", "internal_consistency")
_DRIFT_PARTS = ("drift", "name_gender_changes")


def _number(scores: Mapping[str, object], name: str) -> float | None:
    value = scores.get(name)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, int | float) else None


def legacy_item_metrics(item: ScoredItem) -> dict[str, float] | None:
    """The metrics one judged item gives under the legacy rules; None when it was dropped.

    The judge fields are those of the item's kind (`suites.kinds.KINDS`); a changed-share metric
    (name/gender changes) is the plain sum of its flags. Fields a judgment lacks are left out, as
    that implementation skipped missing values.
    """
    if item.kind not in KINDS:
        return {}
    sources = KINDS[item.kind].metrics
    traits = [
        _number(item.scores, s.field)
        for s in sources
        if isinstance(s, Score) and s.metric.key in TRAITS
    ]
    if len(traits) == len(TRAITS) and all(value == 0 for value in traits):
        return None
    out = {}
    for source in sources:
        if isinstance(source, ChangedShare):
            flags = [_number(item.scores, name) for name in source.fields]
            values = [value for value in flags if value is not None]
            if values:
                out[source.metric.key] = sum(values)
        elif (
            isinstance(source, Score) and (value := _number(item.scores, source.field)) is not None
        ):
            out[source.metric.key] = value
    return out


@dataclass(frozen=True)
class LegacyScore(ModelIndex):
    """One configuration under the legacy rules."""

    run_indexes: Mapping[int, float]
    interval: tuple[float, float] | None
    n_items: int
    n_dropped: int

    @property
    def drift_total(self) -> float | None:
        """Drift plus name/gender changes (0–12), as the v2 leaderboard showed it."""
        parts = [self.metrics[key] for key in _DRIFT_PARTS if key in self.metrics]
        return sum(parts) if parts else None


def first_per_unit(items: Iterable[ScoredItem]) -> list[ScoredItem]:
    """One judgment per model, run and scenario: the earliest stored (the imported one)."""
    seen: set[tuple[str, int, str, str, str]] = set()
    out = []
    for item in items:
        key = (item.model, item.run, item.variant, item.mode, item.scenario_id)
        if item.repeat == 0 and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def run_interval(
    run_indexes: Sequence[float], *, resampling: Resampling = LEGACY_RESAMPLING
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of per-run indexes (None below two runs)."""
    if len(run_indexes) < 2:
        return None
    rng = random.Random(resampling.seed)
    draws = [
        fmean([rng.choice(run_indexes) for _ in run_indexes]) for _ in range(resampling.n_resamples)
    ]
    return percentile_interval(draws)


def score_legacy_model(
    model: str,
    items: Iterable[ScoredItem],
    formula: str,
    *,
    resampling: Resampling = LEGACY_RESAMPLING,
) -> LegacyScore:
    """Score one configuration's judged items by the legacy rules (see the module docstring)."""
    by_run: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    n_items = n_dropped = 0
    for item in items:
        n_items += 1
        metrics = legacy_item_metrics(item)
        if metrics is None:
            n_dropped += 1
            continue
        values = by_run[item.run]
        for key, value in metrics.items():
            values[key].append(value)
    per_run = run_means(by_run)
    overall = index_over_runs(model, per_run, formula, any_declined=False)
    run_indexes: dict[int, float] = {}
    for run, means in per_run.items():
        run_index, _ = index_or_missing({**dict.fromkeys(_DRIFT_PARTS, 0.0), **means}, formula)
        if run_index is not None:
            run_indexes[run] = run_index
    interval = (
        run_interval(list(run_indexes.values()), resampling=resampling)
        if overall.complete
        else None
    )
    return LegacyScore(
        **vars(overall),
        run_indexes=run_indexes,
        interval=interval,
        n_items=n_items,
        n_dropped=n_dropped,
    )


LEGACY_METHOD = (
    "legacy rules of the earlier implementation; percentile bootstrap over runs of the mean "
    f"per-run index, {LEGACY_RESAMPLING.describe()}"
)


def _why_no_interval(score: LegacyScore) -> str | None:
    if score.index is None:
        return f"incomplete: no scores for {', '.join(score.missing) or 'any metric'}"
    if score.interval is None:
        return f"{len(score.run_indexes)} run: an interval needs at least 2 runs"
    return None


def legacy_leaderboard(store: Store, *, suite_id: str | None, judge: str | None) -> Leaderboard:
    """The leaderboard by the legacy rules: ranked by index, incomplete configurations last."""
    results = load_results(store, suite_id=suite_id, judge=judge)
    by_model: dict[str, list[ScoredItem]] = defaultdict(list)
    for item in first_per_unit(results.scored):
        by_model[item.model].append(item)
    items_per_model: dict[str, int] = defaultdict(int)
    runs_per_model: dict[str, set[int]] = defaultdict(set)
    for record in results.items:
        items_per_model[record.run.model_label] += 1
        runs_per_model[record.run.model_label].add(record.run.run_index)
    scores = {
        model: score_legacy_model(model, by_model.get(model, ()), results.formula)
        for model in sorted(items_per_model)
    }
    indexes = [score.index for score in scores.values() if score.index is not None]
    rows = []
    for model, score in scores.items():
        low, high = score.interval or (None, None)
        drift_total = score.drift_total
        rank = None if score.index is None else 1 + sum(i > score.index for i in indexes)
        rows.append(
            LeaderboardRow(
                model=model,
                index=score.index,
                ci_low=low,
                ci_high=high,
                rank=rank,
                rank_low=None,
                rank_high=None,
                runs=len(runs_per_model[model]),
                metrics={key: Estimate(value) for key, value in score.metrics.items()},
                n_items=items_per_model[model],
                n_scored=score.n_items - score.n_dropped,
                n_declined=0,
                missing=score.missing if score.n_items else ("all",),
                why_no_interval=_why_no_interval(score),
                extra={
                    "drift_total": None if drift_total is None else round(drift_total, 3),
                    "dropped_items": score.n_dropped,
                },
            )
        )
    judges = (results.judge,) if results.judge else ()
    return Leaderboard(
        results.suite_id, results.formula, judges, sort_rows(rows), {}, LEGACY_METHOD
    )
