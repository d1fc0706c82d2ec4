"""Suite data: the table of scenario kinds, and the scenarios, prompt variants and suites
loaded from the package's YAML."""
