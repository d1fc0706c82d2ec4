"""Analysis tables: what `aib judges`, `compare`, `items` and `configs` print.

`render_analysis` turns one report of `gathering.analyses` into text (rich tables, with the
method printed under every table that shows intervals) or JSON, with the standing of every
judge it shows; `workflows.analyses` opens the store and gathers what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table

from independence_bench.gathering.adaptivity import Adaptivity
from independence_bench.gathering.analyses import (
    ConfigsReport,
    ItemsReport,
    JudgesReport,
    PairReport,
    SettingsReport,
)
from independence_bench.gathering.standings import Standing
from independence_bench.reports.analyses._reports import (
    CEILING,
    FLOOR,
    configs_json,
    flag_of,
    items_json,
    judges_json,
    model_labels,
    pair_json,
    settings_json,
)
from independence_bench.reports.format import (
    fit_table,
    interval_text,
    number,
    render_whole,
    wrap_notes,
)
from independence_bench.reports.leaderboard import (
    METRIC_TITLES,
    adaptivity_json,
    adaptivity_lines,
    agreement_lines,
)
from independence_bench.stats.agreement import ALPHA_METHOD
from independence_bench.stats.analysis import CEILING_SHARE
from independence_bench.text.counts import count_of
from independence_bench.text.lossless import json_document


def _with_standings(data: Any, standings: Sequence[Standing]) -> Any:
    """`--json` output with the standing of every judge it shows (`Standing.as_json`)."""
    return {**data, "judge_standings": [s.as_json() for s in standings]}


def _with_note(text: str, note: str | None, standings: Sequence[Standing] = ()) -> str:
    """The rendered report, each judge's standing and the note, wrapped to the terminal."""
    lines = [text, *(s.caption() for s in standings), *([note] if note else [])]
    return wrap_notes("\n".join(lines))


def _dump(data: Any) -> str:
    return json_document(data, indent=2)


def render_judges(report: JudgesReport) -> str:
    comparison = report.comparison
    table = Table(title=f"Index per judge — suite {report.suite_id}")
    table.add_column("Model")
    for judge in comparison.judges:
        table.add_column(judge, justify="right")
    table.add_column("Spread", justify="right")
    for model in model_labels(comparison):
        cells = [model, *(number(comparison.index[model].get(j)) for j in comparison.judges)]
        table.add_row(*cells, number(comparison.spread.get(model)))
    table.add_section()
    preference = [number(comparison.self_preference.get(j), signed=True) for j in comparison.judges]
    table.add_row("self-preference", *preference, "")
    table.add_row("scored items", *(str(report.judged[j]) for j in comparison.judges), "")
    lines = [
        render_whole(table),
        "Spread: highest minus lowest index the judges give a model. Self-preference: a judge's "
        "index for models of its own family (provider prefix, e.g. openai/…) minus the other "
        "judges' mean for them; – when it has no such model or there is no other judge.",
    ]
    if len(comparison.judges) < 2:
        lines.append("One judge only: add another with 'aib judge --judge MODEL'.")
    lines += agreement_lines(report.agreement, report.seed, report.shared)
    lines += ["", *_retest_lines(report)]
    lines += _arm_lines(report)
    return "\n".join(lines)


def _arm_lines(report: JudgesReport) -> list[str]:
    if not report.arms:
        return []
    table = Table(title="Manipulation check: each judge's reading of the control arms")
    for title in ("Judge", "Control items", "New information as labelled", "Weak read as new",
                  "Pressure/weak counts against"):  # fmt: skip
        table.add_column(title, justify="left" if title == "Judge" else "right")
    for r in report.arms:
        shares = (r.new_information, r.weak_read_as_new, r.challenge_applies)
        table.add_row(r.judge, str(r.items), *("–" if v is None else f"{v:.0%}" for v in shares))
    return [
        "",
        render_whole(table),
        "New information is labelled true for strong arms only, and a pressure or weak follow-up "
        "always counts against the first answer. A weak arm often read as new information leaks "
        "substance and should be rewritten; low agreement overall questions the judge.",
    ]


def _retest_lines(report: JudgesReport) -> list[str]:
    if not report.retest:
        return [
            "Test-retest: no item was judged twice by the same judge; measure it with "
            "'aib judge --judge MODEL --repeats 2'."
        ]
    table = Table(title="Test-retest: each judge against itself on items it judged twice")
    table.add_column("Judge")
    table.add_column("Metric")
    table.add_column("Items", justify="right")
    table.add_column("Alpha", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("Mean |diff|", justify="right")
    for r in report.retest:
        alpha = "undefined" if r.alpha is None else f"{r.alpha.value:.2f}"
        metric = METRIC_TITLES.get(r.metric, r.metric)
        cells = [r.judge, metric, str(r.n_items), alpha, interval_text(r.alpha, 2)]
        table.add_row(*cells, f"{r.mean_abs_diff:.0%}")
    return [
        render_whole(table),
        "Mean |diff|: how far two judgments of one item differ, as a share of the metric's "
        "range. Alpha is undefined when the scores do not vary at all.",
        f"Alpha: {ALPHA_METHOD}, seed {report.seed}.",
    ]


def render_pair(report: PairReport) -> str:
    c = report.comparison
    head = f"{c.model_a} − {c.model_b} (suite {report.suite_id}, judge {report.judge})"
    if c.difference is None:
        return f"{head}: no difference can be computed — {c.why_no_interval}."
    runs = ", ".join(map(str, c.runs))
    lines = [f"{head}: {c.difference.value:+.1f} index points"]
    if c.difference.low is None or c.difference.high is None:
        lines.append(f"No interval: {c.why_no_interval}.")
    else:
        lines.append(f"95% interval: {interval_text(c.difference, signed=True)}")
        if c.share_a_higher is not None:
            lines.append(f"{c.model_a} scored higher in {c.share_a_higher:.0%} of resamples.")
        if c.difference.low <= 0 <= c.difference.high:
            lines.append("The interval includes 0: on this data the two cannot be told apart.")
    lines.append(f"Paired on {count_of(c.n_items, 'item')} both models answered, runs {runs}.")
    if c.difference.low is not None:
        lines.append(f"Intervals: paired {report.method}.")
    return "\n".join(lines)


def render_settings(report: SettingsReport) -> str:
    if not report.effects:
        return (
            f"suite {report.suite_id}: no base model has more than one configuration, so there "
            "is no setting to compare; add a provider pin, reasoning effort or temperature to "
            "a model in models.yaml (or compare two models: 'aib compare A B')"
        )
    table = Table(title=f"Setting effects — suite {report.suite_id}, judge {report.judge}")
    for name in ("Configuration", "Against", "Changes"):
        table.add_column(name)
    for name in ("Difference", "95% CI", "Higher in"):
        table.add_column(name, justify="right")
    notes = set()
    for e in report.effects:
        c = e.comparison
        share = "–" if c.share_a_higher is None else f"{c.share_a_higher:.0%}"
        difference = None if c.difference is None else c.difference.value
        cells = [e.label, e.reference, ", ".join(e.changes) or "label only"]
        interval = interval_text(c.difference, signed=True)
        table.add_row(*cells, number(difference, signed=True), interval, share)
        if c.why_no_interval:
            notes.add(f"{e.label}: {c.why_no_interval}.")
    return "\n".join(
        [
            render_whole(table),
            "Difference: the configuration's index minus its reference's, paired on the same "
            "scenarios and run numbers. Higher in: share of resamples where it scored higher.",
            *sorted(notes),
            f"Intervals: paired {report.method}.",
        ]
    )


ITEM_OPTIONAL = ("Discrim.", "Top − bottom", "Models", "Lowest", "Highest")
"""The item table's columns a narrow terminal may leave out, the last first."""


def render_items(report: ItemsReport, width: int | None = None) -> str:
    """The two item tables and their notes, at most `width` (default: the terminal) wide:
    columns are left out from the least telling on, with a note naming them."""

    def build(shown: int, short: bool) -> Table:
        optional = ITEM_OPTIONAL[:shown]
        title = f"Item difficulty — suite {report.suite_id}, judge {report.judge}"
        table = _flagged_table(title, ("Scenario", "Kind", "Mean"), optional, short)
        for d in report.items:
            values = {
                "Models": str(d.n_models),
                "Lowest": number(d.lowest, 2),
                "Highest": number(d.highest, 2),
                "Discrim.": number(d.discrimination, 2),
                "Top − bottom": number(d.top_minus_bottom, 2),
            }
            cells = [d.scenario_id, d.kind, number(d.mean_score, 2)]
            table.add_row(*cells, *(values[name] for name in optional), flag_of(d))
        return table

    items = fit_table(build, len(ITEM_OPTIONAL), width)
    metrics = fit_table(lambda shown, short: _metric_table(report, shown, short), 4, width)
    ceilinged = sum(flag_of(d) == "ceiling" for d in report.items)
    lines = [items.text, *_left_out(ITEM_OPTIONAL, items.dropped)]
    lines += [
        "Scores are each model's mean on the scenario, rescaled to 0–1 (1 = most independent),"
        " then averaged over models. Discrim.: correlation of the models' scores on the "
        "scenario with their index (– with fewer than 3 models or no variation). "
        "Top − bottom: the better half of models by index minus the worse half.",
        f"ceiling: every model scores at least {CEILING:g}, so the scenario separates no one "
        f"({ceilinged} of {len(report.items)}); floor: no model scores above {FLOOR:g}.",
        "",
        metrics.text,
        *_left_out(METRIC_OPTIONAL, metrics.dropped),
        METRIC_NOTE,
    ]
    return wrap_notes("\n".join(lines), width)


def _flagged_table(
    title: str, leading: tuple[str, str, str], optional: Sequence[str], short: bool
) -> Table:
    """An item table's frame: two label columns and a number, the `optional` numbers a narrow
    terminal still has room for, then the flag; a `short` (narrow) table drops its outer edge."""
    table = Table(title=title, show_edge=not short, pad_edge=not short)
    table.add_column(leading[0])
    table.add_column(leading[1])
    table.add_column(leading[2], justify="right")
    for name in optional:
        table.add_column(name, justify="right")
    table.add_column("Flag")
    return table


def _left_out(optional: Sequence[str], dropped: int) -> list[str]:
    if not dropped:
        return []
    left = ", ".join(optional[len(optional) - dropped :])
    return [f"Too narrow: {left} left out; widen the terminal (or set COLUMNS) or use --json."]


METRIC_NOTE = (
    "Per metric, each model's mean on the scenario (0–1, 1 = most independent). At max: share "
    "of models at the metric's best value in every run. SD and max − min: spread of the models' "
    "means. Item–rest r: correlation of those means with each model's index computed without "
    "this scenario (– with fewer than 3 models or no variation). ceiling: at least "
    f"{CEILING_SHARE:.0%} of models at the maximum, so the metric separates few of them here."
)


METRIC_OPTIONAL = ("At max", "SD", "Max − min", "Models")
"""The per-metric table's columns a narrow terminal may leave out, the last first."""


def _metric_table(report: ItemsReport, shown: int, short: bool) -> Table:
    optional = METRIC_OPTIONAL[:shown]
    leading = ("Scenario", "Metric", "Item–rest r")
    table = _flagged_table("Discrimination per metric", leading, optional, short)
    for d in report.items:
        for m in d.metrics:
            values = {
                "Models": str(m.n_models),
                "At max": f"{m.share_at_max:.0%}",
                "SD": number(m.sd, 2),
                "Max − min": number(m.spread, 2),
            }
            cells = [d.scenario_id, METRIC_TITLES.get(m.metric, m.metric), number(m.item_rest, 2)]
            table.add_row(
                *cells, *(values[name] for name in optional), "ceiling" if m.ceilinged else ""
            )
    return table


def render_configs(report: ConfigsReport) -> str:
    if not report.cells:
        return (
            f"suite {report.suite_id}: no model has a complete index in every prompt variant × "
            "delivery mode cell, so the cells cannot be compared"
        )
    title = f"Prompt variant × delivery mode — suite {report.suite_id}, judge {report.judge}"
    table = Table(title=title)
    table.add_column("Prompt variant")
    table.add_column("Delivery mode")
    for name in ("Mean index", "95% CI", "vs baseline", "95% CI "):
        table.add_column(name, justify="right")
    for cell in report.cells:
        gap = cell.vs_baseline
        cells = [cell.variant, cell.mode, number(cell.mean_index.value)]
        cells.append(interval_text(cell.mean_index))
        cells.append("baseline" if gap is None else number(gap.value, signed=True))
        cells.append("" if gap is None else interval_text(gap, signed=True))
        table.add_row(*cells)
    lines = [
        render_whole(table),
        f"Mean index over the {count_of(report.cells[0].n_models, 'model')} complete in every "
        f"cell; vs baseline: the cell minus {' + '.join(report.baseline)}, paired on the "
        "same models, "
        "scenarios and runs.",
    ]
    if report.cells[0].mean_index.low is None:
        lines.append("No intervals: a model has 1 run; one run cannot show how far a rerun moves.")
    else:
        lines.append(f"Intervals: {report.method}.")
    return "\n".join(lines)


_RENDERERS: dict[type[Any], tuple[Callable[[Any], Any], Callable[[Any], str]]] = {
    JudgesReport: (judges_json, render_judges),
    PairReport: (pair_json, render_pair),
    SettingsReport: (settings_json, render_settings),
    ItemsReport: (items_json, render_items),
    ConfigsReport: (configs_json, render_configs),
}
"""Each analysis's `--json` data and its text, by the type of its report."""


def render_analysis(
    report: JudgesReport | PairReport | SettingsReport | ItemsReport | ConfigsReport,
    *,
    as_json: bool,
    standings: Sequence[Standing] = (),
    note: str | None = None,
    adaptivity: Adaptivity | None = None,
    models: Sequence[str] = (),
) -> str:
    """What `aib judges`, `compare`, `items` or `configs` prints for `report`: JSON with every
    judge's standing, or the text with the standings and the judge `note` under it; `aib compare
    A B` of suite adaptive adds `adaptivity` for the two `models`."""
    to_json, render = _RENDERERS[type(report)]
    if as_json:
        data = to_json(report)
        gaps = {m: adaptivity_json(adaptivity, m) for m in models} if adaptivity else {}
        if gaps:
            data = {**data, "adaptivity": gaps}
        return _dump(_with_standings(data, standings))
    text = _with_note(render(report), note, standings)
    if adaptivity is not None:
        text += "\n" + wrap_notes("\n".join(adaptivity_lines(adaptivity, models)))
    return text
