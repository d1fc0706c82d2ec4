"""The package's version: the one place every layer reads it from.

Read from the installed distribution's metadata when this module is first imported, so a module
that needs it (the HTTP client's User-Agent, a run's stored package version, the reports'
footers) imports it from here, never from the package front, which sits above every layer.
`aib --help` does not import this module: the command line reads it only for `--version`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "ai-independence-bench"
"""The distribution name on PyPI and in the installed metadata."""


def installed_version() -> str:
    """The installed distribution's version; `0.0.0+unknown` from a source tree never
    installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0.0.0+unknown"


__version__ = installed_version()
