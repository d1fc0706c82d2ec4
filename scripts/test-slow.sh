#!/usr/bin/env bash
# The slow, still-automated checks: real embedded models end to end, browser tests, small benchmarks.
# Assumes scripts/test.sh has created .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest -q -m slow
