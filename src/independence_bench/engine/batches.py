"""The store's claims and completion writes gathered per wave: one transaction for many calls.

A run's calls come in waves: every conversation of a run sends its first turn at once, and each
reply lets its conversation send the next turn, so hundreds of replies arrive within a fraction
of a second of each other. Claiming and storing each call on its own costs two write
transactions per call (a `BEGIN IMMEDIATE` … `COMMIT` is most of a call's store time). Here a
task that needs a claim or a write queues it and awaits it; the queue is flushed by the next
turn of the event loop, so everything queued meanwhile shares one transaction:

- `attempt`: `Claims.attempt_many` checks and claims the wave's keys together, with the same
  checks, in the same kind of transaction, as one `Claims.attempt` would.
- `store`: the wave's completions go into one transaction through `Store.put_completion`, each
  with the release of its claim (`Claims.release`), so a completion is committed before, and
  together with, the end of its claim. The task continues only once that is committed: a reply
  the engine has used is always in the store, and a kill before the commit loses only replies
  not yet used, as a kill before a single write did.
- `store_record`: a finished conversation (`Store.put_item`) or a judge's verdict
  (`Store.add_judgment`) goes into the same transaction as the rest of its wave, instead of a
  transaction of its own (each commit costs about as much as a wave's), and its task goes on
  once it is committed, as it did after its own.

A batch write the disk refuses is tried once more after making room (`no_space.make_room`),
then fails every call of the batch with `StoreFull`, which the engine answers by keeping the
replies in memory (`store/held.py`) and starting no new call. A store locked past its timeout
fails every call with that error, as it would have failed each alone; any other error is one
call's data, so the batch is written again call by call and only that call fails. A task
cancelled while its write waits (Ctrl-C twice) flushes the queue first: a reply paid for is not
dropped.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from independence_bench.store.claims import ClaimAttempt, Claims, Holder
from independence_bench.store.held import CompletionWrite
from independence_bench.store.no_space import StoreFull, is_no_space, make_room
from independence_bench.store.store import ItemRecord, Store, Verdict

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class _Wave(Generic[_Item, _Result]):
    """Items queued by many tasks, handled together on the event loop's next turn."""

    def __init__(
        self,
        handle: Callable[[list[_Item]], list[_Result | Exception]],
        abandoned: Callable[[_Item, _Result], None] | None = None,
    ) -> None:
        self._handle = handle
        self._abandoned = abandoned
        """With it, an item whose task is cancelled leaves the queue, and one handled after its
        task stopped waiting is given to it; without, such an item is still handled."""
        self._queue: list[tuple[_Item, asyncio.Future[_Result]]] = []

    async def submit(self, item: _Item) -> _Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Result] = loop.create_future()
        self._queue.append((item, future))
        if len(self._queue) == 1:
            loop.call_soon(self.flush)
        try:
            return await future
        except asyncio.CancelledError:
            if self._abandoned is not None:
                self._queue = [(queued, f) for queued, f in self._queue if f is not future]
            raise

    def flush(self) -> None:
        """Handle everything queued now and settle each waiting task's future."""
        batch, self._queue = self._queue, []
        if not batch:
            return
        outcomes = self._handle([item for item, _ in batch])
        for (item, future), outcome in zip(batch, outcomes, strict=True):
            if future.done():
                if self._abandoned is not None and not isinstance(outcome, Exception):
                    self._abandoned(item, outcome)
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)


@dataclass(frozen=True)
class ItemWrite:
    """A conversation to store (`Store.put_item`) with its wave."""

    item: ItemRecord

    def into(self, store: Store) -> None:
        store.put_item(self.item)


@dataclass(frozen=True)
class JudgmentWrite:
    """A judge's verdict on one item to store (`Store.add_judgment`) with its wave."""

    item_id: str
    judge_model: str
    rubric_id: str
    rubric_hash: str
    repeat: int
    verdict: Verdict

    def into(self, store: Store) -> None:
        store.add_judgment(
            item_id=self.item_id,
            judge_model=self.judge_model,
            rubric_id=self.rubric_id,
            rubric_hash=self.rubric_hash,
            repeat=self.repeat,
            verdict=self.verdict,
        )


Write = CompletionWrite | ItemWrite | JudgmentWrite
"""What one wave's transaction writes."""


def _no_space(exc: Exception) -> bool:
    """A write refused for lack of space: SQLite's or the OS's error, or `StoreFull` (what
    `Store.put_completion` raises inside the wave's transaction, where it cannot make room)."""
    return isinstance(exc, StoreFull) or is_no_space(exc)


class StoreBatches:
    """One engine's gathered claims and completion writes on its store."""

    def __init__(
        self,
        store: Store,
        claims: Claims,
        on_full: Callable[[StoreFull], None] = lambda full: None,
    ) -> None:
        self.store = store
        self.claims = claims
        self.on_full = on_full
        """Called as soon as the disk refuses a wave, before any of its tasks goes on (the
        engine stops starting calls there, not a loop turn later)."""
        self._claims: _Wave[str, ClaimAttempt] = _Wave(self._attempt_all, self._unclaim)
        self._writes: _Wave[Write, None] = _Wave(self._write_all)

    async def attempt(self, key: str) -> ClaimAttempt:
        """`Claims.attempt(key)`, taken in one transaction with the rest of its wave."""
        return await self._claims.submit(key)

    async def store_completion(self, write: CompletionWrite) -> None:
        """`Store.put_completion` and `Claims.release` of one call, committed with its wave."""
        # A task cancelled meanwhile (Ctrl-C twice) stops waiting, but its write stays queued
        # and the flush already scheduled stores it: a reply paid for is not dropped.
        await self._writes.submit(write)

    async def store_record(self, write: ItemWrite | JudgmentWrite) -> None:
        """`Store.put_item` or `Store.add_judgment`, committed with its wave; raises what the
        write alone would have raised (`StoreFull` when the disk refuses the wave)."""
        await self._writes.submit(write)

    def _attempt_all(self, keys: list[str]) -> list[ClaimAttempt | Exception]:
        try:
            attempts = self.claims.attempt_many(keys)
        except Exception as exc:
            return [exc] * len(keys)
        outcomes: list[ClaimAttempt | Exception] = []
        claimed: set[str] = set()
        for key in keys:
            attempt = attempts[key]
            if attempt.claimed and key in claimed:
                # The same call twice in one wave (two conversations asking the very same
                # thing): the first sends it, the second waits for its reply as on any claim.
                expires = self.claims.clock() + self.claims.lease_s
                attempt = ClaimAttempt(held_by=Holder(self.claims.owner, expires))
            elif attempt.claimed:
                claimed.add(key)
            outcomes.append(attempt)
        return outcomes

    def _write_all(self, writes: list[Write]) -> list[Exception | None]:
        """The wave in one transaction; a wave the disk refuses makes room and is tried once
        more, as one `Store.put_completion` would (`no_space.write_or_full`), then fails with
        `StoreFull` for every call of it."""
        try:
            self._write_wave(writes)
            return [None] * len(writes)
        except Exception as exc:
            if not _no_space(exc):
                return self._failed(writes, exc)
            first = exc
        try:
            make_room(self.store.connection)
            self._write_wave(writes)
            return [None] * len(writes)
        except Exception as exc:
            if not _no_space(exc) and type(exc).__module__ != "sqlite3":
                return self._failed(writes, exc)
            if self.store.connection.in_transaction:
                self.store.connection.execute("ROLLBACK")
            cause = first.__cause__ if isinstance(first, StoreFull) else first
            full = StoreFull(cause or first)
            full.__cause__ = cause
            self.on_full(full)
            return [full] * len(writes)

    def _write_wave(self, writes: list[Write]) -> None:
        with self.store.transaction():
            for write in writes:
                self._write(write)

    def _failed(self, writes: list[Write], exc: Exception) -> list[Exception | None]:
        """A failed wave's outcome for each call: the store's trouble (locked past its
        timeout) fails them all; one call's bad data fails only that call."""
        if isinstance(exc, sqlite3.OperationalError) or len(writes) == 1:
            return [exc] * len(writes)
        return [self._write_alone(write) for write in writes]

    def _unclaim(self, key: str, attempt: ClaimAttempt) -> None:
        if attempt.claimed:  # its task is gone: nobody will send it
            self.claims.release(key)

    def _write(self, write: Write) -> None:
        write.into(self.store)
        if isinstance(write, CompletionWrite):
            self.claims.release(write.key)

    def _write_alone(self, write: Write) -> Exception | None:
        try:
            with self.store.transaction():
                self._write(write)
        except Exception as exc:
            return exc
        return None
