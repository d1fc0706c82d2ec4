#!/usr/bin/env bash
# Install the project with its dev tools into .venv, then lint, type-check and run the fast suite.
# This is the README's test command; CI runs exactly this on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,inspect]'
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
