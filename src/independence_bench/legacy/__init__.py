"""The earlier implementation: its result files, its importer and its scoring rules."""
