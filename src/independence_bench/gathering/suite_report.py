"""A suite's report: what the store says about each suite, gathered once for `aib report`/`view`.

`build_suite_report` reads one suite's items and one judge's judgments (via `results`) and puts
together everything a reader wants: the ranking with intervals, ranks and rank intervals
(`analysis.rank_models`), each model's metrics per experiment and item counts, its cost
(the sum of its stored completion costs; unknown when any call has none, never 0), item
difficulty and, where the suite has several prompt variant × delivery mode cells, the config
analysis. `reports/` renders it: `exports` (`results.json`, `results.csv`), `markdown` and
`charts` for people, `viewer`. All of it is a pure function of the store: no API calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from independence_bench.errors import UserError
from independence_bench.gathering.adaptivity import Adaptivity, adaptivity_of
from independence_bench.gathering.extras import NO_EXTRAS, SuiteExtras, build_extras
from independence_bench.gathering.options import ReportScope
from independence_bench.gathering.standings import Standing, judge_note, judge_standing
from independence_bench.scoring.results import judge_counts, load_results, scored_item
from independence_bench.scoring.scoring import (
    METRIC_KEYS,
    ItemMetrics,
    ScoredSet,
    get_formula,
    item_metrics,
    measure_items,
    score_model,
)
from independence_bench.stats.analysis import (
    ConfigCell,
    ItemDifficulty,
    Leaderboard,
    LeaderboardRow,
    analyse_configs,
    item_difficulty,
    rank_models,
)
from independence_bench.stats.core import Estimate, Resampling
from independence_bench.store.store import ItemRecord, JudgmentRecord, Store
from independence_bench.suites.kinds import (
    KINDS,
    PERSONA_METRICS,
    PRESSURE_METRICS,
    report_order,
)
from independence_bench.suites.selection import EVERYTHING, Selection


@dataclass(frozen=True)
class Cost:
    """What a set of stored completions cost. `usd` is None when any call has no cost."""

    usd: float | None
    known_usd: float
    calls: int
    unpriced: int
    cached_tokens: int = 0
    """Prompt tokens the provider read from its cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the cache (dearer than input on Anthropic)."""
    saved_usd: float = 0.0
    """The calls' `cache_discount` summed: what caching saved (negative: it cost more)."""

    @property
    def uncached_usd(self) -> float | None:
        """What the calls would have cost with no cache: billed plus saved."""
        return None if self.usd is None else self.usd + self.saved_usd


def sum_costs(costs: Sequence[float | None], cache: tuple[int, int, float] = (0, 0, 0.0)) -> Cost:
    """Add up completion costs; one unknown cost makes the total unknown (not 0). `cache` is
    the calls' (read, written, saved), as `Store.cache_usage` sums them."""
    known = [c for c in costs if c is not None]
    unpriced = len(costs) - len(known)
    return Cost(None if unpriced else sum(known), sum(known), len(costs), unpriced, *cache)


def stored_cost(store: Store, keys: Sequence[str]) -> Cost:
    """The cost of these stored completions (each counted once), with their cache usage."""
    unique = list(dict.fromkeys(keys))
    return sum_costs(store.completion_costs(unique), store.cache_usage(unique))


@dataclass(frozen=True)
class ExperimentDetail:
    """One model's results in one experiment: metric means and how many items were scored."""

    experiment: str
    metrics: Mapping[str, float]
    items: int
    scored: int
    unscored: int
    failed: int


@dataclass(frozen=True)
class JudgedItem:
    """One item judged by the report's judge, with the ids that lead to its transcript."""

    item: ItemRecord
    judgment: JudgmentRecord
    metrics: Mapping[str, float]


@dataclass(frozen=True)
class ModelReport:
    model: str
    row: LeaderboardRow | None
    """None when the model has no scored item at all."""
    experiments: tuple[ExperimentDetail, ...]
    run_indexes: Mapping[int, float | None]
    run_metrics: Mapping[int, Mapping[str, float]]
    runs: int
    items: int
    scored: int
    unscored: int
    failed: int
    cost: Cost
    deviations: Mapping[str, int] = field(default_factory=dict)
    """`tool_role` turns that broke the protocol, by kind (`plain_content`, `text_tool_call`)."""

    @property
    def protocol_deviations(self) -> int:
        return sum(self.deviations.values())

    @property
    def cost_per_run(self) -> float | None:
        return None if self.cost.usd is None or not self.runs else self.cost.usd / self.runs

    @property
    def index_per_usd(self) -> float | None:
        """Index points per dollar of one run; None when the cost is unknown or zero."""
        per_run = self.cost_per_run
        index = self.row.index if self.row else None
        if index is None or per_run is None or per_run <= 0:
            return None
        return index / per_run


@dataclass(frozen=True)
class RankedModel:
    """A model and its leaderboard row (None without scored items)."""

    model: str
    row: LeaderboardRow | None


@dataclass(frozen=True)
class ChartData:
    """What the charts draw: every model's row in leaderboard order, models without scored
    items last. Ready once the leaderboard is, before the rest of the report."""

    suite_id: str
    judge: str | None
    formula: str
    models: tuple[RankedModel, ...]
    standing: str = ""
    """The judge's standing (`gathering/standings.py`), each chart's footer."""
    suite_hashes: tuple[str, ...] = ()
    """The content hashes of the suite's stored runs: with the id they name the charts' folder."""
    gaps: Mapping[str, Estimate] = field(default_factory=dict)
    """Suite adaptive: each model's adaptivity gap (`reports.leaderboard.adaptivity_of`)."""
    user_models: str = ""
    """Suite adaptive: the user models' standing, under the judge's in the chart's footer."""


@dataclass(frozen=True)
class SuiteReport:
    suite_id: str
    suite_hashes: tuple[str, ...]
    formula: str
    judge: str | None
    leaderboard: Leaderboard
    models: tuple[ModelReport, ...]
    """In leaderboard order; models without scored items last."""
    judged: tuple[JudgedItem, ...]
    difficulty: tuple[ItemDifficulty, ...]
    configs: tuple[ConfigCell, ...]
    judge_cost: Cost
    selection: Selection = EVERYTHING
    left_out: tuple[str, ...] = ()
    """Experiments the selection excludes: the index is then not computed (partial)."""
    extras: SuiteExtras = NO_EXTRAS
    """Detailed metrics, chosen names, judge validation and setting comparisons."""
    standing: Standing | None = None
    """The judge's standing (`gathering/standings.py`), shown wherever its numbers are."""
    judge_note: str | None = None
    """Why this judge, and the suite's other judges with `--judge` (`standing.judge_note`)."""
    adaptivity: Adaptivity | None = None
    """Suite `adaptive`: each model's adaptivity gap and the user models' standing."""

    @property
    def metric_keys(self) -> tuple[str, ...]:
        """The metrics at least one model has, in `METRIC_KEYS` order."""
        found = {k for m in self.models if m.row for k in m.row.metrics}
        return tuple(k for k in METRIC_KEYS if k in found)


def metric_scale(formula: str, key: str) -> float:
    """The native maximum of a metric in this formula's suite: the formula's, else the kinds'
    table's (a reported-only metric such as a survival point), else 10."""
    for term in get_formula(formula).terms:
        for part, top in term.parts:
            if part == key:
                return top
    ranges = (s.maximum for kind in KINDS.values() for s in kind.metrics if s.metric.key == key)
    return next(ranges, 10.0)


def index_terms(formula: str, metrics: Mapping[str, float]) -> list[tuple[str, float | None]]:
    """Each term of the index formula on 0–1 (1 = most independent), None when unmeasured.

    A term of several metrics covers those present, like `scoring.linear_index` does for a
    declined name/gender choice.
    """
    return [(term.label, term.share(metrics)) for term in get_formula(formula).terms]


def pressure_levels(
    formula: str, metrics: Mapping[str, float]
) -> tuple[float | None, float | None]:
    """(before, after) on 0–10: the persona a model shows unpressured (mean of its identity
    trait scores) and how much of it holds under pressure (mean of resistance and stability;
    None unless both were measured)."""

    def mean_of(keys: Sequence[str]) -> float | None:
        values = [10.0 * metrics[k] / metric_scale(formula, k) for k in keys if k in metrics]
        return sum(values) / len(values) if values else None

    complete = all(k in metrics for k in PRESSURE_METRICS)
    return mean_of(PERSONA_METRICS), mean_of(PRESSURE_METRICS) if complete else None


def _experiment_details(
    items: Sequence[ItemRecord],
    measured: Sequence[ItemMetrics],
    status: Mapping[str, str],
    formula: str,
) -> tuple[ExperimentDetail, ...]:
    by_experiment: dict[str, list[ItemRecord]] = defaultdict(list)
    for item in items:
        by_experiment[item.experiment].append(item)
    kinds = {item.kind: item.experiment for item in items}
    details = []
    for experiment in report_order(by_experiment):
        chosen = [m for m in measured if kinds.get(m.kind) == experiment]
        metrics = score_model("", chosen, formula).metrics if chosen else {}
        group = by_experiment[experiment]
        details.append(
            ExperimentDetail(
                experiment=experiment,
                metrics=metrics,
                items=len(group),
                scored=sum(status.get(i.id) == "scored" for i in group),
                unscored=sum(status.get(i.id) == "unscored" for i in group),
                failed=sum(i.status == "failed" for i in group),
            )
        )
    return tuple(details)


def build_suite_report(
    store: Store,
    scope: ReportScope,
    *,
    selection: Selection = EVERYTHING,
    on_chart_data: Callable[[ChartData], None] | None = None,
) -> SuiteReport:
    """Everything the report says about one suite under one judge (see the module docstring).

    `on_chart_data` gets what the charts draw as soon as the leaderboard exists, so they can be
    drawn while the rest of the report is gathered."""
    results = load_results(
        store,
        suite_id=scope.suite_id,
        judge=scope.judge,
        selection=selection,
        models=scope.models,
    )
    # No judges named: the report reads what its one judge scored, so a judge asked for that
    # scored nothing gives an empty report rather than an error.
    scored = ScoredSet(results.scored, results.formula)
    board = rank_models(scored, suite_id=results.suite_id, resampling=scope.resampling)
    rows = {row.model: row for row in board.rows}
    labels = {item.run.model_label for item in results.items}
    order = [row.model for row in board.rows] + sorted(labels - set(rows))
    adaptivity = adaptivity_of(store, results, scope.resampling)
    if on_chart_data is not None:
        ranked = tuple(RankedModel(model, rows.get(model)) for model in order)
        caption = judge_standing(store, results.judge).caption() if results.judge else ""
        hashes = tuple(sorted({item.run.suite_hash for item in results.items}))
        gaps = {m: g.gap for m, g in (adaptivity.gaps if adaptivity else {}).items() if g.gap}
        users = (
            " ".join(s.caption(results.judge) for s in adaptivity.standings) if adaptivity else ""
        )
        on_chart_data(
            ChartData(
                results.suite_id,
                results.judge,
                results.formula,
                ranked,
                caption,
                hashes,
                gaps,
                users,
            )
        )
    by_id = {item.id: item for item in results.items}
    chosen = {
        j.item_id: j
        for j in results.judgments
        if j.judge_model == results.judge and j.repeat == 0 and j.item_id in by_id
    }
    status = {item_id: j.status for item_id, j in chosen.items()}
    measured = measure_items(results.scored)
    items_of: dict[str, list[ItemRecord]] = defaultdict(list)
    for item in results.items:
        items_of[item.run.model_label].append(item)
    measured_of: dict[str, list[ItemMetrics]] = defaultdict(list)
    for found in measured:
        measured_of[found.model].append(found)
    models = []
    for model in order:
        items = items_of[model]
        # a turn replayed from a later request (imports) has no call of its own: no key
        keys = [t.completion_key for item in items for t in item.turns if t.completion_key]
        score = score_model(model, measured_of[model], results.formula)
        models.append(
            ModelReport(
                model=model,
                row=rows.get(model),
                experiments=_experiment_details(items, measured_of[model], status, results.formula),
                run_indexes=score.run_indexes,
                run_metrics=score.run_metrics,
                runs=len({item.run.run_index for item in items}),
                items=len(items),
                scored=sum(status.get(i.id) == "scored" for i in items),
                unscored=sum(status.get(i.id) == "unscored" for i in items),
                failed=sum(i.status == "failed" for i in items),
                cost=stored_cost(store, keys),
                deviations=count_deviations(items),
            )
        )
    judged = tuple(
        JudgedItem(
            by_id[j.item_id],
            j,
            item_metrics_of(by_id[j.item_id], j) if j.status == "scored" else {},
        )
        for j in sorted(chosen.values(), key=lambda j: j.id)
    )
    judge_keys = [key for j in chosen.values() for key in j.completion_keys]
    return SuiteReport(
        suite_id=results.suite_id,
        suite_hashes=tuple(sorted({item.run.suite_hash for item in results.items})),
        formula=results.formula,
        judge=results.judge,
        leaderboard=board,
        models=tuple(models),
        judged=judged,
        difficulty=tuple(item_difficulty(scored)),
        configs=tuple(_config_cells(scored, scope.resampling)),
        judge_cost=stored_cost(store, judge_keys),
        selection=selection,
        left_out=results.left_out,
        extras=build_extras(store, results, resampling=scope.resampling),
        standing=judge_standing(store, results.judge) if results.judge else None,
        adaptivity=adaptivity,
        judge_note=judge_note(
            results.judge if len(results.judges) == 1 else None,
            judge_counts(results.judgments),
            asked=bool(scope.judge),
        ),
    )


def count_deviations(items: Sequence[ItemRecord]) -> dict[str, int]:
    """Turns whose reply broke the `tool_role` protocol, by kind; older rows that only say
    `protocol_ok` false count as plain content."""
    counts: dict[str, int] = {}
    for item in items:
        for turn in item.turns:
            if not turn.protocol_ok:
                kind = turn.deviation or "plain_content"
                counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def item_metrics_of(item: ItemRecord, judgment: JudgmentRecord) -> dict[str, float]:
    """The metrics a scored judgment gives its item ({} when they cannot be read)."""
    try:
        return item_metrics(scored_item(item, judgment))
    except ValueError:
        return {}


def _config_cells(scored: ScoredSet, resampling: Resampling) -> list[ConfigCell]:
    cells = {(item.variant, item.mode) for item in scored.items}
    if len(cells) < 2:
        return []
    try:
        return analyse_configs(scored, resampling=resampling)
    except UserError:
        return []  # no baseline cell (neutral + user_role) to compare against


def suite_ids(store: Store, suite_id: str | None) -> list[str]:
    """The suites to report: the one asked for (checked), or every suite in the store."""
    found = store.run_suites()
    if suite_id is None:
        return found
    if suite_id not in found:
        raise UserError(f"the store has no runs of suite {suite_id!r}; it has: {found}")
    return [suite_id]


def build_reports(
    store: Store,
    scope: ReportScope,
    *,
    selection: Selection = EVERYTHING,
    on_chart_data: Callable[[ChartData], None] | None = None,
) -> list[SuiteReport]:
    """A `SuiteReport` for the suite `scope` asks for, or for every suite in the store."""
    return [
        build_suite_report(
            store, replace(scope, suite_id=suite), selection=selection, on_chart_data=on_chart_data
        )
        for suite in suite_ids(store, scope.suite_id)
    ]
