"""AI Independence Bench: does a model keep its own persona, preferences and boundaries?"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ai-independence-bench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
