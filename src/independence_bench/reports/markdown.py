"""LEADERBOARD.md: the report for people, in Markdown that reads well on GitHub and as text.

One section per suite: the ranking, a legend saying what every number means, the charts,
per-model detail (metrics per experiment, items scored, runs, cost), item difficulty and, where
the suite has it, the prompt variant × delivery mode analysis. Model labels, judge names and
suite ids are untrusted text, so they pass through `md_text`, which escapes everything Markdown
or HTML would interpret.

`summary_lines` goes under a suite's heading (what was selected, and what the shown results
cost); `extra_sections` after the per-model detail: detailed metrics with intervals, the names
and genders each model chose, judge validation (when a second judge or repeated judgments
exist) and provider/setting comparisons (when a base model has several configurations). A
section the store has nothing for is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from independence_bench.gathering.details import DETAILED
from independence_bench.gathering.spend import report_spend
from independence_bench.gathering.suite_report import ModelReport, SuiteReport, metric_scale
from independence_bench.reports.analyses import flag_of, model_labels
from independence_bench.reports.format import METRIC_MEANINGS, interval_text, number
from independence_bench.reports.leaderboard import (
    METRIC_TITLES,
    RANK_NOTE,
    adaptivity_markdown,
    counted_text,
    evidence_ceiling_note,
    format_detailed,
    leaders_note,
    rank_text,
    why_undefined,
)
from independence_bench.reports.spend import cost_table, spend_line
from independence_bench.scoring.scoring import LOWER_IS_MORE_INDEPENDENT, Formula, get_formula
from independence_bench.stats.agreement import ALPHA_METHOD
from independence_bench.stats.analysis import CEILING_SHARE, baseline_of
from independence_bench.suites.suite import SUITE_HASH_CHARS
from independence_bench.text.counts import count_of
from independence_bench.text.outputs import md_text
from independence_bench.version import __version__


def _usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _cost_cell(model: ModelReport) -> str:
    if model.cost.usd is None:
        if model.cost.known_usd:
            return f"unknown (≥ {_usd(model.cost.known_usd)})"
        return "unknown"
    return _usd(model.cost.usd)


def _rank_cell(model: ModelReport) -> str:
    row = model.row
    if row is None or row.rank is None:
        return "–"
    return rank_text(row) if row.rank_low is not None else f"{row.rank}\\*"


DEVIATION_TITLES = {
    "plain_content": "answered in plain text instead of calling the tool",
    "text_tool_call": "wrote the tool call as text (read from it)",
}


def _ranking(report: SuiteReport) -> list[str]:
    keys = report.metric_keys
    head = ["Rank", "Model", "Index", "95% interval", "Runs"]
    head += [METRIC_TITLES.get(k, k) for k in keys]
    head += ["Scored", "Protocol deviations", "Cost", "Index per $"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    starred = False
    for model in report.models:
        row = model.row
        rank = _rank_cell(model)
        starred = starred or rank.endswith("\\*")
        index = "incomplete" if row is None or row.index is None else f"{row.index:.1f}"
        interval = "–"
        if row and row.ci_low is not None and row.ci_high is not None:
            interval = f"{row.ci_low:.1f}–{row.ci_high:.1f}"
        cells = [rank, md_text(model.model), index, interval, str(model.runs)]
        for key in keys:
            found = row.metrics.get(key) if row else None
            cells.append(number(found.value if found else None, 2))
        cells.append(f"{model.scored}/{model.items}")
        cells.append(str(model.protocol_deviations))
        cells.append(_cost_cell(model))
        cells.append(number(model.index_per_usd, 0))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", RANK_NOTE]
    leaders = leaders_note(report.leaderboard.rows)
    if leaders:
        lines[-1] += f" {leaders}"
    ceiling = evidence_ceiling_note(report.leaderboard)
    if ceiling:
        lines += ["", f"**Reading the evidence term.** {ceiling}"]
    if starred:
        lines += ["", "\\* Ranked by point index only: no rank interval (see the model's detail)."]
    return lines


def _index_range(formula: Formula) -> str:
    """0–100, or lower when a term can be negative (v3's evidence sensitivity)."""
    low, high = formula.index_range
    return f"0–{high:g}" if not low else f"−{abs(low):g} to {high:g}"


def _signed_note(formula: Formula) -> str:
    signed = [term.label for term in formula.terms if term.subtracted]
    if not signed:
        return ""
    return (
        f"; {', '.join(signed)} runs from −1 to 1 (negative: moves more for pressure than evidence)"
    )


def _legend(report: SuiteReport) -> list[str]:
    formula = get_formula(report.formula)
    terms = ", ".join(f"{t.weight:.0%} {t.label}" for t in formula.terms)
    lines = [
        f"- **Index** ({_index_range(formula)}): formula `{report.formula}` = {terms}. Each term "
        "is scaled to 0–1 with 1 = most independent; drift and name/gender changes count "
        "inversely" + _signed_note(formula) + ".",
    ]
    for key in report.metric_keys:
        direction = "lower" if key in LOWER_IS_MORE_INDEPENDENT else "higher"
        scale = metric_scale(report.formula, key)
        lines.append(
            f"- **{METRIC_TITLES.get(key, key)}** (`{key}`, 0–{scale:g}, {direction} = more "
            f"independent): {METRIC_MEANINGS.get(key, key)}."
        )
    lines += [
        f"- **95% interval**: {md_text(report.leaderboard.method)}. A model with one run "
        "has no interval: one run cannot show how far a rerun moves its score.",
        "- **Rank**: the model's place by index and, in brackets, its own 95% rank interval "
        "from the same resamples, e.g. 3 (2–6). Each interval is the model's own: two models "
        "whose intervals overlap may still differ from a third; compare two with `aib compare`.",
        "- **Scored**: items with a valid judgment by this judge / items run. Unscored judge "
        "replies and failed conversations are left out, never counted as 0.",
        "- **Protocol deviations**: `tool_role` turns answered without a structured call of "
        "`send_message_to_human` — in plain text, or with the call written out as text (its "
        "message is read from it). They are scored like other turns; see the model's detail.",
        "- **Cost**: the sum of the stored cost of every call the model answered, over all "
        "runs; *unknown* when any call has no cost. **Index per $**: index ÷ cost of one run.",
    ]
    return lines


def _model_detail(report: SuiteReport, model: ModelReport) -> list[str]:
    row = model.row
    lines = [f"### {md_text(model.model)}", ""]
    if row is None:
        lines.append(f"No scored items ({count_of(model.items, 'item')}, {model.failed} failed).")
        return lines
    summary = "incomplete" if row.index is None else f"index **{row.index:.1f}**"
    if row.ci_low is not None and row.ci_high is not None:
        summary += f" (95% interval {row.ci_low:.1f}–{row.ci_high:.1f})"
    if row.rank_low is not None:
        summary += f", rank {row.rank} (rank interval {row.rank_low}–{row.rank_high})"
    summary += (
        f"; {count_of(model.runs, 'run')}; {model.scored}/{count_of(model.items, 'item')} scored"
    )
    if model.unscored or model.failed:
        summary += f" ({model.unscored} unscored, {model.failed} failed)"
    lines.append(summary + ".")
    if model.protocol_deviations:
        kinds = ", ".join(
            f"{n} {DEVIATION_TITLES.get(kind, kind)}" for kind, n in model.deviations.items()
        )
        deviations = count_of(model.protocol_deviations, "turn")
        lines.append(f"Protocol deviations: {deviations} ({kinds}).")
    if row.why_no_interval:
        lines.append(f"No interval: {md_text(row.why_no_interval)}.")
    if row.missing:
        lines.append(f"Missing metrics: {', '.join(row.missing)}.")
    cost = f"Cost: {_cost_cell(model)} over {count_of(model.cost.calls, 'call')}"
    if model.cost.unpriced:
        cost += f" ({model.cost.unpriced} without a cost)"
    if model.cost_per_run is not None:
        cost += f"; {_usd(model.cost_per_run)} per run"
    if model.index_per_usd is not None:
        cost += f"; {model.index_per_usd:,.0f} index points per $"
    lines += ["", cost + ".", ""]
    keys = report.metric_keys
    lines.append("| Experiment | Items | Scored | Unscored | Failed | " + " | ".join(
        METRIC_TITLES.get(k, k) for k in keys) + " |")  # fmt: skip
    lines.append("|---|" + "---:|" * (4 + len(keys)))
    for detail in model.experiments:
        cells = [detail.experiment, str(detail.items), str(detail.scored)]
        cells += [str(detail.unscored), str(detail.failed)]
        cells += [number(detail.metrics.get(k), 2) for k in keys]
        lines.append("| " + " | ".join(cells) + " |")
    runs = ", ".join(f"run {r}: {number(v)}" for r, v in sorted(model.run_indexes.items()))
    lines += ["", f"Index per run: {runs}." if runs else "No run has an index."]
    metrics = [
        f"{METRIC_TITLES.get(k, k)} {number(v.value, 2)} ({interval_text(v, 2, join='–')})"
        for k, v in row.metrics.items()
    ]
    if metrics:
        lines.append("Metrics with 95% intervals: " + "; ".join(metrics) + ".")
    return lines


def _difficulty(report: SuiteReport) -> list[str]:
    lines = [
        "Per scenario: each model's mean item score on 0–1 (1 = most independent), averaged "
        "over models; *discrimination* is the correlation of models' scores on the scenario with "
        "their index, and *top − bottom* the gap between the better and worse half of models. "
        "*ceiling*: every model scores near the top, so the scenario cannot separate them; "
        "*floor*: no model does well.",
        "",
        "| Scenario | Kind | Models | Mean | Lowest | Highest | Discrimination | Top − bottom "
        "| Flag |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for d in sorted(report.difficulty, key=lambda d: (-d.mean_score, d.kind, d.scenario_id)):
        cells = [md_text(d.scenario_id), md_text(d.kind), str(d.n_models)]
        cells += [number(d.mean_score, 2), number(d.lowest, 2), number(d.highest, 2)]
        cells += [number(d.discrimination, 2), number(d.top_minus_bottom, 2), flag_of(d)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, "", *_metric_discrimination(report)]


def _metric_discrimination(report: SuiteReport) -> list[str]:
    lines = [
        "Per metric on each scenario, from each model's mean (0–1): the share of models at the "
        "metric's best value in every run, the spread of the models' means (SD and max − min), "
        "and the *item–rest* correlation of those means with each model's index computed "
        f"without the scenario. *ceiling*: at least {CEILING_SHARE:.0%} of models at the maximum.",
        "",
        "| Scenario | Metric | Models | At max | SD | Max − min | Item–rest r | Flag |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for d in sorted(report.difficulty, key=lambda d: (-d.mean_score, d.kind, d.scenario_id)):
        for m in d.metrics:
            cells = [md_text(d.scenario_id), METRIC_TITLES.get(m.metric, m.metric)]
            cells += [
                str(m.n_models),
                f"{m.share_at_max:.0%}",
                number(m.sd, 2),
                number(m.spread, 2),
            ]
            cells += [number(m.item_rest, 2), "ceiling" if m.ceilinged else ""]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _configs(report: SuiteReport) -> list[str]:
    models = report.configs[0].n_models
    lines = [
        f"Mean index over the {count_of(models, 'model')} complete in every cell, and each cell's "
        "difference from the "
        + " + ".join(f"`{md_text(part)}`" for part in baseline_of(report.configs))
        + " baseline (paired, 95% interval); with one delivery mode that difference is the "
        "prompt effect.",
        "",
        "| Prompt variant | Delivery mode | Mean index | Interval | vs baseline | Interval |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for cell in report.configs:
        gap = cell.vs_baseline
        cells = [md_text(cell.variant), md_text(cell.mode), number(cell.mean_index.value)]
        cells += [
            interval_text(cell.mean_index, join="–"),
            "baseline" if gap is None else f"{gap.value:+.1f}",
        ]
        cells.append(interval_text(gap, join="–"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


CHART_CAPTIONS = {
    "index": "Independence Index with 95% intervals",
    "profile": "Index terms per model",
    "pressure": "Before and under pressure",
    "survival": "Survival under escalating pressure",
    "hold_update": "Holding versus updating on evidence",
    "adaptivity": "Adaptivity gap: holding under adaptive pressure minus under the script",
}


def _suite_section(report: SuiteReport, charts: Sequence[Path]) -> list[str]:
    hashes = ", ".join(h[:SUITE_HASH_CHARS] for h in report.suite_hashes)
    judge = "none yet: judge the transcripts with `aib judge --judge MODEL`"
    if report.judge is not None:
        judge = f"{md_text(report.judge)} (its calls cost {_usd(report.judge_cost.usd)})"
    lines = [
        f"## Suite {md_text(report.suite_id)}",
        "",
        f"Judge: {judge} · formula `{report.formula}` · suite hash {hashes} · "
        f"{count_of(len(report.models), 'model')}.",
        "",
        *summary_lines(report),
        *_ranking(report),
        "",
        "### How to read the scores",
        "",
        *_legend(report),
        "",
    ]
    if charts:
        lines += ["### Charts", ""]
        for path in charts:
            caption = CHART_CAPTIONS.get(path.stem, path.stem)
            lines += [f"![{caption}]({path.as_posix()})", ""]
    lines += ["### Models", ""]
    for model in report.models:
        lines += [*_model_detail(report, model), ""]
    lines += ["### Cost and prompt caching", "", *cost_table(report), ""]
    compared = sum(model.row is not None for model in report.models)
    if report.difficulty and compared > 1:
        lines += ["### Item difficulty", "", *_difficulty(report), ""]
    elif report.difficulty:  # one model: every spread and correlation would read "–"
        lines += ["Item difficulty is left out: it compares models, and one is scored.", ""]
    if report.configs:
        lines += ["### Prompt variant × delivery mode", "", *_configs(report), ""]
    return [*lines, *extra_sections(report)]


def render_leaderboard(
    reports: Sequence[SuiteReport], charts: Mapping[str, Sequence[Path]] | None = None
) -> str:
    """The whole LEADERBOARD.md; `charts` maps a suite id to its chart paths (relative)."""
    lines = [
        "# AI Independence Bench — leaderboard",
        "",
        f"Generated by ai-independence-bench {__version__} from the stored transcripts and "
        "judgments; every number traces to an item in `results.json`.",
        "",
    ]
    for report in reports:
        if report.standing is not None:
            lines += [f"> **Suite {report.suite_id}.** {report.standing.caption()}", ""]
        if report.judge_note:
            lines += [f"> {report.judge_note}", ""]
    for report in reports:
        lines += _suite_section(report, (charts or {}).get(report.suite_id, ()))
    return "\n".join(lines).rstrip() + "\n"


# -- sections: selection, summary, detailed metrics, judges, settings, spend ----------------------


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
            why = why_undefined(metric, found.shared)
            text = f"undefined ({why})" if alpha is None else f"{alpha.value:.2f}"
            lines.append(f"- {title}: {text}")
    for retest in found.retest:
        retest_alpha = "undefined" if retest.alpha is None else f"{retest.alpha.value:.2f}"
        metric = METRIC_TITLES.get(retest.metric, retest.metric)
        lines.append(
            f"- Test-retest, {md_text(retest.judge)}, {metric}: alpha {retest_alpha} over "
            f"{count_of(retest.n_items, 'item')}, mean |diff| {retest.mean_abs_diff:.0%}"
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
    if report.adaptivity is not None:
        lines += adaptivity_markdown(report.adaptivity, [m.model for m in report.models])
    lines += [f"Not shown: {md_text(why)}" for why in report.extras.skipped]
    return lines
