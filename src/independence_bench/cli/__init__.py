"""The `aib` command line: parses each command's options and calls one workflow."""
