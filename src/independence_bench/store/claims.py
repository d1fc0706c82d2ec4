"""Claims on model calls in flight: how processes sharing one store never both pay for a call.

Before a process sends a request it claims the request's key (the completion key of
`engine/request_keys.py`) in the `claims` table, in one `BEGIN IMMEDIATE` transaction that
also checks the completion is not stored yet, so of two processes asking at once exactly one
sends and the other sees either the claim or the stored completion. A claim names its owner
(`host/pid/token`: one token per `Claims`, so two engines in one process are two owners) and
carries a lease: `expires_at`, renewed by the owner while it runs (`renew`, from the engine's
heartbeat) and deleted when the completion is stored or the call failed (`release`).

A claim stops counting when its lease ran out (a killed or hung owner stops renewing), or at
once when its owner is a process on this host that no longer exists (a SIGKILLed run, so the
same command started again does not wait for the lease). Anyone may then take it over.

`LEASE_S` is 60 s. The owner renews every quarter of the lease, on its event loop, so a lease
runs out under a live owner only if that loop is held for three renewals in a row: a write may
wait `busy_timeout` (10 s) for another process's transaction, and a large launch or the
leaderboard's bootstrap holds the loop for seconds, so the lease is several times both. Longer
would only make a run on another host wait longer for the calls a killed process left.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.store.no_space import write_or_full
from independence_bench.store.store import Store

LEASE_S = 60.0
"""How long a claim stays valid without renewal (see the module docstring for why)."""
RENEWALS_PER_LEASE = 4
"""The owner renews its claims this many times per lease."""
_KEYS_PER_STATEMENT = 500
"""Keys per `IN (…)` list: well below SQLite's limit on a statement's parameters."""


def owner_id(host: str | None = None, pid: int | None = None) -> str:
    """A new owner name: host, process id and a random token, separated by `/`."""
    return "/".join(
        (
            (host or socket.gethostname()).replace("/", "_"),
            str(os.getpid() if pid is None else pid),
            secrets.token_hex(6),
        )
    )


def owner_is_gone(owner: str) -> bool:
    """Whether `owner` was a process on this host that no longer exists.

    Only a definite answer counts: another host, an unreadable name, or a process id that
    exists (even one reused by an unrelated process) leave the claim to its lease.
    """
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if os.name != "posix" or host != socket.gethostname().replace("/", "_"):
        return False
    if not pid_text.isdigit() or int(pid_text) <= 0:
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # e.g. another user's process: it exists
    return False


@dataclass(frozen=True)
class Holder:
    """Who holds a claim, and until when."""

    owner: str
    """The holder's `owner_id()`: `host/pid/token`."""
    expires_at: float
    """When the lease runs out unless renewed, in seconds since the epoch (`time.time()`)."""


@dataclass(frozen=True)
class ClaimAttempt:
    """The outcome of one `Claims.attempt`: exactly one of the three is set."""

    stored: Completion | None = None
    """The completion is in the store: nothing to send."""
    claimed: bool = False
    """This owner now holds the claim and must send the call, then `release` it."""
    held_by: Holder | None = None
    """Another live owner holds it: wait, then attempt again."""


class Claims:
    """One owner's claims in one store.

    `lease_s` and `clock` are parameters so tests can use a short lease or a clock of their
    own; the clock must be comparable across processes (wall time), as leases are."""

    def __init__(
        self,
        store: Store,
        *,
        lease_s: float = LEASE_S,
        owner: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not lease_s > 0:
            raise ValueError(f"a claim's lease must be positive, got {lease_s}")
        self.store = store
        self.lease_s = lease_s
        self.owner = owner or owner_id()
        self.clock = clock
        self._mine: dict[str, float] = {}
        """Key → expiry of the claims this owner took or renewed itself (`still_holds`)."""

    @property
    def connection(self) -> sqlite3.Connection:
        """The store's connection (its writes make room when the disk is full: `no_space`)."""
        return self.store.connection

    @property
    def renew_every_s(self) -> float:
        return self.lease_s / RENEWALS_PER_LEASE

    def attempt(self, key: str) -> ClaimAttempt:
        """Find the completion stored, or claim the call, or name the live owner holding it."""
        return self.attempt_many([key])[key]

    @write_or_full
    def attempt_many(self, keys: Sequence[str]) -> dict[str, ClaimAttempt]:
        """`attempt` for each of `keys`, all claims taken in one write transaction.

        A read without a lock answers the common waiting case (stored, or still held); the
        claims themselves are taken in a write transaction that checks both again.
        """
        wanted = list(dict.fromkeys(keys))
        stored = self._stored_among(wanted)
        outcome: dict[str, ClaimAttempt] = {}
        free = self._free_among([key for key in wanted if key not in stored], outcome)
        if free:
            with self.store.transaction():
                stored |= self._stored_among(free)
                free = self._free_among([key for key in free if key not in stored], outcome)
                now = self.clock()
                self.store.connection.executemany(
                    "INSERT INTO claims (key, owner, claimed_at, expires_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                    "owner = excluded.owner, claimed_at = excluded.claimed_at, "
                    "expires_at = excluded.expires_at",
                    [(key, self.owner, now, now + self.lease_s) for key in free],
                )
            for key in free:
                self._mine[key] = now + self.lease_s
                outcome[key] = ClaimAttempt(claimed=True)
        for key in stored:
            completion = self.store.get_completion(key)
            assert completion is not None  # completions are never deleted
            outcome[key] = ClaimAttempt(stored=completion)
        return outcome

    @write_or_full
    def still_holds(self, key: str) -> bool:
        """Whether this owner may still send the call it claimed: the claim is its own and
        either unexpired (nobody can have taken it) or expired but taken by nobody, in which
        case it is renewed. False when another owner took it over (this process was paused
        past its lease) or it is gone. A claim this owner took or renewed, whose lease has not
        run out since, is its own without a look at the store: nobody may take it before."""
        known = self._mine.get(key)
        if known is not None and known > self.clock():
            return True
        holder = self._holder(key)
        if holder is None or holder.owner != self.owner:
            self._mine.pop(key, None)
            return False
        if holder.expires_at > self.clock():
            self._mine[key] = holder.expires_at
            return True
        expires = self.clock() + self.lease_s
        cursor = self.store.connection.execute(
            "UPDATE claims SET expires_at = ? WHERE key = ? AND owner = ?",
            (expires, key, self.owner),
        )
        if cursor.rowcount != 1:
            self._mine.pop(key, None)
            return False
        self._mine[key] = expires
        return True

    @write_or_full
    def release(self, key: str) -> None:
        """Give up this owner's claim on `key` (stored or failed); another owner's is kept."""
        self._mine.pop(key, None)
        self.store.connection.execute(
            "DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner)
        )

    @write_or_full
    def renew(self) -> int:
        """Extend every claim this owner holds by a full lease; returns how many it holds.

        A claim whose lease this owner knew to run past the end of the update cannot have
        been taken meanwhile, so it is known to be extended; any other is looked up again by
        `still_holds` (another owner may have taken it while this process was paused)."""
        start = self.clock()
        cursor = self.store.connection.execute(
            "UPDATE claims SET expires_at = ? WHERE owner = ?",
            (start + self.lease_s, self.owner),
        )
        done = self.clock()
        self._mine = {
            key: start + self.lease_s for key, known in self._mine.items() if known > done
        }
        return cursor.rowcount

    def holders(self) -> dict[str, Holder]:
        """Every claim in the store, by key (anyone's, live or not)."""
        rows = self.store.connection.execute("SELECT key, owner, expires_at FROM claims")
        return {str(key): Holder(str(owner), float(expires)) for key, owner, expires in rows}

    def _counts(self, holder: Holder) -> bool:
        """Whether a claim still binds: its lease runs and its owner is not known dead."""
        return holder.expires_at > self.clock() and not owner_is_gone(holder.owner)

    def _stored_among(self, keys: Sequence[str]) -> set[str]:
        """Which of `keys` have a stored completion."""
        return {str(key) for (key,) in self._rows_for("SELECT key FROM completions", keys)}

    def _free_among(self, keys: Sequence[str], outcome: dict[str, ClaimAttempt]) -> list[str]:
        """The keys nobody holds a binding claim on; the others go into `outcome` as held."""
        holders = {
            str(key): Holder(str(owner), float(expires))
            for key, owner, expires in self._rows_for(
                "SELECT key, owner, expires_at FROM claims", keys
            )
        }
        free = []
        for key in keys:
            holder = holders.get(key)
            if holder is not None and self._counts(holder):
                outcome[key] = ClaimAttempt(held_by=holder)
            else:
                free.append(key)
        return free

    def _rows_for(self, select: str, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """The rows of `select … WHERE key IN (keys)`, a bounded number of keys per statement."""
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), _KEYS_PER_STATEMENT):
            chunk = keys[start : start + _KEYS_PER_STATEMENT]
            where = f" WHERE key IN ({','.join('?' * len(chunk))})"
            rows.extend(tuple(row) for row in self.store.connection.execute(select + where, chunk))
        return rows

    def _holder(self, key: str) -> Holder | None:
        row = self.store.connection.execute(
            "SELECT owner, expires_at FROM claims WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else Holder(str(row[0]), float(row[1]))
