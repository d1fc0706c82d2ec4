"""The static transcript viewer that `aib view` writes: the hand-written page, every suite's
leaderboard and one data file per model (`_write`; `_serve` serves those files on 127.0.0.1), each
model's document packed so every text is written once (`_model`), and the tables of texts
and messages models share (`_tables`).
"""

from independence_bench.reports.viewer._model import (
    model_data,
    unpack_model_data,
)
from independence_bench.reports.viewer._serve import make_server, serve_viewer, served_file
from independence_bench.reports.viewer._write import (
    ASSETS,
    SLUG_PATTERN,
    js_json,
    model_slug,
    write_viewer,
)

__all__ = [
    "ASSETS",
    "SLUG_PATTERN",
    "js_json",
    "make_server",
    "model_data",
    "model_slug",
    "serve_viewer",
    "served_file",
    "unpack_model_data",
    "write_viewer",
]
