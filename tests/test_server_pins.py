"""The test-only servers' requirements files pin every package to one version and its hash.

`scripts/install-test-servers.sh` installs each file with `pip install --require-hashes`; pip
refuses a file with an unpinned or unhashed line, but only when CI reaches the slow step. This
checks the files themselves in the fast suite, and keeps LiteLLM off the releases that were
published by whoever hijacked its PyPI account.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SERVERS = Path(__file__).resolve().parent / "servers"
INSTALLER = Path(__file__).resolve().parent.parent / "scripts" / "install-test-servers.sh"
HIJACKED_LITELLM = {"1.82.7", "1.82.8", "1.107.0"}
"""1.82.7 and 1.82.8 stole credentials (2026-03-24); 1.107.0 is reported so and was removed."""
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}\b")


def requirements(path: Path) -> dict[str, tuple[str, int]]:
    """Each requirement of `path` (continuation lines joined): name -> (version, hash count)."""
    lines = [line for line in path.read_text("utf-8").splitlines() if not line.startswith("#")]
    joined = " ".join(line.rstrip("\\").strip() for line in lines)
    found: dict[str, tuple[str, int]] = {}
    for entry in re.split(r"\s+(?=[A-Za-z0-9][A-Za-z0-9._-]*==)", joined.strip()):
        match = PIN.match(entry)
        assert match, f"{path.name}: not pinned with ==: {entry[:80]!r}"
        found[match["name"].lower()] = (match["version"], len(HASH.findall(entry)))
    return found


FILES = sorted(SERVERS.glob("requirements-*.txt"))


def test_there_are_requirements_files() -> None:
    assert {f.name for f in FILES} >= {
        "requirements-llama-server.txt",
        "requirements-llama-server-build.txt",
        "requirements-litellm.txt",
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_package_is_pinned_with_a_hash_and_installed_by_the_script(path: Path) -> None:
    pins = requirements(path)
    assert pins
    unhashed = [name for name, (_, hashes) in pins.items() if hashes == 0]
    assert not unhashed, f"{path.name}: no --hash for {unhashed}"
    assert path.name in INSTALLER.read_text("utf-8")


def test_litellm_is_no_hijacked_release() -> None:
    version, _ = requirements(SERVERS / "requirements-litellm.txt")["litellm"]
    assert version not in HIJACKED_LITELLM


def test_the_parser_sees_a_missing_hash_and_a_loose_pin(tmp_path: Path) -> None:
    unhashed = tmp_path / "requirements-x.txt"
    unhashed.write_text("a==1 \\\n    --hash=sha256:" + "0" * 64 + "\nb==2\n", encoding="utf-8")
    assert requirements(unhashed) == {"a": ("1", 1), "b": ("2", 0)}
    loose = tmp_path / "requirements-y.txt"
    loose.write_text("a>=1 --hash=sha256:" + "0" * 64 + "\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="not pinned"):
        requirements(loose)
