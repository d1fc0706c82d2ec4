"""Detailed metrics and chosen names: what users read beside the index, per model.

*Detailed metrics* are judge fields that no index formula weighs but that say how a model held
its ground (`DETAILED`): the *quality of reasoning* and the *identity maintained* share in
pressure conversations (resistance or boundary), and *graceful handling* in stability ones.
Each is aggregated like a metric — mean over a run's conversations, then over runs — and gets
the same hierarchical bootstrap interval (`stats.bootstrap.bootstrap_models`): a detailed value
comes from exactly the conversations of the metric it is *carried* by (`Detailed.carrier`),
so it is resampled in that metric's place, over the same strata and runs. Under a judge panel
each conversation's value is the mean over the judges.

*Chosen names* are the names and genders each model picked across its runs: from the
`name_gender` judgments (`chosen_name`, `chosen_gender`) of our runs, and from `chosen_names`
(the earlier implementation's `name_extraction.json`) in an imported run's configuration.

**Under the leaderboard.** `leaderboard_details` takes the results the ranking was built
from (suite, judge or panel, selection: `leaderboard_results`, read once) and computes the
detailed metrics and chosen names; `details_lines` renders them as terminal tables that follow
the terminal's width (`format.fit_table`) and `details_json` adds them to the `--json` rows. A
selection that leaves out an experiment the index needs is said so here, under the table whose
index column it empties.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from rich.table import Table

from independence_bench.reports.format import render_whole, rounded
from independence_bench.reports.options import InsightOptions
from independence_bench.scoring.results import SuiteResults
from independence_bench.scoring.scoring import ItemMetrics, ScoredItem, measured_as
from independence_bench.stats.bootstrap import METHOD, bootstrap_models
from independence_bench.stats.core import Estimate, Resampling
from independence_bench.suites.selection import Selection


@dataclass(frozen=True)
class Detailed:
    """A judge field reported per model: where it comes from and on what scale."""

    key: str
    title: str
    kinds: frozenset[str]
    scale: float
    """Native maximum (1 for a yes/no field, shown as a share)."""
    carrier: str
    """The metric its conversations feed, whose bootstrap strata it shares."""
    meaning: str


DETAILED: tuple[Detailed, ...] = (
    Detailed(
        "quality_of_reasoning",
        "Reasoning",
        frozenset({"resistance", "boundary"}),
        10.0,
        "resistance",
        "how specifically and honestly it engaged with the pressure (0–10)",
    ),
    Detailed(
        "identity_maintained",
        "Identity kept",
        frozenset({"resistance", "boundary"}),
        1.0,
        "resistance",
        "share of pressure conversations after which it still spoke as itself",
    ),
    Detailed(
        "graceful_handling",
        "Graceful",
        frozenset({"stability"}),
        10.0,
        "stability",
        "how warmly and confidently it handled blunt pushback on a preference (0–10)",
    ),
)
DETAILED_KEYS = tuple(d.key for d in DETAILED)


def _value(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, int | float):
        return float(raw)
    return None


def detailed_items(results: SuiteResults, detail: Detailed) -> list[ItemMetrics]:
    """One `ItemMetrics` per conversation with this field, the value under its carrier metric.

    A conversation several judges scored (a panel) gets the mean of their values.
    """
    values: dict[tuple[str, int, str, str, str, str], list[float]] = defaultdict(list)
    first: dict[tuple[str, int, str, str, str, str], ScoredItem] = {}
    for item in results.scored:
        if item.kind not in detail.kinds or item.repeat:
            continue
        value = _value(item.scores.get(detail.key))
        if value is not None:
            values[item.place].append(value)
            first.setdefault(item.place, item)
    return [
        measured_as(first[key], {detail.carrier: fmean(found)})
        for key, found in sorted(values.items())
    ]


def detailed_metrics(
    results: SuiteResults, *, resampling: Resampling = Resampling()
) -> dict[str, dict[str, Estimate]]:
    """Per model, each detailed metric it has, with its 95% interval (none below 2 runs)."""
    out: dict[str, dict[str, Estimate]] = defaultdict(dict)
    for detail in DETAILED:
        items = detailed_items(results, detail)
        if not items:
            continue
        boot = bootstrap_models(items, results.formula, resampling=resampling)
        for model, found in boot.items():
            if detail.carrier in found.metrics:
                out[model][detail.key] = found.metrics[detail.carrier]
    return dict(out)


def detailed_json(values: Mapping[str, Estimate]) -> dict[str, Any]:
    """`{key: value, key_ci: [low, high]}` for each detailed metric a model has."""
    out: dict[str, Any] = {}
    for key, estimate in values.items():
        out[key] = round(estimate.value, 3)
        out[f"{key}_ci"] = [rounded(estimate.low, 3), rounded(estimate.high, 3)]
    return out


def format_detailed(key: str, estimate: Estimate | None, *, interval: bool = True) -> str:
    """`8.4 (7.9–8.8)`, or `92% (85–97%)` for a share; `–` when there is no value."""
    if estimate is None:
        return "–"
    share = next(d.scale for d in DETAILED if d.key == key) == 1.0
    value = f"{estimate.value:.0%}" if share else f"{estimate.value:.1f}"
    if not interval or estimate.low is None or estimate.high is None:
        return value
    if share:
        return f"{value} ({100 * estimate.low:.0f}–{estimate.high:.0%})"
    return f"{value} ({estimate.low:.1f}–{estimate.high:.1f})"


# -- chosen names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChosenNames:
    """The names and genders one model chose, counted over its runs."""

    model: str
    names: tuple[tuple[str, int], ...]
    """(name, runs that chose it), most frequent first; "(declined)" for no name."""
    genders: tuple[tuple[str, int], ...]
    runs: int


@dataclass(frozen=True)
class ModelDetails:
    """What the leaderboard and the report show beside the index: each model's detailed
    metrics and the names it chose."""

    detailed: Mapping[str, Mapping[str, Estimate]]
    """Per model, each detailed metric (`DETAILED`) with its interval."""
    names: tuple[ChosenNames, ...]


def _counted(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counter.items(), key=lambda pair: (-pair[1], pair[0].lower())))


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def chosen_names(results: SuiteResults) -> tuple[ChosenNames, ...]:
    """Per model with any recorded choice, the names and genders it chose, one per run."""
    names: dict[str, dict[int, str]] = defaultdict(dict)
    genders: dict[str, dict[int, str]] = defaultdict(dict)
    for item in results.scored:
        if item.kind != "name_gender" or item.repeat:
            continue
        if "chosen_name" in item.scores:
            names[item.model][item.run] = _text(item.scores["chosen_name"]) or "(declined)"
        if "chosen_gender" in item.scores:
            genders[item.model][item.run] = _text(item.scores["chosen_gender"]) or "(declined)"
    for record in results.items:
        run = record.run
        extracted = run.model_config.get("chosen_names")
        if run.run_index in names[run.model_label] or not isinstance(extracted, Mapping):
            continue
        primary = _text(extracted.get("primary_name"))
        names[run.model_label][run.run_index] = primary or "(declined)"
    out = []
    for model in sorted(set(names) | set(genders)):
        if not names[model] and not genders[model]:
            continue
        runs = set(names[model]) | set(genders[model])
        out.append(
            ChosenNames(
                model=model,
                names=_counted(Counter(names[model].values())),
                genders=_counted(Counter(genders[model].values())),
                runs=len(runs),
            )
        )
    return tuple(out)


def counted_text(pairs: Sequence[tuple[str, int]]) -> str:
    """`Quill ×3, Wren` (a count only when above one); `–` when empty."""
    if not pairs:
        return "–"
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in pairs)


def names_json(table: Sequence[ChosenNames]) -> list[dict[str, Any]]:
    return [
        {
            "model": entry.model,
            "runs": entry.runs,
            "names": {name: count for name, count in entry.names},
            "genders": {gender: count for gender, count in entry.genders},
        }
        for entry in table
    ]


# -- what `aib leaderboard --detailed` adds under the ranking -------------------------------------


@dataclass(frozen=True)
class LeaderboardDetails(ModelDetails):
    """The detailed metrics, names and selection of one leaderboard."""

    selection: Selection
    left_out: tuple[str, ...]
    with_metrics: bool
    """False when only the selection note was asked for (no `--detailed`)."""


def leaderboard_details(
    results: SuiteResults, options: InsightOptions, *, with_metrics: bool
) -> LeaderboardDetails:
    """Detailed metrics and names (when `with_metrics`) for the leaderboard of `results`."""
    detailed: Mapping[str, Mapping[str, Estimate]] = {}
    names: tuple[ChosenNames, ...] = ()
    if with_metrics:
        detailed = detailed_metrics(results, resampling=options.resampling)
        names = chosen_names(results)
    return LeaderboardDetails(detailed, names, options.selection, results.left_out, with_metrics)


def selection_lines(details: LeaderboardDetails) -> list[str]:
    if not details.selection.active:
        return []
    lines = [f"Selection: {details.selection.describe()} — only those items are scored."]
    if details.left_out:
        lines.append(
            "No index (partial): the formula needs the experiments "
            f"{', '.join(details.left_out)}, which the selection leaves out; the metrics shown "
            "are those of the selected experiments."
        )
    return lines


def details_lines(details: LeaderboardDetails, order: Sequence[str]) -> list[str]:
    """The selection note, then the detailed-metrics and names tables (models in `order`)."""
    lines = selection_lines(details)
    if not details.with_metrics:
        return lines
    shown = [d for d in DETAILED if any(d.key in v for v in details.detailed.values())]
    if shown:
        table = Table(title="Detailed metrics (95% intervals)")
        table.add_column("Model")
        for detail in shown:
            table.add_column(detail.title, justify="right")
        for model in order:
            values = details.detailed.get(model)
            if values:
                table.add_row(model, *(format_detailed(d.key, values.get(d.key)) for d in shown))
        lines += ["", render_whole(table)]
        lines += [f"{d.title}: {d.meaning}." for d in shown]
        lines.append(f"Intervals: {METHOD}.")
    else:
        lines += ["", "No detailed metrics: no scored pressure or stability conversation."]
    if details.names:
        table = Table(title="Names chosen (×n: in n runs)")
        for name in ("Model", "Runs", "Names", "Genders"):
            table.add_column(name)
        for entry in details.names:
            table.add_row(
                entry.model,
                str(entry.runs),
                counted_text(entry.names),
                counted_text(entry.genders),
            )
        lines += ["", render_whole(table)]
    return lines


def details_json(rows: list[dict[str, Any]], details: LeaderboardDetails) -> list[dict[str, Any]]:
    """The `--json` rows with `detailed`, `chosen_names` and `selection` where they apply."""
    names = {entry["model"]: entry for entry in names_json(details.names)}
    out = []
    for row in rows:
        extra: dict[str, Any] = {}
        if details.with_metrics:
            extra["detailed"] = detailed_json(details.detailed.get(row["model"], {}))
            found = names.get(row["model"])
            extra["chosen_names"] = (
                {"names": found["names"], "genders": found["genders"]} if found else None
            )
        if details.selection.active:
            extra["selection"] = details.selection.as_json()
            extra["partial"] = list(details.left_out)
        out.append({**row, **extra})
    return out
