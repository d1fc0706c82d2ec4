"""The `aib` command line: each command parses its options into a workflow's options object and
calls that one workflow (`independence_bench.workflows`).

`main.py` is the entry point and the command group; commands are grouped by family in
`run.py` (run, estimate, runs, judge), `results.py` (leaderboard and the store analyses),
`files.py` (report, view, import) and `models.py`; options used by more than one command are
written once in `options.py`. A command imports its library code when it runs, so `aib --help`
and a store check stay fast (`tests/cli/test_startup.py`, `benchmarks/startup.py`).
"""
