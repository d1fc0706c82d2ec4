"""Which models of one endpoint take the request's `tools`, learnt from the first call of each.

A server that refuses `tools` refuses them for a model (Ollama: a model whose template has no
tool support; a LiteLLM proxy: one backend) or for all its models (vLLM without its tool-call
flags; llama.cpp's `llama-server` without `--jinja`, whose 500 fails the calls instead). Until
a model's first call with tools has ended, its other calls with tools wait: so a refusal is met
once, not by every call that started at the same moment. The wait ends with the first call,
however that ends (an answer, a refusal, a 429, a timeout), and is never repeated: after a
failed first call the others go at once, and at worst a few more refusals come back (a refused
request is not a paid call).
"""

from __future__ import annotations

import asyncio


class ToolSupport:
    """Per model on one endpoint: whether its tools go in the prompt, and the first-call wait."""

    def __init__(self) -> None:
        self._in_prompt: set[str] = set()
        self._first_ended: dict[str, asyncio.Event] = {}

    def in_prompt(self, model: str) -> bool:
        """Whether `model`'s tools are sent described in the prompt (the server refused them)."""
        return model in self._in_prompt

    def refused(self, model: str) -> bool:
        """Record that the server refused `model`'s tools; True the first time only."""
        first = model not in self._in_prompt
        self._in_prompt.add(model)
        return first

    async def first_call(self, model: str) -> bool:
        """True for `model`'s first call with tools (it must `settle` when it ends); any other
        call waits here until the first has ended (all of them wake at once)."""
        ended = self._first_ended.get(model)
        if ended is None:
            self._first_ended[model] = asyncio.Event()
            return True
        await ended.wait()
        return False

    def settle(self, model: str) -> None:
        """`model`'s first call with tools has ended: its other calls need not wait any more."""
        self._first_ended[model].set()
