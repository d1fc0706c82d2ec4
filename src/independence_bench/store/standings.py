"""A judge's measured agreement with a reference judge, as the store's own
`aib judges --reference` recorded it (table `judge_standings`, one row per judge, the latest
measurement winning). `gathering/standings.py` turns a row into the standing every report shows.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass

from independence_bench.store.store import Store


@dataclass(frozen=True)
class StoredStanding:
    """One judge's agreement with `reference` on the items both scored in `suite_id`."""

    judge: str
    reference: str
    suite_id: str
    index_rho: float | None
    """Spearman rho of the two judges' per-model index (None: undefined or too few models)."""
    models: int
    """How many models `index_rho` is over."""
    metrics: Mapping[str, float | None]
    """Item-level Spearman rho per metric (None: undefined)."""
    measured_at: float


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def record_standing(store: Store, standing: StoredStanding) -> None:
    """Write (or replace) `standing.judge`'s row."""
    metrics = {k: _finite(v) for k, v in standing.metrics.items()}
    store.connection.execute(
        "INSERT OR REPLACE INTO judge_standings (judge_model, reference_model, suite_id, "
        "index_rho, models, metrics_json, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            standing.judge,
            standing.reference,
            standing.suite_id,
            _finite(standing.index_rho),
            standing.models,
            json.dumps(metrics, sort_keys=True),
            standing.measured_at or time.time(),
        ),
    )


def stored_standing(store: Store, judge: str) -> StoredStanding | None:
    """`judge`'s recorded row, or None when this store never measured it."""
    try:
        row = store.connection.execute(
            "SELECT * FROM judge_standings WHERE judge_model = ?", (judge,)
        ).fetchone()
    except sqlite3.OperationalError:  # an older store opened read-only where it cannot upgrade
        return None
    if row is None:
        return None
    raw = json.loads(row["metrics_json"])
    metrics = {
        str(k): (float(v) if isinstance(v, int | float) else None)
        for k, v in (raw.items() if isinstance(raw, dict) else ())
    }
    return StoredStanding(
        judge=row["judge_model"],
        reference=row["reference_model"],
        suite_id=row["suite_id"],
        index_rho=row["index_rho"],
        models=int(row["models"]),
        metrics=metrics,
        measured_at=float(row["measured_at"]),
    )


def suite_judge_counts(store: Store, suite_id: str) -> dict[str, int]:
    """Scored first judgments per judge in `suite_id`, most first, then the first to judge (so
    the first key is `results.choose_scoring_judge`'s default)."""
    rows = store.connection.execute(
        "SELECT j.judge_model, COUNT(*) FROM judgments j JOIN items i ON i.id = j.item_id "
        "JOIN runs r ON r.id = i.run_id WHERE r.suite_id = ? AND j.status = 'scored' "
        "AND j.repeat = 0 GROUP BY j.judge_model ORDER BY COUNT(*) DESC, MIN(j.id)",
        (suite_id,),
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}
