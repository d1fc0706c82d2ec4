"""The embedded backend: GGUF models run in this process through llama-cpp-python.

An `EmbeddedRuntime` owns the one lock that keeps the CPU to a single generation at a time and
every model it loaded; an `EmbeddedClient` is the `ModelClient` for one model on it, with its own
llama.cpp context. Prompts are rendered and checked by `gguf_chat`, evaluated in fixed blocks so
that seeded replies do not depend on what was cached, and the KV entries of earlier prompts are
kept as snapshots so that interleaved multi-turn conversations resume instead of re-reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ctypes
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from independence_bench.clients.local.gguf_chat import (
    check_prompt_carries,
    constrainable_schema,
    plain_json,
    template_messages,
    top_logprobs,
)
from independence_bench.clients.local.weights import (
    INTERIM,
    OFFLINE_INSTALL,
    Notify,
    resolve_gguf,
)
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest
from independence_bench.clients.tool_text import parse_tool_calls
from independence_bench.errors import UserError

DEFAULT_N_CTX = 8192
DEFAULT_MAX_TOKENS = 1024
"""Cap for requests without `max_tokens`: small models can otherwise ramble to the context end."""
DEFAULT_PROMPT_CACHE_BYTES = 512 << 20
"""KV snapshots kept per client; about 40 conversations of 1,000 tokens on the 0.5B model."""
REPEAT_PENALTY = 1.1
PROMPT_BLOCK = 64
"""Prompts are evaluated, and their KV entries reused, in whole blocks of this many tokens."""

_T = TypeVar("_T")
_SEQUENCE = 0


@dataclass(frozen=True)
class LoadedModel:
    """What loading one GGUF took and what it reports about itself."""

    path: Path
    served_by: str
    """The GGUF's own `general.name`, reported as `Completion.served_by`."""
    n_ctx: int
    load_s: float


class _Session:
    """One llama.cpp context on a loaded GGUF: its chat formatter and the prompts it can reuse.

    llama.cpp's logits depend, in the last bits, on how the prompt was split into batches, and
    at temperature > 0 that is enough to change the sampled reply. So prompts are evaluated in
    blocks of `PROMPT_BLOCK` tokens counted from position 0, and only whole blocks of an earlier
    prompt are reused: the numbers never depend on what ran before, and a seeded request gives
    the same reply whether or not its conversation's earlier turns are still cached.

    After each prompt the context's KV entries are snapshotted (a few MB), so a conversation whose
    turns interleave with others' picks up from its own last prompt rather than from whatever
    the context evaluated last.
    """

    def __init__(self, info: LoadedModel, llama: Any, formatter: Any, cache_bytes: int) -> None:
        self.info = info
        self.llama = llama
        self.formatter = formatter
        self.closed = False
        self._blocks: tuple[int, ...] = ()
        """Prompt tokens whose KV entries, computed as whole blocks, are live in the context."""
        self._snapshots: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._cache_bytes = cache_bytes

    def close(self) -> None:
        """Free the context and the weights; the session cannot be used afterwards."""
        if not self.closed:
            self.llama.close()
            self._snapshots.clear()
            self.closed = True

    def evaluate_prompt(self, tokens: list[int], stop: threading.Event | None = None) -> int:
        """Bring the KV cache to exactly `tokens`; return how many prompt tokens were reused.

        The new tokens go to llama.cpp one `PROMPT_BLOCK` (its `n_batch`) at a time, the very
        batches one `eval` call would make, so that a set `stop` ends a long prompt between two
        blocks (a `ClientError`) instead of after it: a second Ctrl-C then waits for one block."""
        import llama_cpp

        # At least one token is evaluated so that the logits to sample from are fresh.
        limit = len(tokens) - 1
        reused = _reusable(self._blocks, tokens, limit)
        best = max(self._snapshots, key=lambda k: _reusable(k, tokens, limit), default=())
        if _reusable(best, tokens, limit) > reused:
            state = self._snapshots[best]
            self._blocks = ()
            llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.llama.ctx), True)
            buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            if llama_cpp.llama_state_seq_set_data(self.llama.ctx, buffer, len(state), _SEQUENCE):
                self.llama.input_ids[: len(best)] = best
                reused = _reusable(best, tokens, limit)
                self._snapshots.move_to_end(best)
            else:
                reused = 0
        self._blocks = ()
        self.llama.n_tokens = reused
        for start in range(reused, len(tokens), PROMPT_BLOCK):
            if stop is not None and stop.is_set():
                raise ClientError("stopped before the prompt was read", retryable=False)
            self.llama.eval(tokens[start : start + PROMPT_BLOCK])
        self._blocks = tuple(tokens[: len(tokens) // PROMPT_BLOCK * PROMPT_BLOCK])
        self._snapshot()
        return reused

    def next_logits(self) -> Any:
        """The logits of the token after the evaluated prompt (a copy, over the vocabulary)."""
        import llama_cpp
        import numpy as np

        # Without `logits_all` llama.cpp keeps only the last position's logits: index -1.
        pointer = llama_cpp.llama_get_logits_ith(self.llama.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.llama.n_vocab(),)).copy()

    def _snapshot(self) -> None:
        import llama_cpp

        if not self._blocks or self._cache_bytes <= 0:
            return
        size = llama_cpp.llama_state_seq_get_size(self.llama.ctx, _SEQUENCE)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self.llama.ctx, buffer, size, _SEQUENCE)
        # An earlier turn of the same conversation is covered by this longer snapshot.
        for key in [k for k in self._snapshots if self._blocks[: len(k)] == k]:
            del self._snapshots[key]
        self._snapshots[self._blocks] = ctypes.string_at(buffer, written)
        held = sum(len(state) for state in self._snapshots.values())
        while held > self._cache_bytes and self._snapshots:
            held -= len(self._snapshots.popitem(last=False)[1])

    def complete(
        self, request: CompletionRequest, grammar: Any, stop: threading.Event
    ) -> Completion:
        """Render, check and answer `request`; `stop` being set ends generation early."""
        import llama_cpp

        started = time.perf_counter()
        llama = self.llama
        tools: list[dict[str, Any]] = [plain_json(t) for t in request.tools]
        try:
            rendered = self.formatter(
                messages=template_messages(request.messages), tools=tools or None
            )
        except Exception as error:  # jinja2 and the template's raise_exception() raise anything
            raise ClientError(
                f"the chat template of {request.model} cannot render this conversation: {error}",
                retryable=False,
            ) from None
        check_prompt_carries(rendered.prompt, request.messages, tools)
        tokens = llama.tokenize(rendered.prompt.encode("utf-8"), add_bos=False, special=True)
        room = llama.n_ctx() - len(tokens)
        if room <= 0:
            raise ClientError(
                f"the prompt has {len(tokens)} tokens; the context holds {llama.n_ctx()}",
                retryable=False,
            )
        before = llama_cpp.llama_perf_context(llama.ctx)
        reused = self.evaluate_prompt(tokens, stop)
        first = None
        if request.top_logprobs:
            first = top_logprobs(
                self.next_logits(), request.top_logprobs, lambda t: _token_text(llama, t)
            )
        options = {} if request.temperature is None else {"temperature": request.temperature}
        # The prompt is already in the KV cache, so llama.cpp samples straight away.
        output = llama.create_completion(
            prompt=tokens,
            max_tokens=min(request.max_tokens or DEFAULT_MAX_TOKENS, room),
            seed=request.seed,
            repeat_penalty=REPEAT_PENALTY,
            grammar=grammar,
            stop=rendered.stop,
            stopping_criteria=llama_cpp.StoppingCriteriaList(
                [*(rendered.stopping_criteria or ()), lambda _ids, _logits: stop.is_set()]
            ),
            **options,
        )
        after = llama_cpp.llama_perf_context(llama.ctx)
        text: str = output["choices"][0]["text"]
        content, calls = parse_tool_calls(
            text,
            {str((t.get("function") or {}).get("name")) for t in tools},
            call_id_prefix=f"call_{len(request.messages)}",
        )
        return Completion(
            content=content,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else output["choices"][0]["finish_reason"],
            prompt_tokens=output["usage"]["prompt_tokens"],
            completion_tokens=output["usage"]["completion_tokens"],
            cost_usd=None,
            latency_s=time.perf_counter() - started,
            served_by=self.info.served_by,
            top_logprobs=first,
            extra={
                "raw_text": text,
                "reused_prompt_tokens": reused,
                # llama.cpp's own time in the model, without Python, sampling or grammar:
                # single-token decodes count as generation, longer batches as prompt.
                "llama_prompt_ms": round(after.t_p_eval_ms - before.t_p_eval_ms, 3),
                "llama_generation_ms": round(after.t_eval_ms - before.t_eval_ms, 3),
            },
        )


class EmbeddedRuntime:
    """The local models of one process, and the lock that runs one generation at a time.

    Create one per run, take a client per model from `client()`, and `aclose()` it at the end
    to free the weights. Each client has its own llama.cpp context, so a subject and a judge on
    the same GGUF keep separate prompt caches; the weights are memory-mapped and their pages
    shared, and each context adds its own KV cache (about 180 MB for the 0.5B at n_ctx 8192).
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        prompt_cache_bytes: int = DEFAULT_PROMPT_CACHE_BYTES,
        notify: Notify | None = None,
    ) -> None:
        """`cache_dir` is where assembled weights go (see `weights.weights_cache_dir`).

        `prompt_cache_bytes` bounds each client's KV snapshots (0 keeps only the live context);
        `notify` gets a status line when a model is loaded and while its weights are assembled.
        """
        self.notify = notify
        self.cache_dir = cache_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.prompt_cache_bytes = prompt_cache_bytes
        self.lock = asyncio.Lock()
        self._sessions: list[_Session] = []
        self._grammars: dict[str, Any] = {}

    def client(self, model: str) -> EmbeddedClient:
        """A `ModelClient` for `model` (`embedded:…`, `gguf:…` or `hf:…`) on this runtime."""
        return EmbeddedClient(model, self)

    async def run(self, work: Callable[[threading.Event], _T]) -> _T:
        """Run `work(stop)` in a worker thread once no other work holds the CPU."""
        async with self.lock:
            return await _run_shielded(work, threading.Event())

    async def aclose(self) -> None:
        """Free every loaded model; clients load theirs again on their next call."""
        async with self.lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    def close_session(self, session: _Session) -> None:
        """Free one client's context (blocking; call it through `run`)."""
        session.close()
        if session in self._sessions:
            self._sessions.remove(session)

    def open_session(self, model: str) -> _Session:
        """Resolve the weights of `model` and load them into a new context (blocking)."""
        try:
            import llama_cpp
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise UserError(f"{model} needs llama-cpp-python; run: {OFFLINE_INSTALL}") from None
        if self.notify is not None:
            self.notify(f"loading {model}{INTERIM}")
        path = resolve_gguf(model, self.cache_dir, notify=self.notify)
        started = time.perf_counter()
        llama = self._open(llama_cpp, path, self.n_ctx)
        trained = llama_cpp.llama_model_n_ctx_train(llama.model)
        if 0 < trained < self.n_ctx:
            llama.close()
            llama = self._open(llama_cpp, path, trained)
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            llama.close()
            raise UserError(f"{path} has no chat template (tokenizer.chat_template) to prompt it")
        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=_token_text(llama, llama.token_eos()),
            bos_token=_token_text(llama, llama.token_bos()),
            stop_token_ids=[llama.token_eos()],
        )
        info = LoadedModel(
            path=path,
            served_by=str(llama.metadata.get("general.name") or path.name),
            n_ctx=llama.n_ctx(),
            load_s=time.perf_counter() - started,
        )
        session = _Session(info, llama, formatter, self.prompt_cache_bytes)
        self._sessions.append(session)
        return session

    def grammar(self, schema: Mapping[str, Any] | None) -> Any:
        """The llama.cpp grammar enforcing `schema` (None for none), built once per schema."""
        if schema is None:
            return None
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            text = json.dumps(constrainable_schema(schema))
            self._grammars[key] = LlamaGrammar.from_json_schema(text, verbose=False)
        return self._grammars[key]

    def _open(self, llama_cpp: Any, path: Path, n_ctx: int) -> Any:
        try:
            with _without_extra_buffers_on_amx(llama_cpp):
                return llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_batch=PROMPT_BLOCK,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    verbose=False,
                )
        except ValueError as error:
            raise UserError(f"llama.cpp cannot load {path}: {error}") from None


@contextlib.contextmanager
def _without_extra_buffers_on_amx(llama_cpp: Any) -> Iterator[None]:
    """Load weights without llama.cpp's extra CPU buffer types where the CPU reports AMX.

    A llama.cpp built for such a CPU multiplies through AMX tiles, and a virtual machine that
    reports AMX without granting its tile state kills the process at the first `ldtilecfg`
    (seen on an Intel Xeon VM: a general protection fault in `ggml_backend_amx_mul_mat`). The
    `Llama` constructor takes no `use_extra_bufts`, so its default model parameters are
    replaced while it runs (under the runtime's lock: nothing else loads meanwhile). This also
    turns off weight repacking on those CPUs, which costs speed and never changes a result.
    """
    low = llama_cpp.llama_cpp
    # "AMX_INT8 = 1" when llama.cpp was built with AMX and the CPU reports it.
    if "AMX_INT8 = 1" not in low.llama_print_system_info().decode(errors="replace"):
        yield
        return
    default = low.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        low.llama_model_default_params = default


class EmbeddedClient:
    """The `ModelClient` for one local model, with its own context on the shared runtime."""

    def __init__(self, model: str, runtime: EmbeddedRuntime) -> None:
        self.model = model
        self.runtime = runtime
        self._session: _Session | None = None

    async def load(self) -> LoadedModel:
        """Load the weights now, so that a missing package fails the run with a `UserError`."""
        return (await self.runtime.run(lambda _: self._loaded())).info

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer `request`; one generation runs at a time across the whole runtime."""
        grammar = self.runtime.grammar(request.response_schema)
        return await self.runtime.run(lambda stop: self._complete(request, grammar, stop))

    async def aclose(self) -> None:
        """Free this client's context and weights; a later call loads them again."""
        session, self._session = self._session, None
        if session is not None:
            await self.runtime.run(lambda _: self.runtime.close_session(session))

    def _loaded(self) -> _Session:
        if self._session is None or self._session.closed:
            self._session = self.runtime.open_session(self.model)
        return self._session

    def _complete(
        self, request: CompletionRequest, grammar: Any, stop: threading.Event
    ) -> Completion:
        try:
            session = self._loaded()
        except UserError as error:
            raise ClientError(str(error), retryable=False) from None
        return session.complete(request, grammar, stop)


async def _run_shielded(work: Callable[[threading.Event], _T], stop: threading.Event) -> _T:
    """Run `work(stop)` in a worker thread and wait for the thread even if the caller is
    cancelled.

    A cancelled caller would otherwise release the lock while the thread still generates, and
    the next call would drive the same llama.cpp context from two threads. On cancellation the
    `stop` event ends the generation at its next token (a prompt at its next block), and the
    thread itself is waited for, through every further cancellation. Not its asyncio future: a
    second Ctrl-C ends in `asyncio.run`'s teardown, which cancels every task and future of the
    loop, this one's too, while its thread runs on; leaving then let `aclose` free the context
    under the generating thread (exit 139, a segmentation fault, before this waited it out).
    """
    started, finished = threading.Event(), threading.Event()

    def tracked(event: threading.Event) -> _T:
        started.set()
        try:
            return work(event)
        finally:
            finished.set()

    context = contextvars.copy_context()  # as `asyncio.to_thread` passes it on
    future = asyncio.get_running_loop().run_in_executor(None, context.run, tracked, stop)
    # A stopped call's error is nobody's to read once its caller is cancelled: read it here,
    # or asyncio prints it with a traceback as the process ends.
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        while not finished.is_set() and (started.is_set() or not future.done()):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.01)
        raise


def _reusable(blocks: Sequence[int], tokens: Sequence[int], limit: int) -> int:
    """How many leading `tokens` whole blocks of `blocks` cover, at most `limit`."""
    common = 0
    for cached, token in zip(blocks, tokens, strict=False):
        if cached != token:
            break
        common += 1
    return min(common, limit) // PROMPT_BLOCK * PROMPT_BLOCK


def _token_text(llama: Any, token: int) -> str:
    return "" if token < 0 else llama.detokenize([token], special=True).decode("utf-8", "replace")
