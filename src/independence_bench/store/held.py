"""Answered replies the store could not take for lack of space: in memory, then a spill store.

When the store refuses a write even after making room (`no_space.py`), the engine stops
sending and the reply is held here, in memory; every later write, and the end of the run, try
the store again first. What the store still cannot take at the end is written to a small store
of its own beside it (`held-replies/` in the data directory: a file-size limit or a quota on
one file leaves room for another), which the next run moves into the store before it sends
anything. Only what neither takes is lost, and the last line counts it.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.errors import UserError
from independence_bench.store.no_space import StoreFull
from independence_bench.store.store import STORE_FILENAME, Store
from independence_bench.store.texts import EncodedRequest
from independence_bench.text.counts import count_of
from independence_bench.text.lossless import from_sql

SPILL_FOLDER = "held-replies"
"""The spill store's folder, inside the data directory."""


@dataclass(frozen=True)
class CompletionWrite:
    """One answered reply to store under its key, with the request as sent: what the engine's
    waves write (`engine/batches.py`) and what is held here when the store refuses it."""

    key: str
    model_id: str
    request: Mapping[str, Any]
    completion: Completion
    encoded: EncodedRequest | None = None
    """`request` in canonical parts, as its key was computed (`request_keys.keyed_record`)."""

    def into(self, store: Store) -> None:
        """Write it into `store` (the caller holds the transaction, if any)."""
        store.put_completion(
            self.key, self.model_id, self.request, self.completion, encoded=self.encoded
        )


class HeldCompletions:
    """Answered replies the store could not take yet, kept in memory until it can: the
    engine's one door for writing a completion."""

    def __init__(self) -> None:
        self._held: dict[str, CompletionWrite] = {}
        self.full: StoreFull | None = None
        """The first refusal, once the store refused a write."""

    def __len__(self) -> int:
        return len(self._held)

    def get(self, key: str) -> Completion | None:
        held = self._held.get(key)
        return None if held is None else held.completion

    def put(self, store: Store, write: CompletionWrite) -> bool:
        """Store the completion, or hold it if the store refuses it for lack of space
        (False). Earlier held ones go first, while the store takes them."""
        self._held[write.key] = write
        return self.flush(store) == 0 or write.key not in self._held

    def flush(self, store: Store) -> int:
        """Write the held completions the store takes now; how many are still held."""
        for held in list(self._held.values()):
            try:
                held.into(store)
            except StoreFull as full:
                self.full = self.full or full
                break
            del self._held[held.key]
        return len(self._held)

    def finish(self, store: Store, *, answered: int) -> None:
        """Write the held replies the store takes now, the rest to the spill store; if the
        store refused a write, end with one line saying how many of the `answered` calls were
        stored, kept for the next run, and lost (to be paid again)."""
        held = self.flush(store)
        if self.full is None:
            return
        spilled = self._spill(store) if held else 0
        lost = held - spilled
        kept = f"{count_of(spilled, 'answered call')} kept in {store.path.parent / SPILL_FOLDER}"
        raise UserError(
            f"the disk is full ({self.full.__cause__ or self.full}): no call was started after "
            f"it; {count_of(answered - held, 'answered call')} stored, {kept} for the next run, "
            f"{count_of(lost, 'answered call')} could not be and must be paid again; free some "
            "space and run the command again to resume"
        )

    def _spill(self, store: Store) -> int:
        """Write the held replies into the spill store, as far as it takes them; how many."""
        spilled = 0
        try:
            with Store(store.path.parent / SPILL_FOLDER) as spill:
                for held in list(self._held.values()):
                    held.into(spill)
                    del self._held[held.key]
                    spilled += 1
        except (StoreFull, UserError, OSError, sqlite3.Error):
            pass  # no room there either: the rest is lost, and counted
        return spilled


def take_spilled(store: Store) -> int:
    """Move the replies an earlier run spilled (`HeldCompletions.finish`) into `store`, then
    remove the spill store; how many. Called before a run sends anything."""
    folder = store.path.parent / SPILL_FOLDER
    if not (folder / STORE_FILENAME).exists():
        return 0
    with Store(folder, create=False) as spill:
        rows = spill.connection.execute("SELECT key, model_id FROM completions").fetchall()
        for key, model_id in rows:
            completion = spill.get_completion(key)
            assert completion is not None
            request = spill.completion_request(key) or {}
            store.put_completion(key, from_sql(model_id) or "", request, completion)
    shutil.rmtree(folder, ignore_errors=True)
    return len(rows)
