"""CI's llama-cpp-python build leaves out llama.cpp's `common`, which the package never loads.

`scripts/test-slow.sh` compiles llama-cpp-python with
`-DCMAKE_PROJECT_INCLUDE=scripts/llama-cpp-python-without-common.cmake`. This builds and installs
a tree shaped like llama-cpp-python's (a top project forcing `LLAMA_BUILD_COMMON` ON in the
cache, then llama.cpp's project reading it through option() and installing `common` when set):
with the include, `common` is neither compiled nor installed while the library is both; without
it, `common` is built, so the fake tree really forces it as llama-cpp-python's does.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "scripts" / "llama-cpp-python-without-common.cmake"

FAKE_BINDINGS = """
cmake_minimum_required(VERSION 3.21)
project(llama_cpp C)
set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)
add_subdirectory(vendor)
"""
FAKE_LLAMA_CPP = """
cmake_minimum_required(VERSION 3.14)
project("llama.cpp" C)
option(LLAMA_BUILD_COMMON "llama: build common utils library" OFF)
add_library(llama SHARED llama.c)
install(TARGETS llama LIBRARY)
if (LLAMA_BUILD_COMMON)
  add_library(llama-common SHARED common.c)
  install(TARGETS llama-common LIBRARY)
endif()
"""


def build_and_install(tmp_path: Path, *options: str) -> set[str]:
    """Configure, build and install the fake tree; the names of the files installed."""
    source, build, prefix = tmp_path / "src", tmp_path / "build", tmp_path / "prefix"
    (source / "vendor").mkdir(parents=True)
    build.mkdir()
    (source / "CMakeLists.txt").write_text(FAKE_BINDINGS, "utf-8")
    (source / "vendor" / "CMakeLists.txt").write_text(FAKE_LLAMA_CPP, "utf-8")
    for name in ("llama", "common"):
        (source / "vendor" / f"{name}.c").write_text(f"int {name}(void) {{ return 0; }}\n")
    configure = ["cmake", str(source), f"-DCMAKE_INSTALL_PREFIX={prefix}", *options]
    for command in (configure, ["cmake", "--build", "."], ["cmake", "--install", "."]):
        subprocess.run(command, cwd=build, check=True, capture_output=True, timeout=120)
    return {p.name for p in prefix.rglob("*") if p.is_file()}


@pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("cc") is None,
    reason="needs cmake and a C compiler",
)
def test_common_is_left_out_and_the_library_still_built_and_installed(tmp_path: Path) -> None:
    installed = build_and_install(tmp_path / "lean", f"-DCMAKE_PROJECT_INCLUDE={INCLUDE}")
    assert "libllama.so" in installed
    assert not [name for name in installed if "common" in name]
    assert "libllama-common.so" in build_and_install(tmp_path / "whole")


def test_the_slow_step_passes_the_include_when_it_compiles_llama_cpp_python() -> None:
    script = (REPO / "scripts" / "test-slow.sh").read_text("utf-8")
    build = script[script.index("pip wheel") - 200 : script.index("pip wheel")]
    assert "-DCMAKE_PROJECT_INCLUDE='$PWD/scripts/llama-cpp-python-without-common.cmake'" in build
