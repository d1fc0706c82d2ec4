"""Suite data: the table of scenario kinds, and the scenarios, prompt variants and suites
loaded from the package's YAML."""

DEFAULT_SUITE = "v2"
"""The suite `aib run` and `aib estimate` run when `--suite` is not given (and `RunOptions`'s)."""
