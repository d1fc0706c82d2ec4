"""Workflows: the library function behind each `aib` command, one module per command family.

Each module owns an options dataclass, the Python API (what a script imports) and a
`*_command` function that adds the lines the terminal shows; the CLI parses options into the
dataclass and calls that function. Checks that can fail — suite, config, keys, endpoints — run
before the store is opened, so bad input never leaves a half-written store.

- `plan.py`: `RunOptions` and what they resolve to (suite, model specs, runs, client pool).
- `run.py`: `run_benchmark` / `run_command` (`aib run`).
- `estimate.py`: `estimate_benchmark_async` / `estimate_command` (`aib estimate`).
- `judge.py`: `judge_stored` / `judge_command` (`aib judge`).
- `runs.py`: `runs_command` (`aib runs`).
- `leaderboard.py`: `build_leaderboard` / `leaderboard_command` (`aib leaderboard`).
- `analyses.py`: `judges_command`, `compare_command`, `items_command`, `configs_command`
  (`aib judges`, `compare`, `items`, `configs`: the store-only analyses of `reports/analyses/`).
- `report.py`: `write_report` / `report_command` (`aib report`).
- `view.py`: `build_viewer` / `view_command` (`aib view`).
- `imports.py`: `import_results` / `import_command` (`aib import`).
- `models.py`: `models_command` (`aib models`: the model lists of `clients/presets.py`).

Every command of the CLI calls one of these; the package's own `__init__` re-exports the
Python API (`run_suite`, `judge`, `build_leaderboard`, `import_results`, `write_report`).

Importing this package imports none of its modules.
"""

from __future__ import annotations

from collections.abc import Callable

Echo = Callable[[str], None]
"""Where a command's output goes, one text block per call (the CLI passes `click.echo`)."""
