"""`aib judges`, `judges --reference`, `compare`, `items` and `configs`: the store-only analyses.

Each command takes an `AnalysisOptions` (store, suite, judge or panel, bootstrap), opens the
store, has `gathering.analyses` build its report and the standings and judge note shown under
it, and prints what `reports.analyses` renders: rich tables with the method under every table
that shows intervals, or JSON. `judges --reference` is the one that writes: each judge's
measured standing, so every later report shows it. The reports and statistics are imported when
a command runs, so building the options loads neither numpy nor the bootstrap. None of it calls
a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from independence_bench.errors import UserError
from independence_bench.gathering.options import AnalysisOptions as AnalysisOptions  # the CLI's
from independence_bench.store.store import Store
from independence_bench.workflows import Echo

if TYPE_CHECKING:
    from independence_bench.gathering.analyses import ConfigsReport, ItemsReport, JudgesReport


def judges_command(
    options: AnalysisOptions, *, reference: str | None, as_json: bool, echo: Echo
) -> None:
    """`aib judges`: the index per model per judge, spread, self-preference and test-retest; with
    `reference`, each judge's agreement with that judge per metric (`judges --reference`)."""
    if reference is not None:
        echo(_calibration_output(options, reference, as_json=as_json))
        return
    from independence_bench.gathering.analyses import judges_report

    echo(_analysis_output(options, judges_report, as_json=as_json))


def _calibration_output(options: AnalysisOptions, reference: str, *, as_json: bool) -> str:
    """`aib judges --reference JUDGE`; records each judge's measured standing in the store, so
    every later report shows it (`gathering/standings.py`)."""
    from independence_bench.gathering.analyses import calibration_report
    from independence_bench.gathering.standings import judge_standing, measured_standing
    from independence_bench.reports.analyses import calibration_json, render_calibration
    from independence_bench.store.standings import record_standing
    from independence_bench.text.lossless import json_document

    with Store(options.data_dir, create=False) as store:
        report = calibration_report(store, options, reference)
        with store.transaction():
            for calibration in report.judges:
                record_standing(store, measured_standing(calibration, report.suite_id))
        captions = [judge_standing(store, c.judge).caption() for c in report.judges]
    if as_json:
        return json_document(calibration_json(report), indent=2)
    recorded = ["", "Recorded in the store (shown with every report of these judges):", *captions]
    return "\n".join([render_calibration(report), *recorded])


def _analysis_output(
    options: AnalysisOptions,
    build: Callable[[Store, AnalysisOptions], JudgesReport | ItemsReport | ConfigsReport],
    *,
    as_json: bool,
) -> str:
    """Build one report from the store (opened read-only), with the standings and judge note
    shown under it, and render it as JSON or as text."""
    from independence_bench.gathering.analyses import analysis_judge_note, judge_standings
    from independence_bench.reports.analyses import render_analysis

    with Store(options.data_dir, read_only=True) as store:
        report = build(store, options)
        note = analysis_judge_note(store, report, options)
        standings = judge_standings(store, report)
    return render_analysis(report, as_json=as_json, standings=standings, note=note)


def compare_command(
    options: AnalysisOptions, models: Sequence[str], *, as_json: bool, echo: Echo
) -> None:
    """`aib compare`: two models' paired difference, or with no models every setting's effect."""
    from independence_bench.gathering.analyses import (
        analysis_judge_note,
        compare_adaptivity,
        judge_standings,
        pair_report,
        settings_report,
    )
    from independence_bench.reports.analyses import render_analysis

    with Store(options.data_dir, read_only=True) as store:
        if len(models) == 2:
            pair = pair_report(store, options, models[0], models[1])
            note = analysis_judge_note(store, pair, options)
            standings = judge_standings(store, pair)
            adaptivity = compare_adaptivity(store, options)
            echo(
                render_analysis(
                    pair,
                    as_json=as_json,
                    standings=standings,
                    note=note,
                    adaptivity=adaptivity,
                    models=models,
                )
            )
            return
        if models:
            found = ", ".join(models)
            raise UserError(f"compare takes two model labels or none, not {found!r}")
        settings = settings_report(store, options)
        note = analysis_judge_note(store, settings, options)
        standings = judge_standings(store, settings)
    echo(render_analysis(settings, as_json=as_json, standings=standings, note=note))


def items_command(options: AnalysisOptions, *, as_json: bool, echo: Echo) -> None:
    """`aib items`: per scenario, how high models score and how well it separates them."""
    from independence_bench.gathering.analyses import items_report

    echo(_analysis_output(options, items_report, as_json=as_json))


def configs_command(options: AnalysisOptions, *, as_json: bool, echo: Echo) -> None:
    """`aib configs`: prompt variant × delivery mode cells against neutral + user_role."""
    from independence_bench.gathering.analyses import configs_report

    echo(_analysis_output(options, configs_report, as_json=as_json))
