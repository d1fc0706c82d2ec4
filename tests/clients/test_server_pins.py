"""The test-only servers' requirements files pin every package to one version and its hash.

`scripts/install-test-servers.sh` installs each file with `pip install --require-hashes`; pip
refuses a file with an unpinned or unhashed line, but only when CI reaches the slow step. This
checks the files themselves in the fast suite, and keeps LiteLLM off the releases that were
published by whoever hijacked its PyPI account.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
SERVERS = TESTS / "servers"
INSTALLER = TESTS.parent / "scripts" / "install-test-servers.sh"
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


FAKE_PROJECT = """
cmake_minimum_required(VERSION 3.14)
project("llama.cpp" C)
add_subdirectory(ggml)
add_library(llama-core STATIC core.c)
target_link_libraries(llama-core ggml-kernels)
add_subdirectory(tools)
"""
FAKE_GGML = """
add_library(ggml-kernels STATIC kernels.c)
"""
FAKE_TOOLS = """
add_executable(llama-server main.c)
target_link_libraries(llama-server llama-core)
add_executable(llama-cli main.c)
"""


@pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("make") is None or shutil.which("cc") is None,
    reason="needs cmake, make and a C compiler",
)
def test_the_cmake_include_builds_llama_server_and_its_libraries_only(tmp_path: Path) -> None:
    """`llama-server-only.cmake` on a tree shaped like llama.cpp's: the default build makes the
    server and the libraries it links, and no other executable; ggml's kernels keep the build
    type's optimisation and everything else is compiled at -O1 (the last -O wins)."""
    source, build = tmp_path / "src", tmp_path / "build"
    (source / "tools").mkdir(parents=True)
    (source / "ggml").mkdir()
    build.mkdir()
    (source / "CMakeLists.txt").write_text(FAKE_PROJECT, "utf-8")
    (source / "ggml" / "CMakeLists.txt").write_text(FAKE_GGML, "utf-8")
    (source / "tools" / "CMakeLists.txt").write_text(FAKE_TOOLS, "utf-8")
    (source / "core.c").write_text("int core(void) { return 0; }\n", "utf-8")
    (source / "ggml" / "kernels.c").write_text("int kernels(void) { return 0; }\n", "utf-8")
    (source / "tools" / "main.c").write_text("int main(void) { return 0; }\n", "utf-8")
    include = SERVERS / "llama-server-only.cmake"
    configure = [
        "cmake",
        str(source),
        f"-DCMAKE_PROJECT_INCLUDE={include}",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
    ]
    subprocess.run(configure, cwd=build, check=True, capture_output=True, timeout=120)
    commands = json.loads((build / "compile_commands.json").read_text("utf-8"))
    last_level = {
        Path(c["file"]).name: re.findall(r"(?<!\S)-O\w*", c["command"])[-1] for c in commands
    }
    assert last_level == {"kernels.c": "-O3", "core.c": "-O1", "main.c": "-O1"}
    subprocess.run(["make"], cwd=build, check=True, capture_output=True, timeout=120)
    built = {
        p.name for p in build.rglob("*") if p.is_file() and p.name.startswith(("llama", "lib"))
    }
    assert {"llama-server", "libllama-core.a"} <= built
    assert "llama-cli" not in built
    # Both targets are there (`make llama-cli` would build it): only the default build left it.
    subprocess.run(["make", "llama-cli"], cwd=build, check=True, capture_output=True, timeout=120)
    assert any(p.name == "llama-cli" for p in build.rglob("llama-cli"))


def test_the_installer_passes_the_cmake_include_and_rebuilds_when_it_changes() -> None:
    script = INSTALLER.read_text("utf-8")
    assert "-DCMAKE_PROJECT_INCLUDE=" in script and "llama-server-only.cmake" in script
    assert 'BUILD_INPUTS="$REQUIREMENTS/llama-server-only.cmake"' in script
