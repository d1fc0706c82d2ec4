"""The second interrupt aborts cleanly, with an embedded model generating in a worker thread.

Before, a second Ctrl-C cancelled each task twice (the task group, then `asyncio.run`'s
teardown); the second cancellation left `embedded._run_shielded` while llama.cpp still
generated, and closing the runtime freed the context under it: exit 139, a segmentation fault.
A SIGTERM after the first Ctrl-C was ignored. The fast tests check each piece with a stand-in
generation; the slow one sends both signals to `aib run` while the embedded model generates.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from independence_bench.clients.local.embedded import EmbeddedRuntime
from independence_bench.clients.local.weights import embedded_models, find_part_files
from independence_bench.engine.stopping import StopRequest, until_stopped
from independence_bench.errors import UserError


async def test_a_second_cancel_still_waits_for_the_generating_thread(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path)
    started, finished = threading.Event(), threading.Event()

    def generate(stop: threading.Event) -> str:
        started.set()
        stop.wait()
        time.sleep(0.2)  # the token being decoded when the stop came
        finished.set()
        return "cut"

    task = asyncio.create_task(runtime.run(generate))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0)
    # What a second Ctrl-C brings: asyncio.run's teardown cancels every task of the loop, the
    # task group's too (each cancelling its children again) and the worker thread's own future.
    for other in asyncio.all_tasks():
        if other is not asyncio.current_task():
            other.cancel()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set(), "the task ended while its thread still generated"
    assert not runtime.lock.locked()


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_any_stop_signal_after_the_first_ctrl_c_aborts(second: int) -> None:
    stop = StopRequest()

    async def work() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.05)
        assert stop.signum == signal.SIGINT  # the first only asked to stop
        os.kill(os.getpid(), second)
        await asyncio.sleep(5)  # an abort never waits this out

    async def main() -> None:
        await until_stopped(work(), stop, lambda: 0)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())


def _claimed(store: Path) -> bool:
    if not store.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            return bool(db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])
    except sqlite3.OperationalError:  # not created or migrated yet
        return False


def _embedded_missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'ai-independence-bench[offline]')"
    try:
        find_part_files(embedded_models()["embedded:qwen2.5-coder-0.5b"])
    except UserError as error:
        return str(error)
    return None


@pytest.mark.slow
@pytest.mark.skipif(_embedded_missing() is not None, reason=_embedded_missing() or "")
@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_second_signal_while_llama_cpp_generates_exits_130_with_its_line(
    second: int, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_KEY"))}
    env.pop("AIB_DATA_DIR", None)
    args = ["run", "--offline", "--scenarios", "direct", "--data-dir", str(tmp_path / "d")]
    process = subprocess.Popen(
        [sys.executable, "-m", "independence_bench", *args],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # A call is claimed in the store just before it is sent: llama.cpp is then at work on it.
    deadline = time.monotonic() + 600
    while not _claimed(tmp_path / "d" / "aib.sqlite3"):
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.2)
    time.sleep(2.0)  # inside the first reply's prompt or its tokens
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)
    process.send_signal(second)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "aib: interrupted; completed calls are stored" in err
    assert "Traceback" not in err and "Segmentation" not in err


async def test_a_call_stopped_by_the_first_ctrl_c_is_abandoned_not_failed(tmp_path: Path) -> None:
    """The final frame counts only calls that ended in an error as failed: `aib runs --failed`
    lists none for a call a stop (or another process) ended."""
    from independence_bench.clients.config import ModelSpec
    from independence_bench.clients.endpoints import ClientPool, RetryPolicy
    from independence_bench.clients.protocol import Completion, CompletionRequest
    from independence_bench.engine.engine import Engine
    from independence_bench.engine.stopping import RunStopped
    from independence_bench.store.store import Store

    class Stopping:
        async def complete(self, request: CompletionRequest) -> Completion:
            raise RunStopped("the run is stopping")

        async def aclose(self) -> None:
            return None

    events: list[str] = []

    class Sink:
        def planned(self, items: int, judgments: int, calls: int = 0) -> None:
            return None

        def advance(self, event: str) -> None:
            events.append(event)

    pool = ClientPool(env={}, factories=(lambda spec: ("stub", Stopping(), 1),))
    with Store(tmp_path) as store:
        engine = Engine(store, pool, retry=RetryPolicy(max_attempts=1), progress=Sink())
        request = CompletionRequest("m", ({"role": "user", "content": "hi"},))
        with pytest.raises(RunStopped):
            await engine._send(ModelSpec(id="m"), request, lambda c: True, lambda c: True)
    assert events == ["call_started", "call_abandoned"]


def test_a_stop_during_a_long_prompt_ends_it_between_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The prompt is read one `PROMPT_BLOCK` at a time, as one llama.cpp `eval` would batch it,
    and a stop (a second Ctrl-C cancelling the call) is seen between two blocks."""
    import types

    from independence_bench.clients.local.embedded import PROMPT_BLOCK, LoadedModel, _Session
    from independence_bench.clients.protocol import ClientError

    monkeypatch.setitem(sys.modules, "llama_cpp", types.ModuleType("llama_cpp"))
    stop = threading.Event()
    batches: list[list[int]] = []

    class Llama:
        n_tokens = 0

        def eval(self, tokens: list[int]) -> None:
            batches.append(list(tokens))
            self.n_tokens += len(tokens)
            if len(batches) == 2:
                stop.set()

    info = LoadedModel(Path("m.gguf"), "m", 8192, 0.0)
    session = _Session(info, Llama(), None, cache_bytes=0)
    prompt = list(range(5 * PROMPT_BLOCK + 3))
    assert session.evaluate_prompt(prompt) == 0
    assert [len(b) for b in batches] == [PROMPT_BLOCK] * 5 + [3]
    assert [t for b in batches for t in b] == prompt
    batches.clear()
    stop.clear()  # the first reading set it too, unasked
    with pytest.raises(ClientError, match="stopped"):
        _Session(info, Llama(), None, cache_bytes=0).evaluate_prompt(prompt, stop)
    assert len(batches) == 2  # not the four blocks after the stop
