"""What an import reads (`text/import_files.py`): regular files under the root within the cap,
and zip members whose names and sizes pass before anything is inflated."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

from independence_bench.text.import_files import (
    ImportFileRefused,
    check_zip,
    read_import_file,
)

posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def test_a_regular_file_under_the_root_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"{}")
    assert read_import_file(tmp_path / "a.json", tmp_path, 10) == b"{}"
    inside = tmp_path / "sub"
    inside.mkdir()
    (inside / "link.json").symlink_to(tmp_path / "a.json")  # a link inside the tree is fine
    assert read_import_file(inside / "link.json", tmp_path, 10) == b"{}"


@posix
@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p, t: p.symlink_to("/dev/zero"), "outside the folder"),
        (lambda p, t: os.mkfifo(p), "not a regular file"),
        (lambda p, t: p.symlink_to(t.parent / "secret.json"), "outside the folder"),
        (lambda p, t: p.write_bytes(b"x" * 11), "11 bytes, over the 10 bytes"),
        (lambda p, t: p.symlink_to(t / "nowhere.json"), "cannot be read"),
    ],
    ids=["dev-zero", "fifo", "outside", "too-large", "broken-link"],
)
def test_what_is_not_read(tmp_path: Path, make: Any, why: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.json").write_bytes(b'{"key": "secret"}')
    make(root / "f.json", root)
    with pytest.raises(ImportFileRefused, match=why):
        read_import_file(root / "f.json", root, 10)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    "name", ["../escape.json", "/abs.json", "a/../../b.json", "C:evil.json", "esc\x1b.json"]
)
def test_a_member_with_an_unsafe_name_is_refused(tmp_path: Path, name: str) -> None:
    log = _zip(tmp_path / "x.eval", {"header.json": b"{}", name: b"{}"})
    with pytest.raises(ImportFileRefused, match="unsafe"):
        check_zip(log)


def test_members_are_measured_before_they_are_inflated(tmp_path: Path) -> None:
    log = _zip(tmp_path / "x.eval", {"samples/a.json": b"0" * 5000, "samples/b.json": b"1" * 10})
    check_zip(log)
    with pytest.raises(ImportFileRefused, match="inflates to 5,000 bytes"):
        check_zip(log, member_cap=4096)
    with pytest.raises(ImportFileRefused, match="an import reads of one log"):
        check_zip(log, total_cap=5000)
    (tmp_path / "not.eval").write_bytes(b"PK not a zip")
    with pytest.raises(ImportFileRefused, match="not a readable zip"):
        check_zip(tmp_path / "not.eval")
