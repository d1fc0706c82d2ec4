"""How a reasoning setting reaches a server that is not OpenRouter, in the form each documents.

OpenRouter takes its `reasoning` object (`openrouter.reasoning_field`). Of the local servers:

- **Ollama** — docs.ollama.com, "OpenAI compatibility" > `/v1/chat/completions` > Supported
  request fields: `reasoning_effort` (model-defined names and compatibility aliases; `none`
  turns a thinking model's thinking off). Every effort goes as `reasoning_effort`.
- **vLLM** — docs.vllm.ai, "Reasoning Outputs": the Qwen3 family thinks by default and stops
  when the request passes `enable_thinking=False` in `chat_template_kwargs`. `none` goes as
  `chat_template_kwargs: {"enable_thinking": false}`; vLLM documents no general effort, so
  `minimal` … `xhigh` are refused.
- Any other server (llama.cpp, LM Studio, a proxy of unknown kind, the embedded model): no
  documented field, so every effort is refused.

A refused setting stops the command before anything is sent (`refusal`), with one line: a
label like `model@none` must never name a setting the server was not sent.

Which server an endpoint is comes from its `GET /v1/models` (`server_of`): vLLM's model cards
say `owned_by: "vllm"` (vllm `ModelCard`), Ollama's `owned_by: "library"` (docs.ollama.com,
"OpenAI compatibility" > `/v1/models`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

ServerKind = Literal["ollama", "vllm"]


def server_of(entries: Sequence[Mapping[str, Any]]) -> ServerKind | None:
    """The kind of server whose `GET /v1/models` listed `entries`, or None when not known."""
    owners = {e.get("owned_by") for e in entries if isinstance(e, Mapping)}
    if owners == {"vllm"}:
        return "vllm"
    if owners == {"library"}:
        return "ollama"
    return None


def reasoning_fields(server: ServerKind | None, setting: Any) -> dict[str, Any] | None:
    """The body fields that carry `setting` (a `CompletionRequest.reasoning_effort`) to
    `server`: {} for no setting, None when the server documents no way to send it."""
    if setting is None:
        return {}
    if not isinstance(setting, str):
        return None  # OpenRouter's whole `reasoning` object: OpenRouter's alone
    if server == "ollama":
        return {"reasoning_effort": setting}
    if server == "vllm" and setting == "none":
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return None


def refusal(label: str, endpoint: str, server: ServerKind | None, setting: Any) -> str | None:
    """One line refusing `setting` for `label` on `endpoint`, or None when it can be sent."""
    if reasoning_fields(server, setting) is not None:
        return None
    shown = setting if isinstance(setting, str) else "a reasoning object"
    kind = {"vllm": "vLLM", "ollama": "Ollama"}.get(server or "", "this server")
    takes = (
        " (vLLM takes only none, as chat_template_kwargs enable_thinking: false)"
        if server == "vllm"
        else ""
    )
    return (
        f"{label}: reasoning effort {shown} cannot be sent to {endpoint}: {kind} documents no "
        f"field for it{takes}; drop --reasoning-effort (or set reasoning_effort: off) for "
        "models on this server"
    )
