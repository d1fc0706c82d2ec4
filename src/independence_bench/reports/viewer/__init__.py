"""The static transcript viewer that `aib view` writes: the hand-written page, every suite's
leaderboard and one data file per model (`_write`, which also serves it on 127.0.0.1), each
model's document packed so every text is written once (`_model`), and the tables of texts
and messages models share (`_tables`).
"""

from independence_bench.reports.viewer._model import (
    model_data,
    unpack_model_data,
)
from independence_bench.reports.viewer._write import (
    ASSETS,
    SLUG_PATTERN,
    js_json,
    make_server,
    model_slug,
    serve_viewer,
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
    "unpack_model_data",
    "write_viewer",
]
