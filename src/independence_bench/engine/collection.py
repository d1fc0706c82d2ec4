"""How often Python's cycle collector runs while the engine runs: rarely, over the new objects.

A run holds tens of thousands of long-lived objects (the suite, the plan, every task of the
task graph, the imported modules) and makes a few hundred small objects per call. With
CPython's default thresholds (700 allocations per young collection) the collector runs every
few calls and, every tenth of those, walks the older generations again; on a 20 models × 5
runs command that was 7–10 % of the process's CPU (issue 39: 6.4 s with the thresholds below
against 7.0–7.3 s, pairs run back to back). `sparse_collection` moves every object alive at the
start into the permanent generation (`gc.freeze`: never walked again), makes young collections
rarer and puts both back at the end. Reference counting still frees everything that is not part
of a cycle at once; the threshold only bounds how long cyclic garbage waits.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Allocations minus deallocations between young collections (CPython's default: 700)."""


@contextmanager
def sparse_collection() -> Iterator[None]:
    """Collect cycles rarely and never walk what was alive at entry, until exit.

    Two engines in one process may end in either order: each puts the thresholds back only
    if they are still the ones it set, so the last to end leaves CPython's own."""
    thresholds = gc.get_threshold()
    paced = (max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    gc.freeze()
    gc.set_threshold(*paced)
    try:
        yield
    finally:
        if gc.get_threshold() == paced:
            gc.set_threshold(*thresholds)
        gc.unfreeze()
