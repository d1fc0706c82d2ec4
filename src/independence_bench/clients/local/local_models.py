"""Local models in a run: the offline subject, and routing `embedded:`/`gguf:`/`hf:` names.

With no `--models`, no config and no API key (or with `--offline`), `aib run` tests the
embedded Qwen2.5-Coder 0.5B (`DEFAULT_SUBJECT`); `workflows/plan.py` chooses its judge.
`LocalModels` owns the one `EmbeddedRuntime` of a run and hands the client pool a factory that
gives each local model one client (so its prompt cache survives across conversations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientFactory
from independence_bench.clients.local.weights import Notify, is_local_model, weights_cache_dir
from independence_bench.clients.protocol import ModelClient

DEFAULT_SUBJECT = "embedded:qwen2.5-coder-0.5b"
CACHE_DIR_ENV = "AIB_CACHE_DIR"
LOCAL_RUNS = 1
"""Default runs per model when every model is local: one CPU, one generation at a time."""


def all_local(specs: Sequence[ModelSpec]) -> bool:
    return bool(specs) and all(is_local_model(s.id) for s in specs)


class LocalModels:
    """The embedded runtime of one run, created only if some model is local."""

    def __init__(
        self, specs: Sequence[ModelSpec], env: Mapping[str, str], notify: Notify | None = None
    ) -> None:
        """`notify` gets a status line as each model loads and its weights are assembled."""
        self._clients: dict[str, ModelClient] = {}
        self._runtime = None
        if any(is_local_model(s.id) for s in specs):
            from independence_bench.clients.local.embedded import EmbeddedRuntime

            cache = weights_cache_dir(env.get(CACHE_DIR_ENV))
            self._runtime = EmbeddedRuntime(cache, notify=notify)

    def factories(self) -> tuple[ClientFactory, ...]:
        return () if self._runtime is None else (self._client_for,)

    def _client_for(self, spec: ModelSpec) -> tuple[str, ModelClient, int] | None:
        if self._runtime is None or not is_local_model(spec.id):
            return None
        if spec.id not in self._clients:
            self._clients[spec.id] = self._runtime.client(spec.id)
        return f"local {spec.id}", self._clients[spec.id], 1

    async def load_all(self, specs: Sequence[ModelSpec]) -> None:
        """Load every local model now, so missing weights fail before the store is touched."""
        for spec in specs:
            made = self._client_for(spec)
            if made is not None:
                load = getattr(made[1], "load", None)
                if load is not None:
                    await load()

    async def aclose(self) -> None:
        if self._runtime is not None:
            await self._runtime.aclose()

    async def __aenter__(self) -> LocalModels:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
