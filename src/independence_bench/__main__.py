"""`python -m independence_bench` runs the `aib` command line."""

from __future__ import annotations

import sys

from independence_bench.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
