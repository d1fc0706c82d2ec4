"""A child Python process that runs the same copy of the package as the test that starts it,
and one that runs where a folder is read-only even to root.

Without an editable install, or in a mutation run (where the tests import a mutated copy of
`src/`), a bare `python -c ...` would import another copy or none; the child is given the
path of the package this test imported first. Read-only media are a read-only bind mount in a
mount namespace of the child's own (`unshare`), which root can make here; where it cannot,
the `read_only_media` fixture (conftest.py) skips the test.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import independence_bench
from independence_bench.clients.protocol import Completion
from independence_bench.errors import UserError
from independence_bench.store.store import Store


def env_with_this_package() -> dict[str, str]:
    """The environment, with the package this test imported first on the child's path."""
    here = str(Path(independence_bench.__file__).resolve().parent.parent)
    paths = (here, os.environ.get("PYTHONPATH", ""))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
"""`sh -c` script: make folder $1 a read-only mount (in the caller's own mount namespace), then
run the rest of the arguments: where even root cannot write, as on a CD or a read-only share."""


def on_read_only_media(data: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run `command` (the package on its path) where the folder `data` is read-only."""
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c", READ_ONLY_MOUNT, "sh", str(data), *command],
        capture_output=True,
        text=True,
        env=env_with_this_package(),
        timeout=60,
    )


def read_only_mounts_problem(probe: Path) -> str | None:
    """Why this machine cannot make a read-only mount (not root, no `unshare`), or None."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    made = on_read_only_media(probe, "touch", str(probe / "written"))
    if "Read-only file system" not in made.stderr:
        return f"cannot mount a folder read-only here: {made.stderr.strip()[:200]}"
    return None


def read_store(data: Path, *keys: str) -> dict[str, Any]:
    """What `Store(read_only=True)` reads from `data` (the replies stored under `keys`, what a
    write does) or why it refuses, and the files it leaves there."""
    try:
        store = Store(data, read_only=True)
    except UserError as exc:
        return {"refused": str(exc), "files": sorted(os.listdir(data))}
    with store:
        replies = {k: getattr(store.get_completion(k), "content", None) for k in keys}
        try:
            store.put_completion("new", "m", {"messages": []}, Completion(content="x"))
            wrote = "written"
        except sqlite3.Error as exc:
            wrote = type(exc).__name__
    return {"replies": replies, "wrote": wrote, "files": sorted(os.listdir(data))}


READ_ON_MEDIA = f"""
import json, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from support.child_process import read_store
print(json.dumps(read_store(Path(sys.argv[1]), *sys.argv[2:])))
"""


def read_on_media(data: Path, *keys: str) -> dict[str, Any]:
    """`read_store` in a child process where the folder `data` is read-only."""
    read = on_read_only_media(data, sys.executable, "-c", READ_ON_MEDIA, str(data), *keys)
    assert read.returncode == 0, read.stderr
    return cast(dict[str, Any], json.loads(read.stdout))
