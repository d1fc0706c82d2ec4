"""The open-file limit, and how many connections a run may hold open under it.

Every model call in flight holds a socket, and a socket is an open file. A run of 20 models × 5
runs starts 1,500 conversations at once, while many systems start a process with a soft limit
of 1,024 (`ulimit -n`): past it, `connect()` fails with `OSError: [Errno 24] Too many open
files` in the middle of a run. So a run first raises its soft limit to the hard limit where the
system allows it (`raise_open_file_limit`), and then keeps the connections it holds open below
what is left of the soft limit after the files it already has open (the interpreter, the store
and its journal, stdio, local model weights) and a fixed reserve for files opened later
(`connection_budget`). The endpoints' limiters and the HTTP layer both stay within that budget.
"""

from __future__ import annotations

import os
from pathlib import Path

RESERVE = 32
"""Files kept free beyond those open at start: the store's database, WAL and shared-memory
files, a report or log, libraries imported late (numpy for the closing leaderboard)."""
MIN_CONNECTIONS = 4
"""A budget is never below this, so a run under a tiny limit is slow rather than stuck."""
_FD_DIRS = (Path("/proc/self/fd"), Path("/dev/fd"))
_UNBOUNDED_TARGET = 65_536
"""The soft limit asked for when the hard one is unlimited (more would only be refused)."""
_UNKNOWN_OPEN = 64
"""Assumed open files where the system cannot list them."""


def raise_open_file_limit() -> int:
    """Raise the soft `RLIMIT_NOFILE` to the hard limit where allowed; return the soft limit.

    Unprivileged processes may raise their soft limit up to the hard one. Where that fails (a
    platform without `resource`, or one that refuses, as macOS does above `OPEN_MAX`), the
    limit stays as it was and the budget follows it.
    """
    try:
        import resource
    except ImportError:  # not on POSIX: no such limit to raise
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 0
    target = _UNBOUNDED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft >= target:
        return int(soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return int(soft)
    return int(target)


def open_file_limit() -> int:
    """The soft open-file limit now; 0 when there is none (or no way to know)."""
    try:
        import resource
    except ImportError:
        return 0
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 0 if soft == resource.RLIM_INFINITY else int(soft)


def open_files_now() -> int:
    """Files this process has open, where the system lists them."""
    for folder in _FD_DIRS:
        try:
            return len(os.listdir(folder))
        except OSError:
            continue
    return _UNKNOWN_OPEN


def connection_budget(soft_limit: int | None = None, open_now: int | None = None) -> int | None:
    """Connections a run may hold open at once under `soft_limit` (default: the current soft
    limit); None when there is no limit to respect."""
    limit = open_file_limit() if soft_limit is None else soft_limit
    if limit <= 0:
        return None
    already = open_files_now() if open_now is None else open_now
    return max(MIN_CONNECTIONS, limit - already - RESERVE)
