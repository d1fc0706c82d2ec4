"""How long the stored calls of some models took: what a resumed run's first ETA rests on.

A resumed run may have only a few calls left, each as slow as the ones stored before it; until
one of them is answered the progress display has no rate of its own. The stored calls of the
same models give one at once (`engine/progress.py` shows it as a rough `~` figure).
"""

from __future__ import annotations

from collections.abc import Collection

from independence_bench.store.store import Store


def mean_call_seconds(store: Store, model_ids: Collection[str]) -> float | None:
    """The mean wall time of the stored answered calls of `model_ids`; None when none is
    stored (or none recorded its time)."""
    if not model_ids:
        return None
    placeholders = ", ".join("?" for _ in model_ids)
    row = store.connection.execute(
        "SELECT AVG(latency_s) FROM completions "
        f"WHERE model_id IN ({placeholders}) AND latency_s > 0",
        tuple(model_ids),
    ).fetchone()
    value = row[0] if row is not None else None
    return float(value) if value is not None else None
