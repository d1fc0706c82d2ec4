"""Suite data: scenarios, prompt variants and suites loaded from the package's YAML."""
