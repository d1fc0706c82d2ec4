#!/usr/bin/env python3
"""Regenerate docs/v3-survival.png and docs/v3-hold-update.png from the current chart code.

Runs suite v3 against the scripted loopback server (no network, no key) with the archetypes of
tests/support/scripted_v3.py, writes the report and copies its two v3 charts into docs/.
Usage: .venv/bin/python scripts/v3_doc_charts.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from independence_bench.cli.main import main
from support.mock_server import MockConfig, MockServer

DOCS = Path(__file__).resolve().parent.parent / "docs"
MODELS = (
    "scripted-calibrated,scripted-split,scripted-stubborn,scripted-late-caver,scripted-pushover"
)
CHARTS = {"survival.png": "v3-survival.png", "hold_update.png": "v3-hold-update.png"}


def main_() -> int:
    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "store", Path(folder) / "report"
        with MockServer(MockConfig()) as server:
            args = ["run", "--suite", "v3", "--models", MODELS, "--judge", "scripted-judge"]
            args += ["--base-url", server.base_url, "--runs", "2", "--data-dir", str(data)]
            if main(args) != 0:
                return 1
        if main(["report", "--data-dir", str(data), "--out", str(out)]) != 0:
            return 1
        for chart in out.glob("charts/*/*.png"):
            if chart.name in CHARTS:
                shutil.copyfile(chart, DOCS / CHARTS[chart.name])
                print(f"wrote {DOCS / CHARTS[chart.name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
