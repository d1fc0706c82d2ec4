"""The report's optional sections, gathered from the store when it has what they need.

`build_extras` adds to a `SuiteReport` what users of the earlier benchmark read beside the
ranking: the detailed metrics and chosen names (`gathering.details`), the judge validation of
`aib judges` when the suite has a second judge or repeated judgments, and the setting
comparisons of `aib compare` when a base model was run with several provider pins, reasoning
efforts or temperatures. Everything here reads the store only.
"""

from __future__ import annotations

from dataclasses import dataclass

from independence_bench.errors import UserError
from independence_bench.gathering.analyses import (
    JudgesReport,
    SettingsReport,
    judges_report,
    settings_of,
)
from independence_bench.gathering.details import ModelDetails, chosen_names, detailed_metrics
from independence_bench.gathering.options import AnalysisOptions
from independence_bench.scoring.results import SuiteResults
from independence_bench.stats.core import Resampling
from independence_bench.store.store import Store


@dataclass(frozen=True)
class SuiteExtras(ModelDetails):
    """The optional parts of one suite's report; empty or None where the store lacks them."""

    judges: JudgesReport | None
    """Judge validation: set when a second judge or repeated judgments exist."""
    settings: SettingsReport | None
    """Setting comparisons: set when a base model has configurations to compare."""
    skipped: tuple[str, ...] = ()
    """Why a section the store seemed to have could not be computed."""


NO_EXTRAS = SuiteExtras({}, (), None, None)


def build_extras(
    store: Store,
    results: SuiteResults,
    *,
    resampling: Resampling = Resampling(),
) -> SuiteExtras:
    """The optional sections for the suite `results` reads (see the module docstring)."""
    options = AnalysisOptions(
        data_dir=store.path.parent,
        suite_id=results.suite_id,
        judge=results.judge,
        resampling=resampling,
        selection=results.selection,
    )
    skipped: list[str] = []
    judges = None
    scored = [j for j in results.judgments if j.status == "scored"]
    if len({j.judge_model for j in scored}) > 1 or any(j.repeat for j in scored):
        try:
            judges = judges_report(store, options)
        except UserError as exc:
            skipped.append(f"judge validation: {exc}")
    settings = None
    if results.scored:
        try:
            found = settings_of(results, options)
            settings = found if found.effects else None
        except UserError as exc:
            skipped.append(f"setting comparisons: {exc}")
    return SuiteExtras(
        detailed=detailed_metrics(results, resampling=resampling),
        names=chosen_names(results),
        judges=judges,
        settings=settings,
        skipped=tuple(skipped),
    )
