"""A judge's standing, shown beside every number it produced.

Three standings: *calibrated* (this store measured the judge against a reference with
`aib judges --reference`), *smoke test* (an embedded judge: the figures shipped in
`data/judges/standing.yaml`, from `benchmarks/judge_calibration.py`, or the store's own), and
*not calibrated* (nothing measured). `judge_standing` picks one; `caption` is the line under the
terminal table, at the top of LEADERBOARD.md and in chart footers; `as_json` the field of
`results.json` and the viewer.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

from independence_bench.stats.agreement import INDEX, JudgeCalibration
from independence_bench.store.standings import StoredStanding, stored_standing, suite_judge_counts
from independence_bench.store.store import Store

StandingKind = Literal["calibrated", "smoke test", "not calibrated"]

RHO_TARGET = 0.7
"""The per-model index rho a judge needs against a strong reference to rank models."""


class _ShippedJudge(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    standing: Literal["smoke test"]
    reference: str
    source: str
    index: float | None
    configurations: int
    metrics: dict[str, float | None]


class _ShippedFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    judges: dict[str, _ShippedJudge]


def shipped_standings() -> dict[str, _ShippedJudge]:
    """The embedded judges' figures shipped in `data/judges/standing.yaml`."""
    resource = resources.files("independence_bench").joinpath("data", "judges", "standing.yaml")
    return _ShippedFile.model_validate(yaml.safe_load(resource.read_text("utf-8"))).judges


@dataclass(frozen=True)
class Standing:
    """How far one judge's numbers can be trusted, and where that was measured."""

    judge: str
    kind: StandingKind
    reference: str | None = None
    index_rho: float | None = None
    """Spearman rho of the per-model (or per-configuration) index against the reference."""
    units: int = 0
    """How many models (or, for the shipped figures, configurations) `index_rho` is over."""
    unit_name: str = "models"
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    """Item-level Spearman rho per metric against the reference."""
    source: str | None = None

    def caption(self) -> str:
        """One line: the judge, its standing and, when measured, the index rho and source."""
        head = f"Judge {self.judge}: {self.kind}"
        if self.reference is None:
            if self.kind == "smoke test":
                return f"{head} (not measured against a reference); do not compare models by it."
            return (
                f"{head}: its agreement with a strong judge was never measured; "
                "'aib judges --reference JUDGE' measures it."
            )
        rho = "undefined" if self.index_rho is None else f"{self.index_rho:+.2f}"
        measured = (
            f"{ranking_in_words(self.index_rho)} (index Spearman ρ {rho} against "
            f"{self.reference} over {self.units} {self.unit_name}; target ≥ {RHO_TARGET}; "
            f"{self.source})"
        )
        if self.kind == "smoke test":
            return f"{head} — {measured}; it shows the machinery runs, not which model is better."
        return f"{head} — {measured}."

    def as_json(self) -> dict[str, Any]:
        """The `judge_standing` field of `results.json` and the viewer's data."""
        return {
            "judge": self.judge,
            "standing": self.kind,
            "reference": self.reference,
            "index_spearman": self.index_rho,
            "index_over": f"{self.units} {self.unit_name}",
            "metrics_spearman": dict(self.metrics),
            "source": self.source,
            "caption": self.caption(),
        }


def ranking_in_words(rho: float | None) -> str:
    """What a judge's index rho against a strong judge means for ranking models, in words."""
    if rho is None:
        return "how this judge ranks models against a strong one is unknown"
    if rho >= RHO_TARGET:
        return "this judge ranks models much as a strong one does"
    if rho >= 0.4:
        return "this judge ranks models only partly as a strong one does"
    if rho > -0.2:
        return "this judge's ranking of models is unrelated to a strong one's"
    if rho > -RHO_TARGET:
        return "this judge ranks models roughly opposite to a strong one"
    return "this judge ranks models opposite to a strong one"


def _is_embedded(judge: str) -> bool:
    return judge.startswith("embedded:")


def judge_standing(store: Store | None, judge: str) -> Standing:
    """`judge`'s standing: the store's own measurement first, then the shipped figures of an
    embedded judge, else *not calibrated*."""
    stored = stored_standing(store, judge) if store is not None else None
    kind: StandingKind = "smoke test" if _is_embedded(judge) else "calibrated"
    if stored is not None:
        day = datetime.datetime.fromtimestamp(stored.measured_at, datetime.UTC).date()
        source = f"aib judges --reference on suite {stored.suite_id}, {day.isoformat()}"
        return Standing(
            judge,
            kind,
            reference=stored.reference,
            index_rho=stored.index_rho,
            units=stored.models,
            metrics=stored.metrics,
            source=source,
        )
    shipped = shipped_standings().get(judge)
    if shipped is not None:
        return Standing(
            judge,
            "smoke test",
            reference=shipped.reference,
            index_rho=shipped.index,
            units=shipped.configurations,
            unit_name="configurations",
            metrics=shipped.metrics,
            source=shipped.source,
        )
    return Standing(judge, "smoke test" if _is_embedded(judge) else "not calibrated")


def measured_standing(calibration: JudgeCalibration, suite_id: str) -> StoredStanding:
    """What `aib judges --reference` records for one judge: the per-model index rho and the
    item-level rho per metric."""
    index = next((o for o in calibration.models if o.metric == INDEX), None)
    return StoredStanding(
        judge=calibration.judge,
        reference=calibration.reference,
        suite_id=suite_id,
        index_rho=None if index is None else index.spearman,
        models=0 if index is None else len(index.judge_values),
        metrics={
            metric: None if a.spearman is None else round(a.spearman.value, 3)
            for metric, a in calibration.metrics.items()
            if metric != INDEX
        },
        measured_at=time.time(),
    )


def judge_note(
    judge: str | None, counts: Mapping[str, int], *, asked: bool, why: str | None = None
) -> str | None:
    """Which judge an output shows and why, with the other judges of the suite and the flag that
    picks one; None when the suite has no other judge."""
    others = {name: n for name, n in counts.items() if name != judge}
    if judge is None or not others:
        return None
    why = why or ("asked for with --judge" if asked else "the judge with the most scored items")
    listed = ", ".join(f"{name} ({n} item{'' if n == 1 else 's'})" for name, n in others.items())
    return f"Scores of judge {judge} ({why}). Also judged by: {listed}; pick one with --judge NAME."


def store_judge_note(
    store: Store, suite_id: str, judge: str | None, *, asked: bool, why: str | None = None
) -> str | None:
    """`judge_note` from the store's counts of `suite_id` (a panel, `A + B`, gets none)."""
    if judge is None or " + " in judge:
        return None
    return judge_note(judge, suite_judge_counts(store, suite_id), asked=asked, why=why)
