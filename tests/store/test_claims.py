"""Claims on calls in flight and atomic run numbers, one store shared by several owners.

Leases are checked with a clock of the test's own, so nothing here waits for a lease to run out,
not even the last test, where a real process claims a call and is SIGKILLed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import Completion
from independence_bench.engine.claiming import claim_or_wait, renewing
from independence_bench.store.claims import LEASE_S, Claims, Holder, owner_id, owner_is_gone
from independence_bench.store.run_status import next_run_numbers, reserve_fresh_runs
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from support.child_process import env_with_this_package

KEY = "k" * 64
ELSEWHERE = "build-host-2"
"""Another machine sharing the data directory: its process ids mean nothing here."""


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _claims(store: Store, clock: Clock, host: str = ELSEWHERE, lease_s: float = 10.0) -> Claims:
    return Claims(store, lease_s=lease_s, owner=owner_id(host=host), clock=clock)


def test_a_claim_binds_other_owners_until_its_lease_runs_out(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        first, second = _claims(store, clock), _claims(store, clock)
        assert first.attempt(KEY).claimed
        held = second.attempt(KEY)
        assert not held.claimed and held.stored is None
        assert held.held_by == Holder(first.owner, 1010.0)
        clock.now = 1009.9
        assert second.attempt(KEY).held_by is not None
        clock.now = 1010.0  # the lease has run out: the claim is taken over
        assert second.attempt(KEY).claimed
        assert first.attempt(KEY).held_by == Holder(second.owner, 1020.0)
        first.release(KEY)  # too late: releasing keeps the new owner's claim
        assert [h.owner for h in second.holders().values()] == [second.owner]
        second.release(KEY)
        assert first.holders() == {}


def test_renewal_extends_every_claim_of_its_owner_only(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        mine, theirs, waiting = _claims(store, clock), _claims(store, clock), _claims(store, clock)
        assert mine.attempt("a").claimed and mine.attempt("b").claimed
        assert theirs.attempt("c").claimed
        clock.now = 1008.0
        assert mine.renew() == 2
        clock.now = 1015.0
        assert waiting.attempt("a").held_by == Holder(mine.owner, 1018.0)
        assert waiting.attempt("b").held_by is not None
        assert waiting.attempt("c").claimed  # not renewed: its lease ended at 1010


def test_a_stored_completion_wins_over_any_claim(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        sender, late = _claims(store, clock), _claims(store, clock)
        assert sender.attempt(KEY).claimed
        store.put_completion(KEY, "m", {"model": "m"}, Completion(content="the reply"))
        attempt = late.attempt(KEY)
        assert not attempt.claimed and attempt.stored is not None
        assert attempt.stored.content == "the reply"


def test_the_same_owner_waits_on_its_own_claim(tmp_path: Path) -> None:
    """Two tasks of one process asking for one call: the second waits for the first."""
    clock = Clock()
    with Store(tmp_path) as store:
        claims = _claims(store, clock)
        assert claims.attempt(KEY).claimed
        assert claims.attempt(KEY).held_by is not None


def test_a_dead_process_on_this_host_loses_its_claims_at_once(tmp_path: Path) -> None:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    clock = Clock()
    with Store(tmp_path) as store:
        dead = Claims(store, lease_s=600.0, owner=owner_id(pid=finished.pid), clock=clock)
        alive = Claims(store, lease_s=600.0, clock=clock)
        assert owner_is_gone(dead.owner) and not owner_is_gone(alive.owner)
        assert dead.attempt("a").claimed and alive.attempt("b").claimed
        other = Claims(store, clock=clock)
        assert other.attempt("a").claimed  # its owner is gone, long before the lease ends
        assert other.attempt("b").held_by is not None  # a live process keeps its claim
    assert not owner_is_gone(f"{ELSEWHERE}/{finished.pid}/abc")  # another host: the lease decides
    assert not owner_is_gone("not an owner")
    here = socket.gethostname().replace("/", "_")
    assert not owner_is_gone(f"{here}/not-a-pid/abc")  # unreadable: the lease decides
    # an owner is this host and this process unless told otherwise, so a rerun sees it gone
    assert owner_id().split("/")[:2] == [here, str(os.getpid())]


def test_claims_need_a_positive_lease(tmp_path: Path) -> None:
    with Store(tmp_path) as store, pytest.raises(ValueError, match="positive"):
        Claims(store, lease_s=0)


SUITE = load_suite("v2")
SPECS = [ModelSpec(id="vendor/m", label="m"), ModelSpec(id="vendor/n", label="n")]


def test_fresh_runs_are_reserved_in_the_store_before_any_call(tmp_path: Path) -> None:
    with Store(tmp_path) as first, Store(tmp_path) as second:
        assert reserve_fresh_runs(first, SUITE, SPECS, 2) == {"m": 1, "n": 1}
        # Another connection (another process) sees the rows at once and starts after them.
        assert next_run_numbers(second, SUITE, SPECS) == {"m": 3, "n": 3}
        assert reserve_fresh_runs(second, SUITE, SPECS[:1], 1) == {"m": 3}
        runs = [(r.model_label, r.run_index) for r in first.runs(SUITE.id)]
        assert runs == [("m", 1), ("m", 2), ("m", 3), ("n", 1), ("n", 2)]
        assert first.runs(SUITE.id)[0].model_config == SPECS[0].stored_config()


def test_concurrent_fresh_reservations_never_share_a_run_number(tmp_path: Path) -> None:
    Store(tmp_path).close()
    starters = 6
    barrier = threading.Barrier(starters)
    numbers: list[int] = []

    def reserve() -> None:
        with Store(tmp_path) as store:  # one connection each, as separate processes have
            barrier.wait()
            numbers.append(reserve_fresh_runs(store, SUITE, SPECS[:1], 1)["m"])

    threads = [threading.Thread(target=reserve) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(numbers) == list(range(1, starters + 1))


CLAIM_AND_HANG = """
import sys, time
from pathlib import Path
from independence_bench.store.claims import Claims, owner_id
from independence_bench.store.store import Store
store = Store(Path(sys.argv[1]))
claims = Claims(store, lease_s=float(sys.argv[2]), owner=owner_id(host=sys.argv[3]))
assert claims.attempt(sys.argv[4]).claimed
print(claims.owner, flush=True)
time.sleep(600)
"""


def test_a_claim_left_by_a_sigkilled_process_is_taken_over_after_its_lease(
    tmp_path: Path,
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", CLAIM_AND_HANG, str(tmp_path), str(LEASE_S), ELSEWHERE, KEY],
        stdout=subprocess.PIPE,
        text=True,
        env=env_with_this_package(),
    )
    assert process.stdout is not None
    owner = process.stdout.readline().strip()
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=10) == -signal.SIGKILL
    with Store(tmp_path) as store:
        now = Claims(store)
        left = now.holders()[KEY]
        assert left.owner == owner
        # Its owner cannot be looked up from here (another host), so only the lease frees it.
        assert now.attempt(KEY).held_by == left
        clock = Clock(left.expires_at)  # the moment its lease ends
        later = Claims(store, clock=clock)
        assert asyncio.run(claim_or_wait(later, KEY)) is None  # claimed, not waited on
        assert later.holders()[KEY] == Holder(later.owner, clock.now + LEASE_S)
        assert now.attempt(KEY).held_by == Holder(later.owner, clock.now + LEASE_S)


class _Paused:
    """Stands in for `asyncio.sleep` while a waiter waits: records each pause and moves the
    test's clock by it, so a wait of seconds runs at once; `then` runs after the nth pause."""

    def __init__(self, clock: Clock, then: dict[int, Callable[[], None]]) -> None:
        self.clock, self.then, self.pauses = clock, then, list[float]()

    async def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.clock.now += seconds
        action = self.then.get(len(self.pauses))
        if action is not None:
            action()


def _wait_on(
    monkeypatch: pytest.MonkeyPatch, waiter: Claims, then: dict[int, Callable[[], None]]
) -> tuple[Completion | None, list[float]]:
    assert isinstance(waiter.clock, Clock)
    paused = _Paused(waiter.clock, then)
    monkeypatch.setattr(asyncio, "sleep", paused)
    try:
        return asyncio.run(claim_or_wait(waiter, KEY)), paused.pauses
    finally:
        monkeypatch.undo()


def test_a_waiter_looks_again_at_doubling_pauses_until_the_holder_stores_the_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        holder, waiter = _claims(store, clock, lease_s=600.0), _claims(store, clock)
        assert holder.attempt(KEY).claimed

        def store_reply() -> None:
            store.put_completion(KEY, "m", {"model": "m"}, Completion(content="their reply"))

        got, pauses = _wait_on(monkeypatch, waiter, {8: store_reply})
        assert got is not None and got.content == "their reply"
        assert pauses == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
        assert list(waiter.holders()) == [KEY]  # the waiter never claimed it
        assert waiter.holders()[KEY].owner == holder.owner


def test_a_waiter_claims_the_call_when_the_holder_gives_it_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        holder, waiter = _claims(store, clock), _claims(store, clock)
        assert holder.attempt(KEY).claimed
        got, pauses = _wait_on(monkeypatch, waiter, {2: lambda: holder.release(KEY)})
        assert got is None and len(pauses) == 2
        assert waiter.holders() == {KEY: Holder(waiter.owner, clock.now + 10.0)}


def test_a_waiter_never_sleeps_past_the_end_of_the_holders_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        holder, waiter = _claims(store, clock, lease_s=0.03), _claims(store, clock)
        assert holder.attempt(KEY).claimed
        got, pauses = _wait_on(monkeypatch, waiter, {})
        assert got is None and pauses == pytest.approx([0.03])  # not the first 0.05
        assert waiter.holders()[KEY].owner == waiter.owner


class _FlakyRenewals(Claims):
    """Counts renewals; the second one finds the store busy, as under another writer."""

    renewals = 0

    def renew(self) -> int:
        self.renewals += 1
        if self.renewals == 2:
            raise sqlite3.OperationalError("database is locked")
        return super().renew()


def test_renewing_beats_through_a_busy_store_and_stops_with_its_block(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path) as store:
        claims = _FlakyRenewals(store, lease_s=1e-9, owner=owner_id(host=ELSEWHERE), clock=clock)
        assert claims.attempt(KEY).claimed
        clock.now = 2000.0

        async def run_a_while() -> int:
            async with renewing(claims):
                while claims.renewals < 4:  # past the busy one: the heartbeat lives on
                    await asyncio.sleep(0.001)
            stopped_at = claims.renewals
            for _ in range(5):
                await asyncio.sleep(0.001)
            return stopped_at

        assert asyncio.run(run_a_while()) == claims.renewals  # no beat after the block
        assert claims.holders()[KEY].expires_at == pytest.approx(2000.0)


def test_many_keys_are_claimed_in_one_call_with_each_one_checked(tmp_path: Path) -> None:
    # attempt_many gives each key what attempt would: stored, held by a live owner, or
    # claimed (free, or its holder's lease ran out); a key asked twice is one claim.
    clock = Clock()
    with Store(tmp_path) as store:
        mine, theirs, lapsed = _claims(store, clock), _claims(store, clock), _claims(store, clock)
        store.put_completion("stored", "m", {"model": "m"}, Completion(content="kept"))
        assert theirs.attempt("held").claimed
        assert lapsed.attempt("lapsed").claimed
        clock.now += 5
        theirs.renew()
        clock.now += 6  # `lapsed` did not renew: its lease ended at 1010
        outcome = mine.attempt_many(["stored", "held", "lapsed", "free", "free"])
        assert set(outcome) == {"stored", "held", "lapsed", "free"}
        stored = outcome["stored"].stored
        assert stored is not None and stored.content == "kept"
        assert outcome["held"].held_by == Holder(theirs.owner, 1015.0)
        assert outcome["lapsed"].claimed and outcome["free"].claimed
        assert {k: h.owner for k, h in mine.holders().items()} == {
            "held": theirs.owner,
            "lapsed": mine.owner,
            "free": mine.owner,
        }


def test_a_claim_taken_over_during_a_pause_is_lost_even_if_a_renewal_comes_first(
    tmp_path: Path,
) -> None:
    # A claim this owner took is its own without a look at the store until its lease runs
    # out. A process frozen past that, whose call another owner took meanwhile, must find out,
    # even when its heartbeat renews before the call is sent (the renewal cannot extend a
    # claim that is no longer its own, and must not make it look like one).
    clock = Clock()
    with Store(tmp_path) as store:
        frozen, other = _claims(store, clock), _claims(store, clock)
        assert frozen.attempt(KEY).claimed and frozen.attempt("kept").claimed
        assert frozen.still_holds(KEY)
        clock.now += 11  # frozen past the 10 s lease
        assert other.attempt(KEY).claimed
        frozen.renew()  # the heartbeat fires first on waking
        assert not frozen.still_holds(KEY)
        assert frozen.still_holds("kept")  # nobody took this one: the renewal kept it
        clock.now += 9
        assert frozen.still_holds("kept")
        assert other.attempt("kept").held_by is not None
