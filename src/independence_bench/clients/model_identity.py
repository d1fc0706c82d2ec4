"""Whether the model that answered a call is the one asked for.

Every reply names the model that produced it (`model` in the chat-completions reply; stored as
`Completion.answered_model`). A router may serve another: OpenRouter's `openrouter/auto`, a
fallback model, or a provider's alias. A reply counts as the model asked for when, variant
suffixes (`:free`, `:nitro`, Ollama's `:latest`) aside, it names the same model, a dated
snapshot of it (`openai/gpt-4o` answered as `openai/gpt-4o-2024-08-06`; `-mini` is another
model), or the same model without or with its author (`llama3` and `library/llama3`).
Anything else is a mismatch, which the viewer shows on the turn and `aib runs` counts: the
transcript is kept, but a reader should know whose words it holds.
"""

from __future__ import annotations

import re

_SNAPSHOT = re.compile(r"-(\d{4}(-?\d{2}){0,2}|\d{2,}(-\d{2,})*|v\d+(\.\d+)*|latest|preview)$")
"""A dated or numbered snapshot suffix (`-2024-08-06`, `-20250929`, `-0613`, `-v2`, `-latest`);
`-mini` or `-pro` name another model."""


def _base(model: str) -> str:
    return model.strip().split(":", 1)[0].lower()


def _same(want: str, got: str) -> bool:
    return got == want or (got.startswith(want) and bool(_SNAPSHOT.fullmatch(got[len(want) :])))


def answered_by_other(asked: str, answered: str | None) -> bool:
    """True when `answered` (the reply's `model`) names another model than `asked`; False
    when it is the same or the reply named none."""
    if answered is None or not answered.strip():
        return False
    want, got = _base(asked), _base(answered)
    if _same(want, got):
        return False
    if "/" not in want or "/" not in got:  # one side names no author: compare the names
        return not _same(want.rsplit("/", 1)[-1], got.rsplit("/", 1)[-1])
    return True
