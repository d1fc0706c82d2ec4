"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It is a small HTTP/1.1 server on asyncio streams (keep-alive, Content-Length bodies, no
dependencies) that answers `POST /v1/chat/completions` with the scripted behaviours of
`mock_behaviours.py`, lists them at `GET /v1/models`, and counts chat calls and model listings
at `GET /_stats` (and records the calls in flight as each arrives, `in_flight_seen`). Latency,
jitter and faults (HTTP errors, dropped connections, damaged completions) come from a frozen
`MockConfig` and a seeded RNG, so resilience tests are repeatable. `GET /_answered` counts the
cleanly answered chat requests by `request_fingerprint`, so a kill-and-resume test can tell a
repeated call from a new one; other switches make the server a web page (`answer_html`), a
proxy that echoes the caller's key in its errors (`echo_auth`), a provider that throttles
above a number of calls in flight (`max_in_flight`), llama-cpp-python's server (`llamacpp`),
llama.cpp's `llama-server` started without `--jinja` (`no_jinja`),
vLLM, Ollama or LM Studio as their documentation describes them (`server`, `server_flags`:
`emulate_*.py`), or a hostile one whose replies and errors carry surrogates and control
sequences (`hostile`, `mock_hostile.py`). It keeps every chat request's headers beside its body.
Run it in-process with `with MockServer(config) as server:` (a background thread with its own
event loop; `server.seen` copies the thread-safe `MockState`, its one record of what it saw),
or as a process with `PYTHONPATH=tests python -m support.mock_server` in a checkout (the doubles
are not in the wheel), which prints `listening <base url>`. The HTTP/1.1 framing is `mock_http.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from support.emulate_lmstudio import LMSTUDIO
from support.emulate_ollama import OLLAMA
from support.emulate_vllm import VLLM
from support.mock_behaviours import (
    FAULT_KINDS,
    STATUS_FAULTS,
    MockReply,
    answer_request,
    conversation_key,
    error_reply,
    fault_applies,
    fault_reply,
    html_reply,
    models_payload,
    request_fingerprint,
)
from support.mock_emulator import ServerEmulator
from support.mock_hostile import HOSTILE_TEXT, hostile_reply, shaped_reply
from support.mock_http import (
    HttpRequest,
    HttpRequestError,
    read_request,
    render_response,
)
from support.mock_llamacpp import llamacpp_refusal, tool_calls_as_text
from support.mock_text_tools import prompt_tools_body

NO_JINJA_ERROR = "tools param requires --jinja flag"
"""llama-server's error message for a request with `tools` when it runs without `--jinja`."""

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})
STATS_PATH = "/_stats"
ANSWERED_PATH = "/_answered"
_MAX_HEAD_BYTES = 1 << 20
EMULATORS: Mapping[str, ServerEmulator] = {e.name: e for e in (VLLM, OLLAMA, LMSTUDIO)}
"""The server kinds the mock can answer as (`MockConfig.server`)."""


@dataclass(frozen=True)
class MockConfig:
    """How the mock server behaves: latency, fault injection and strictness."""

    latency_s: float = 0.0
    jitter: float = 0.0
    """Latency varies uniformly by ± this fraction."""
    fault_rate: float = 0.0
    """Chance that a request gets one of `fault_kinds` (among those that apply to it)."""
    fault_kinds: tuple[str, ...] = ("429", "500", "502", "503")
    seed: int = 0
    fail_first: int = 0
    """The first N chat requests get `fail_first_kind`, whatever `fault_rate` says."""
    fail_first_kind: str = "500"
    """The fault of the first `fail_first` requests (`"429"`: a provider throttling a burst)."""
    timeout_sleep_s: float = 60.0
    """How long a `timeout` fault holds the connection before dropping it."""
    strict_ids: bool = True
    """Reject malformed tool-call ids and repeated roles with HTTP 400, as strict providers do."""
    keep_bodies: bool = True
    """Record request bodies (tests); benchmarks turn this off and only count."""
    answer_html: bool = False
    """Answer every request with an HTML page, like a base URL that points at a website."""
    echo_auth: bool = False
    """Put the caller's `Authorization` header in every error message, like a careless proxy."""
    max_in_flight: int = 0
    """Answer 429 (no Retry-After) to chat requests beyond this many in flight; 0: no limit."""
    llamacpp: bool = False
    """Behave like llama-cpp-python's server (`mock_llamacpp.py`)."""
    no_jinja: bool = False
    """Behave like llama.cpp's `llama-server --no-jinja`: HTTP 500 `NO_JINJA_ERROR` to every
    request with `tools` (measured: docs/contributors/servers-live.md)."""
    hostile: bool = False
    """Put `mock_hostile.HOSTILE_TEXT` in every reply and error, and untrustworthy usage."""
    reply_chars: int = 0
    """With `hostile`, pad every subject reply to at least this many characters."""
    hostile_text: str = HOSTILE_TEXT
    """With `hostile`, the text put into every reply and error (property tests vary it)."""
    server: str = ""
    """Answer as this server kind (`EMULATORS`: vllm, ollama, lmstudio); "" for the plain mock."""
    server_flags: tuple[str, ...] = ()
    """How the emulated server was started (each emulator module lists its flags)."""

    @property
    def emulator(self) -> ServerEmulator | None:
        return EMULATORS[self.server] if self.server else None

    shape: str = ""
    """One of `mock_hostile.SHAPES`: every chat reply reshaped (deep JSON, huge errors, …)."""

    def __post_init__(self) -> None:
        if self.server and self.server not in EMULATORS:
            raise ValueError(f"unknown server {self.server!r}; choose from {sorted(EMULATORS)}")
        if self.server and (odd := set(self.server_flags) - EMULATORS[self.server].flags):
            raise ValueError(f"{self.server} has no flags {sorted(odd)}")
        unknown = [k for k in (*self.fault_kinds, self.fail_first_kind) if k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; choose from {list(FAULT_KINDS)}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be within [0, 1], got {self.fault_rate}")
        if self.latency_s < 0 or not 0.0 <= self.jitter <= 1.0:
            raise ValueError("latency_s must be >= 0 and jitter within [0, 1]")


@dataclass(frozen=True)
class Admission:
    """What the server decided for one chat request when it arrived."""

    fault: str | None
    first_sight: bool
    delay_s: float


@dataclass(frozen=True)
class MockRecord:
    """What the mock server had seen when it was read: a copy, consistent across its fields."""

    requests: list[dict[str, Any]]
    """Recorded chat request bodies in arrival order; faulted ones carry `"faulted": kind`."""
    headers: list[dict[str, str]]
    """The HTTP headers of each recorded chat request (lower-case names), in the same order."""
    request_count: int
    """Chat requests received (also counted when bodies are not kept)."""
    answered: dict[str, int]
    """Chat requests answered cleanly, per `request_fingerprint` (as `GET /_answered`)."""
    in_flight_seen: list[int]
    """Per chat request in arrival order, the requests in flight when it arrived (itself
    included): how a test sees a client back off and recover."""
    peak_in_flight: int
    """The most chat requests ever in flight at once (tests check overlap by it)."""
    model_lists: int
    """`GET /models` requests answered (a cached re-run must send none)."""


class MockState:
    """The one thread-safe record of what the server saw, plus the seeded dice for faults and
    latency. The service updates it on its event loop; `seen()` copies it for another thread."""

    def __init__(self, config: MockConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._bodies: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._count = 0
        self._judged: set[str] = set()
        self._answered: dict[str, int] = {}
        self._in_flight = 0
        self._peak_in_flight = 0
        self._in_flight_seen: list[int] = []
        self._model_lists = 0
        self._fault_rng = random.Random(config.seed)
        self._latency_rng = random.Random(f"{config.seed}-latency")

    @contextlib.contextmanager
    def chat_in_flight(self) -> Iterator[int]:
        """Hold one chat request in flight; yields the number in flight with it included."""
        with self._lock:
            self._in_flight += 1
            in_flight = self._in_flight
            self._peak_in_flight = max(self._peak_in_flight, in_flight)
            self._in_flight_seen.append(in_flight)
        try:
            yield in_flight
        finally:
            with self._lock:
                self._in_flight -= 1

    def record_model_list(self) -> None:
        """Count a `GET /models` request answered."""
        with self._lock:
            self._model_lists += 1

    def record_answer(self, body: Mapping[str, Any]) -> None:
        """Count a chat request answered cleanly (HTTP 200, no fault)."""
        fingerprint = request_fingerprint(body)
        with self._lock:
            self._answered[fingerprint] = self._answered.get(fingerprint, 0) + 1

    def admit(self, body: dict[str, Any], headers: Mapping[str, str] | None = None) -> Admission:
        """Record one chat request and decide its fault, latency and flaky-judge state."""
        config = self._config
        key = conversation_key(body) if body.get("model") == "scripted-judge-flaky" else None
        with self._lock:
            index = self._count
            self._count += 1
            fault = config.fail_first_kind if index < config.fail_first else self._roll_fault(body)
            first_sight = key is None or key not in self._judged
            if key is not None:
                self._judged.add(key)
            spread = self._latency_rng.uniform(-config.jitter, config.jitter)
            if config.keep_bodies:
                self._bodies.append({**body, "faulted": fault} if fault else body)
                self._headers.append(dict(headers or {}))
        return Admission(fault, first_sight, max(0.0, config.latency_s * (1.0 + spread)))

    def _roll_fault(self, body: Mapping[str, Any]) -> str | None:
        # Always draw twice so the sequence of decisions depends only on the seed and the order.
        roll, pick = self._fault_rng.random(), self._fault_rng.random()
        if roll >= self._config.fault_rate:
            return None
        kinds = [kind for kind in self._config.fault_kinds if fault_applies(kind, body)]
        return kinds[int(pick * len(kinds))] if kinds else None

    def seen(self) -> MockRecord:
        """A copy of everything recorded so far, taken at one moment."""
        with self._lock:
            return MockRecord(
                requests=list(self._bodies),
                headers=list(self._headers),
                request_count=self._count,
                answered=dict(self._answered),
                in_flight_seen=list(self._in_flight_seen),
                peak_in_flight=self._peak_in_flight,
                model_lists=self._model_lists,
            )

    def reset(self) -> None:
        """Forget all requests and restart the dice from the seed.

        `peak_in_flight`, `in_flight_seen` and `model_lists` are kept: they describe the
        server's whole life, and the calls in flight now are still in flight.
        """
        with self._lock:
            self._bodies.clear()
            self._headers.clear()
            self._count = 0
            self._judged.clear()
            self._answered.clear()
            self._fault_rng = random.Random(self._config.seed)
            self._latency_rng = random.Random(f"{self._config.seed}-latency")


class MockService:
    """The server's request handling on one event loop: routing, delays, faults and replies."""

    def __init__(self, config: MockConfig) -> None:
        self.config = config
        self.state = MockState(config)
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self, host: str, port: int) -> asyncio.Server:
        """Listen on host:port (0 picks a free port)."""
        return await asyncio.start_server(
            self._serve_connection, host, port, backlog=4096, limit=_MAX_HEAD_BYTES
        )

    async def shutdown(self, server: asyncio.Server) -> None:
        """Stop listening and drop every open connection, including ones mid-delay."""
        server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    request = await read_request(reader, writer)
                except HttpRequestError as exc:
                    writer.write(
                        render_response(error_reply(exc.status, str(exc)), keep_alive=False)
                    )
                    await writer.drain()
                    break
                if request is None:
                    break
                reply = await self._route(request)
                if reply is None:
                    writer.transport.abort()
                    break
                writer.write(render_response(reply, keep_alive=request.keep_alive))
                await writer.drain()
                if not request.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Shutdown cancels this top-level connection task; re-raising would only make
            # asyncio's stream callback log the cancellation as an error.
            writer.transport.abort()
        finally:
            writer.close()
            if task is not None:
                self._connections.discard(task)

    async def _route(self, request: HttpRequest) -> MockReply | None:
        path = request.path.rstrip("/") or "/"
        if self.config.answer_html and path not in (STATS_PATH, ANSWERED_PATH):
            return html_reply()
        if path in CHAT_PATHS:
            if request.method != "POST":
                return error_reply(405, f"use POST for {path}")
            with self.state.chat_in_flight() as in_flight:
                reply = await self._answer_chat(request, in_flight)
            if reply is not None and reply.status >= 400 and self.config.echo_auth:
                reply = _echo_auth(reply, request.headers.get("authorization", ""))
            return reply
        if request.method == "GET" and path in MODELS_PATHS:
            self.state.record_model_list()
            emulator = self.config.emulator
            listing = models_payload()
            return MockReply(200, emulator.list_models(listing) if emulator else listing)
        if request.method == "GET" and path == STATS_PATH:
            seen = self.state.seen()
            return MockReply(200, {"requests": seen.request_count, "model_lists": seen.model_lists})
        if request.method == "GET" and path == ANSWERED_PATH:
            return MockReply(200, {"answered": self.state.seen().answered})
        return error_reply(404, f"no route for {request.method} {path} (mock server)")

    async def _answer_chat(self, request: HttpRequest, in_flight: int) -> MockReply | None:
        """A chat reply, or None to drop the connection without answering.

        `in_flight` counts the chat requests in flight when this one arrived, itself included.
        """
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            return error_reply(400, "request body is not valid JSON")
        if not isinstance(body, dict):
            return error_reply(400, "request body must be a JSON object")
        admission = self.state.admit(body, request.headers)
        if self.config.max_in_flight and in_flight > self.config.max_in_flight:
            return fault_reply("429_no_retry_after")
        if admission.delay_s > 0:
            await asyncio.sleep(admission.delay_s)
        fault = admission.fault
        if fault == "reset":
            return None
        if fault == "timeout":
            await asyncio.sleep(self.config.timeout_sleep_s)
            return None
        if fault in STATUS_FAULTS:
            return self._hostile(fault_reply(fault))
        if fault == "plain_text":
            return MockReply(200, {}, plain="upstream busy, try again")
        if self.config.no_jinja and "tools" in body:
            return error_reply(500, NO_JINJA_ERROR, "server_error")
        if self.config.llamacpp and (refusal := llamacpp_refusal(body)) is not None:
            return refusal
        emulator = self.config.emulator
        if emulator and (refusal := emulator.refuse(body, frozenset(self.config.server_flags))):
            return refusal
        reply = answer_request(
            (prompt_tools_body(body) if emulator else None) or body,
            fault=fault,
            strict_ids=self.config.strict_ids,
            first_sight=admission.first_sight,
        )
        if reply.status == 200 and fault is None:
            self.state.record_answer(body)
        if emulator:
            reply = emulator.shape(reply, body, frozenset(self.config.server_flags))
        return self._hostile(tool_calls_as_text(reply) if self.config.llamacpp else reply)

    def _hostile(self, reply: MockReply) -> MockReply:
        if self.config.shape:
            reply = shaped_reply(reply, self.config.shape)
        if not self.config.hostile:
            return reply
        return hostile_reply(
            reply, text=self.config.hostile_text, reply_chars=self.config.reply_chars
        )


def _echo_auth(reply: MockReply, authorization: str) -> MockReply:
    error = reply.payload.get("error")
    if not isinstance(error, Mapping):
        return reply
    message = f"{error.get('message')} (request had Authorization: {authorization})"
    return MockReply(reply.status, {"error": {**error, "message": message}}, reply.headers)


class MockServer:
    """The mock server on a background thread: `with MockServer(config) as server: ...`."""

    def __init__(
        self, config: MockConfig | None = None, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.config = config or MockConfig()
        self.host = host
        self.port = port
        """0 picks a free port; once started it holds the port in use."""
        self._service = MockService(self.config)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. `http://127.0.0.1:PORT/v1`."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def seen(self) -> MockRecord:
        """What the server has seen so far (requests, clean answers, calls in flight, model
        listings), copied now: read it again after more calls."""
        return self._service.state.seen()

    def reset(self) -> None:
        """Forget recorded requests and restart fault dice, `fail_first` and the flaky judge."""
        self._service.state.reset()

    def start(self) -> MockServer:
        """Start serving; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("mock server already started")
        self._thread = threading.Thread(target=self._run, name="mock-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=10):
            raise RuntimeError("mock server did not start within 10 s")
        if self._error is not None:
            raise RuntimeError(f"mock server failed to start: {self._error}") from self._error
        return self

    def stop(self) -> None:
        """Stop serving and join the thread; open connections are dropped, not waited for."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(timeout=10)
        self._thread = self._loop = self._stop = None
        self._ready.clear()
        if thread is not None and thread.is_alive():
            raise RuntimeError("mock server did not stop within 10 s")

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to the starting thread, not lost in this one
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        server = await self._service.start(self.host, self.port)
        self.port = server.sockets[0].getsockname()[1]
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        await self._service.shutdown(server)


async def serve(
    config: MockConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve on the running event loop until cancelled; `on_listening` gets the base URL."""
    service = MockService(config)
    server = await service.start(host, port)
    bound_port = server.sockets[0].getsockname()[1]
    if on_listening is not None:
        on_listening(f"http://{host}:{bound_port}/v1")
    try:
        await asyncio.Event().wait()
    finally:
        await service.shutdown(server)


def parse_args(argv: Sequence[str] | None = None) -> tuple[MockConfig, str, int]:
    """Turn command-line options into a config, host and port."""
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible mock server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    parser.add_argument("--jitter", type=float, default=0.0, help="latency ± this fraction")
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument(
        "--fault-kinds", default="429,500,502,503", help=f"comma list of {','.join(FAULT_KINDS)}"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--timeout-sleep", type=float, default=60.0)
    parser.add_argument("--lenient-ids", action="store_true", help="skip the strict-id check")
    parser.add_argument("--max-in-flight", type=int, default=0, help="429 above this; 0: off")
    parser.add_argument("--html", action="store_true", help="answer everything with a web page")
    parser.add_argument("--llamacpp", action="store_true", help="imitate llama-cpp-python")
    parser.add_argument("--hostile", action="store_true", help="control codes, surrogates, …")
    args = parser.parse_args(argv)
    try:
        config = MockConfig(
            latency_s=args.latency,
            jitter=args.jitter,
            fault_rate=args.fault_rate,
            fault_kinds=tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip()),
            seed=args.seed,
            fail_first=args.fail_first,
            timeout_sleep_s=args.timeout_sleep,
            strict_ids=not args.lenient_ids,
            keep_bodies=False,
            max_in_flight=args.max_in_flight,
            answer_html=args.html,
            llamacpp=args.llamacpp,
            hostile=args.hostile,
        )
    except ValueError as exc:
        parser.error(str(exc))
    return config, args.host, args.port


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mock server as a process: print `listening <base url>` and serve until killed."""
    config, host, port = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, host, port, lambda url: print(f"listening {url}", flush=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
