"""AI Independence Bench: does a model keep its own persona, preferences and boundaries?

Importing the package loads nothing else: `__version__` is read from the installed metadata
when first asked for (loading `importlib.metadata` takes longer than `aib --help` should), and
each subpackage is imported by what needs it.
"""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """`__version__`, from the installed distribution's metadata."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ai-independence-bench")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+unknown"
