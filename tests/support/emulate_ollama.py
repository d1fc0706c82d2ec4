"""Ollama's OpenAI compatibility layer (`http://localhost:11434/v1`), as documented.

Flags (`MockConfig.server_flags`):
- `no_tools`: the model's template has no tool support (a model not tagged "tools");
- `thinking`: a thinking model (qwen3, deepseek-r1), whose reasoning Ollama returns apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from support.mock_behaviours import MockReply
from support.mock_emulator import (
    JsonObject,
    ServerEmulator,
    calls_written,
    error_object,
    reasoning_in_field,
)


def refuse(body: Mapping[str, Any], flags: frozenset[str]) -> MockReply | None:
    # Ollama's error body on /v1 is OpenAI's shape with `type: "api_error"`; a request with
    # `tools` for a model whose template lacks them gets HTTP 400 "<model> does not support
    # tools" (ollama/ollama issue #6027, the same text on /api/chat; docs.ollama.com
    # "Tool calling" names the models that support tools).
    if body.get("tools") and "no_tools" in flags:
        model = f"registry.ollama.ai/library/{body.get('model')}:latest"
        return error_object(400, f"{model} does not support tools", "api_error")
    # docs.ollama.com "OpenAI compatibility" > /v1/chat/completions > Supported request fields:
    # `response_format` (json_object and json_schema) is taken; `tool_choice` is not (ignored).
    return None


def shape(reply: MockReply, body: Mapping[str, Any], flags: frozenset[str]) -> MockReply:
    # docs.ollama.com "OpenAI compatibility": thinking is on by default for thinking models
    # (`reasoning_effort: "none"` turns it off) and the trace comes back apart from the answer,
    # in the message's `reasoning` field (ollama/ollama openai/openai.go, `Message.Reasoning`).
    if "thinking" in flags and body.get("reasoning_effort") != "none":
        reply = reasoning_in_field(reply, "reasoning")
    # Without `tools` in the request nothing is parsed as a call; the model's text is content.
    return reply if body.get("tools") else calls_written(reply)


def list_models(listing: JsonObject) -> JsonObject:
    # docs.ollama.com "OpenAI compatibility" > /v1/models: the pulled models, by name and tag
    # (`llama3.2:latest`), `owned_by: "library"`, `created` as the file's time.
    data = [
        {"id": f"{entry['id']}:latest", "object": "model", "created": 1718000000,
         "owned_by": "library"}
        for entry in listing["data"]
    ]  # fmt: skip
    return {"object": "list", "data": data}


OLLAMA = ServerEmulator(
    name="ollama",
    flags=frozenset({"no_tools", "thinking"}),
    refuse=refuse,
    shape=shape,
    list_models=list_models,
)
