"""LM Studio's OpenAI-compatible server (`lms server start`, port 1234), as documented.

Flags (`MockConfig.server_flags`):
- `reasoning_content`: a reasoning model with the setting that puts its reasoning apart;
- `think_in_content`: the same model without it (`<think>` stays in the content).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from support.mock_behaviours import MockReply
from support.mock_emulator import (
    JsonObject,
    ServerEmulator,
    calls_written,
    place_reasoning,
)


def _error(status: int, message: str) -> MockReply:
    # LM Studio's errors on /v1 are `{"error": "<text>"}`, a bare string, not OpenAI's object
    # (lmstudio-ai/lmstudio-bug-tracker issues #169, #189, #307 quote such bodies).
    return MockReply(status, {"error": message})


def refuse(body: Mapping[str, Any], flags: frozenset[str]) -> MockReply | None:
    # lmstudio.ai/docs "Structured Output": a schema goes as `response_format: {type:
    # "json_schema", json_schema: {...}}`; `json_object` is refused with HTTP 400 (bug
    # tracker #189: "'response_format.type' must be 'json_schema' or 'text'").
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") not in (
        "json_schema",
        "text",
    ):
        return _error(400, "'response_format.type' must be 'json_schema' or 'text'")
    return None


def shape(reply: MockReply, body: Mapping[str, Any], flags: frozenset[str]) -> MockReply:
    # lmstudio.ai/docs "Tool Use": every model takes `tools`; models without native support
    # get LM Studio's default tool prompt and their calls are still parsed into `tool_calls`,
    # so a request with `tools` gets structured calls and one without gets plain content.
    if not body.get("tools"):
        reply = calls_written(reply)
    # LM Studio 0.3.9 release notes ("reasoning_content" in Chat Completions): with the
    # developer setting on, a reasoning model's thoughts come in `reasoning_content`;
    # otherwise they stay in `content` as a `<think>` block.
    return place_reasoning(reply, flags)


def list_models(listing: JsonObject) -> JsonObject:
    # lmstudio.ai/docs "OpenAI Compatibility API" > GET /v1/models: the downloaded models by
    # key, `object: "model"`, `owned_by: "organization_owner"`, no `created`.
    data = [
        {"id": entry["id"], "object": "model", "owned_by": "organization_owner"}
        for entry in listing["data"]
    ]
    return {"data": data, "object": "list"}


LMSTUDIO = ServerEmulator(
    name="lmstudio",
    flags=frozenset({"reasoning_content", "think_in_content"}),
    refuse=refuse,
    shape=shape,
    list_models=list_models,
)
