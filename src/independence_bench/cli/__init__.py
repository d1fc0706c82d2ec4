"""The `aib` command line."""
