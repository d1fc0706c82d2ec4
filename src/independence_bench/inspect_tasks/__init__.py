"""The suites as Inspect AI tasks, and Inspect logs read back into the store.

A second front door beside `aib run`: `inspect eval independence_bench/v2` runs a suite's
conversations with any model Inspect reaches, judged by the model bound to the `grader` role,
and `aib import` reads the logs those tasks write. Everything here but `log_format.py` and
`log_import.py` imports `inspect_ai`, which the `[inspect]` extra installs; nothing else in the
package imports this subpackage's Inspect modules, so the benchmark runs without it.
"""
