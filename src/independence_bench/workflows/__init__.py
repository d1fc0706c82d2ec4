"""Workflows: the library functions behind each command."""
