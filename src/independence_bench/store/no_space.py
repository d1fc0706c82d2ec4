"""A store write that fails for lack of space: make room once, else say so as `StoreFull`.

A full disk, a quota or a file-size limit (`ulimit -f`: the write gets EFBIG, which SQLite
reports as "disk I/O error", `SQLITE_IOERR_WRITE`) used to end `aib run` with the first write
that failed; every answered call still in flight was lost with it (`ulimit -f 3000` at the
default concurrency: 122 answered, 63 stored, the resume paid 121 again). Most of those failures
are the write-ahead log growing past the limit before SQLite's automatic checkpoint (at 1,000
pages, 4 MB), while the store itself is a tenth of that: checkpointing the log into the store
and truncating it makes the room, and the write is tried once more. A write that still fails
raises `StoreFull`, which, like a spent cost cap, leaves its conversation or judgment missing
for the next run; the engine keeps answered replies the store could not take in memory
(`held.py`), stops sending at once and writes them when it can.
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from independence_bench.clients.budget import BudgetExhausted

if TYPE_CHECKING:
    import sqlite3

SQLITE_FULL = 13
SQLITE_IOERR_WRITE = 778
"""What SQLite answers to a write the disk refuses: no space (ENOSPC) is `SQLITE_FULL`; a
file-size limit (EFBIG) or a quota is `SQLITE_IOERR_WRITE` ("disk I/O error")."""
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})

_P = ParamSpec("_P")
_R = TypeVar("_R")


class StoreFull(BudgetExhausted):
    """The store cannot take a write for lack of space, even after making room."""

    store_problem: str
    """The one line the CLI prints if this ends the command (`cli.main`)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"the disk is full ({cause})")
        self.store_problem = (
            f"the disk is full ({cause}); free some space and run the command again to resume"
        )


def is_no_space(exc: BaseException) -> bool:
    """Whether `exc` is a write refused for lack of space (SQLite's or the OS's)."""
    if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
        return True
    if type(exc).__module__ != "sqlite3":
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (SQLITE_FULL, SQLITE_IOERR_WRITE) or "database or disk is full" in str(exc)


class _Connected(Protocol):
    @property
    def connection(self) -> sqlite3.Connection: ...


_S = TypeVar("_S", bound=_Connected)


def make_room(db: sqlite3.Connection) -> None:
    """End the failed write's transaction if SQLite left it open, then checkpoint the
    write-ahead log into the store and truncate it (the room a file-size limit needs)."""
    if db.in_transaction:
        db.execute("ROLLBACK")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def write_or_full(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """A store write that makes room (`make_room`) and tries once more when the disk refuses
    it, then raises `StoreFull`. Inside a caller's transaction (an import) it raises at once:
    rolling back would undo the caller's other writes."""

    @functools.wraps(method)
    def write(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        db = self.connection
        outer = db.in_transaction
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            if not is_no_space(exc):
                raise
            if outer:
                raise StoreFull(exc) from exc
            first = exc
        try:
            make_room(db)
            return method(self, *args, **kwargs)
        except Exception as exc:
            if not is_no_space(exc) and type(exc).__module__ != "sqlite3":
                raise
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreFull(first) from exc

    return write
