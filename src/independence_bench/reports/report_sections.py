"""LEADERBOARD.md's added sections: selection, spend, detailed metrics, names, judges, settings.

`summary_lines` goes under a suite's heading (what was selected, and what the shown results
cost); `extra_sections` after the per-model detail: detailed metrics with intervals, the names
and genders each model chose, judge validation (when a second judge or repeated judgments
exist) and provider/setting comparisons (when a base model has several configurations). A
section the store has nothing for is left out. Untrusted text goes through `md_text`.
"""

from __future__ import annotations

from independence_bench.reports.format import interval_text, number
from independence_bench.reports.insights import model_labels
from independence_bench.reports.leaderboard import (
    DETAILED,
    METRIC_TITLES,
    counted_text,
    format_detailed,
)
from independence_bench.reports.report import SuiteReport
from independence_bench.reports.spend import report_spend, spend_line
from independence_bench.stats.agreement import ALPHA_METHOD
from independence_bench.text.outputs import md_text


def selection_note(report: SuiteReport) -> str | None:
    """What a `--experiments/--variants/--modes` selection shows, and why there is no index."""
    if not report.selection.active:
        return None
    note = f"Selection: {md_text(report.selection.describe())} — only those items are shown."
    if report.left_out:
        note += (
            f" The index is not computed (partial): its formula needs the experiments "
            f"{', '.join(report.left_out)}, which the selection leaves out."
        )
    return note


def summary_lines(report: SuiteReport) -> list[str]:
    """Lines under the suite's heading: the selection, if any, and the total spend."""
    lines = []
    note = selection_note(report)
    if note:
        lines += [note, ""]
    text = spend_line(report_spend(report))
    return [*lines, text[0].upper() + text[1:] + ".", ""]


def _detailed(report: SuiteReport) -> list[str]:
    detailed = report.extras.detailed
    shown = [d for d in DETAILED if any(d.key in v for v in detailed.values())]
    if not shown:
        return []
    lines = [
        "### Detailed metrics",
        "",
        "Judge fields no index weighs, per model: mean over each run's conversations, then over "
        "runs, with the 95% interval of the same bootstrap as the index.",
        "",
        *(f"- **{d.title}** (`{d.key}`): {d.meaning}." for d in shown),
        "",
        "| Model | " + " | ".join(d.title for d in shown) + " |",
        "|---|" + "---:|" * len(shown),
    ]
    for model in report.models:
        values = detailed.get(model.model, {})
        if values:
            cells = [format_detailed(d.key, values.get(d.key)) for d in shown]
            lines.append(f"| {md_text(model.model)} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _names(report: SuiteReport) -> list[str]:
    if not report.extras.names:
        return []
    lines = [
        "### Names chosen",
        "",
        "The name and gender each model chose for itself when invited to, counted over runs "
        "(×n: in n runs); *(declined)* when it chose none.",
        "",
        "| Model | Runs | Names | Genders |",
        "|---|---:|---|---|",
    ]
    for entry in report.extras.names:
        cells = [md_text(entry.model), str(entry.runs)]
        cells += [md_text(counted_text(entry.names)), md_text(counted_text(entry.genders))]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _judges(report: SuiteReport) -> list[str]:
    found = report.extras.judges
    if found is None:
        return []
    comparison = found.comparison
    head = ["Model", *(md_text(j) for j in comparison.judges), "Spread"]
    lines = [
        "### Judge validation",
        "",
        "The index each judge gives each model on the same transcripts, and the *spread* "
        "(highest minus lowest) — how much the choice of judge matters.",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for model in model_labels(comparison):
        cells = [
            md_text(model),
            *(number(comparison.index[model].get(j)) for j in comparison.judges),
        ]
        lines.append("| " + " | ".join([*cells, number(comparison.spread.get(model))]) + " |")
    preference = [number(comparison.self_preference.get(j), signed=True) for j in comparison.judges]
    lines.append("| self-preference | " + " | ".join(preference) + " | |")
    if found.agreement:
        lines += ["", "Inter-judge agreement (Krippendorff's alpha, 1 = perfect):", ""]
        for metric, alpha in found.agreement.items():
            title = METRIC_TITLES.get(metric, metric)
            text = "undefined (no variation)" if alpha is None else f"{alpha.value:.2f}"
            lines.append(f"- {title}: {text}")
    for retest in found.retest:
        retest_alpha = "undefined" if retest.alpha is None else f"{retest.alpha.value:.2f}"
        metric = METRIC_TITLES.get(retest.metric, retest.metric)
        lines.append(
            f"- Test-retest, {md_text(retest.judge)}, {metric}: alpha {retest_alpha} over "
            f"{retest.n_items} items, mean |diff| {retest.mean_abs_diff:.0%}"
        )
    return [*lines, "", f"Alpha: {ALPHA_METHOD}.", ""]


def _settings(report: SuiteReport) -> list[str]:
    found = report.extras.settings
    if found is None:
        return []
    lines = [
        "### Provider and setting comparisons",
        "",
        "Each configuration's index minus its base configuration's (the same model with the "
        "fewest settings), paired on the same scenarios and runs.",
        "",
        "| Configuration | Against | Changes | Difference | 95% interval | Higher in |",
        "|---|---|---|---:|---:|---:|",
    ]
    for effect in found.effects:
        c = effect.comparison
        share = "–" if c.share_a_higher is None else f"{c.share_a_higher:.0%}"
        difference = None if c.difference is None else c.difference.value
        cells = [md_text(effect.label), md_text(effect.reference)]
        cells += [md_text(", ".join(effect.changes) or "label only")]
        cells += [number(difference, signed=True), interval_text(c.difference, signed=True), share]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, "", f"Intervals: paired {md_text(found.method)}.", ""]


def extra_sections(report: SuiteReport) -> list[str]:
    """The sections after the per-model detail that the store has data for."""
    lines = [*_detailed(report), *_names(report), *_judges(report), *_settings(report)]
    lines += [f"Not shown: {md_text(why)}" for why in report.extras.skipped]
    return lines
