"""The files an import reads: regular files under the folder it was given, each size-capped
before a byte of it is read, and zip members (Inspect's `.eval` logs) checked before they are.

An import walks a folder a user pointed at, and anything may be in it: a symlink to `/dev/zero`
(read until memory ran out), a FIFO (its reader waits for ever), a symlink out of the tree
(another user's file read and stored), a 150 MB turn file, a 243 KB `.eval` that inflates to
200 MB. `read_import_file` opens a file without following it into a device or a pipe (non-
blocking open, then `fstat`: only a regular file is read), checks that its real path is under
the import's root, and refuses one larger than its cap before reading; `check_zip` reads a zip's
directory only and refuses a member whose name is absolute, climbs out (`..`) or holds a
control character, and members whose uncompressed sizes pass the caps. Each refusal is an
`ImportFileRefused` whose message says why, for the import's one line per skipped file.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path, PurePosixPath

TURN_FILE_CAP = 16 * 1024 * 1024
"""Bytes of one earlier-implementation turn file (its whole conversation so far: a few hundred
KiB at most once each reply is held to the reply cap)."""
LOG_FILE_CAP = 512 * 1024 * 1024
"""Bytes of one Inspect log file (`.json` whole, `.eval` compressed)."""
ZIP_MEMBER_CAP = 64 * 1024 * 1024
"""Uncompressed bytes of one `.eval` member (one sample, or the header)."""
ZIP_TOTAL_CAP = 1024 * 1024 * 1024
"""Uncompressed bytes of all members of one `.eval`."""


class ImportFileRefused(Exception):
    """A file an import does not read; the message says why."""


def _size(count: int) -> str:
    """`16 MiB` for a whole number of a unit (the caps), else the bytes: `16,777,300 bytes`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count:,} bytes"


def check_import_file(path: Path, root: Path, cap: int) -> None:
    """Refuse `path` unless it is a regular file of at most `cap` bytes whose real path is
    under `root` (symlinks inside the tree are followed; out of it, refused)."""
    with _opened(path, root, cap):
        pass


def read_import_file(path: Path, root: Path, cap: int) -> bytes:
    """The bytes of `path`, checked as `check_import_file` does, never more than `cap` read."""
    with _opened(path, root, cap) as descriptor, os.fdopen(descriptor, "rb", closefd=False) as f:
        data = f.read(cap + 1)
    if len(data) > cap:  # it grew after the check
        raise ImportFileRefused(f"larger than the {_size(cap)} an import reads of one file")
    return data


class _opened:
    """A read-only descriptor of a checked file (context manager; closes it)."""

    def __init__(self, path: Path, root: Path, cap: int) -> None:
        self.path, self.root, self.cap = path, root, cap
        self.descriptor = -1

    def __enter__(self) -> int:
        try:
            real = self.path.resolve(strict=True)
            inside = real.is_relative_to(self.root.resolve(strict=True))
        except (OSError, RuntimeError) as exc:  # a broken link, a loop of links
            raise ImportFileRefused(f"cannot be read ({_why(exc)})") from None
        if not inside:
            raise ImportFileRefused("a link to a file outside the folder being imported")
        try:
            # Non-blocking: opening a FIFO for reading would wait for a writer for ever.
            self.descriptor = os.open(
                real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
            )
            info = os.fstat(self.descriptor)
        except OSError as exc:
            self.__exit__()
            raise ImportFileRefused(f"cannot be read ({_why(exc)})") from None
        if not stat.S_ISREG(info.st_mode):
            self.__exit__()
            raise ImportFileRefused("not a regular file (a device, a pipe or a socket)")
        if info.st_size > self.cap:
            self.__exit__()
            raise ImportFileRefused(
                f"{_size(info.st_size)}, over the {_size(self.cap)} an import reads of one file"
            )
        os.set_blocking(self.descriptor, True)
        return self.descriptor

    def __exit__(self, *_: object) -> None:
        if self.descriptor >= 0:
            os.close(self.descriptor)
            self.descriptor = -1


def _why(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__


def check_zip(path: Path, member_cap: int = ZIP_MEMBER_CAP, total_cap: int = ZIP_TOTAL_CAP) -> None:
    """Refuse a zip (an `.eval` log) whose directory names a member that is absolute, climbs
    out of the archive or holds a control character, or whose members' uncompressed sizes pass
    the caps. Reads the directory only; `path` has been checked by `check_import_file`."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise ImportFileRefused(f"not a readable zip ({type(exc).__name__})") from None
    total = 0
    for member in members:
        name = member.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if (
            name.startswith(("/", "\\"))
            or ".." in parts
            or (len(name) > 1 and name[1] == ":")
            or any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in name)
        ):
            raise ImportFileRefused(f"a member's name is unsafe ({name[:80]!r})")
        if member.file_size > member_cap:
            raise ImportFileRefused(
                f"member {name[:80]!r} inflates to {_size(member.file_size)}, over the "
                f"{_size(member_cap)} an import reads of one member"
            )
        total += member.file_size
    if total > total_cap:
        raise ImportFileRefused(
            f"inflates to {_size(total)}, over the {_size(total_cap)} an import reads of one log"
        )
