"""vLLM's OpenAI-compatible server (`vllm serve`), as its documentation describes it.

Flags (`MockConfig.server_flags`), each a way of starting the server:
- `tool_parser`: started with `--enable-auto-tool-choice --tool-call-parser NAME`;
- `reasoning`: started with `--reasoning-parser NAME`, vLLM >= 0.11 (`reasoning` field);
- `reasoning_content`: the same on vLLM <= 0.10 (`reasoning_content` field);
- `think_in_content`: a reasoning model served with no reasoning parser.
Without `tool_parser` the server is what users get from a plain `vllm serve MODEL`.
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

AUTO_TOOL_CHOICE_ERROR = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)
MAX_MODEL_LEN = 32768


def _error(status: int, message: str) -> MockReply:
    # vLLM's `ErrorResponse` (vllm/entrypoints/openai/protocol.py, 0.x): a flat object with
    # `object: "error"`, `message`, `type` (`BadRequestError` for a 400), `param`, `code`.
    return MockReply(
        status,
        {"object": "error", "message": message, "type": "BadRequestError", "param": None,
         "code": status},
    )  # fmt: skip


def refuse(body: Mapping[str, Any], flags: frozenset[str]) -> MockReply | None:
    # docs.vllm.ai, "Tool Calling" > "Automatic Function Calling": `tool_choice: auto` (what a
    # request with `tools` and no `tool_choice` means) needs `--enable-auto-tool-choice` and
    # `--tool-call-parser`; without them the request is answered 400 naming both flags.
    auto = body.get("tool_choice", "auto") == "auto"
    if body.get("tools") and auto and "tool_parser" not in flags:
        return _error(400, AUTO_TOOL_CHOICE_ERROR)
    # docs.vllm.ai, "Structured Outputs" > "Online Serving (OpenAI API)": `response_format`
    # takes `json_object` and `json_schema` (with `json_schema.schema`); both are served.
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") not in (
        "text",
        "json_object",
        "json_schema",
    ):
        return _error(400, f"unknown response_format type {response_format.get('type')!r}")
    return None


def shape(reply: MockReply, body: Mapping[str, Any], flags: frozenset[str]) -> MockReply:
    # Tool Calling page: only the tool parser turns the model's output into `tool_calls`; a
    # request without `tools` gets the model's text, calls and all, as content.
    if not body.get("tools"):
        reply = calls_written(reply)
    # docs.vllm.ai, "Reasoning Outputs": with `--reasoning-parser` the reasoning steps come in
    # their own message field, `reasoning` (called `reasoning_content` up to 0.10, see the
    # page's warning); without a parser a reasoning model's `<think>` block stays in `content`.
    # The same page's note: the Qwen3 series thinks by default and stops when the request
    # passes `enable_thinking=False` in `chat_template_kwargs`.
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, Mapping) and kwargs.get("enable_thinking") is False:
        return reply
    return place_reasoning(reply, flags)


def list_models(listing: JsonObject) -> JsonObject:
    # vLLM's `ModelCard` (vllm/entrypoints/openai/protocol.py): `owned_by: "vllm"`, `root`
    # (the weights' path or name), `parent`, `max_model_len` and a `permission` list.
    data = [
        {"id": entry["id"], "object": "model", "created": 0, "owned_by": "vllm",
         "root": entry["id"], "parent": None, "max_model_len": MAX_MODEL_LEN,
         "permission": [{"id": "modelperm-0", "object": "model_permission"}]}
        for entry in listing["data"]
    ]  # fmt: skip
    return {"object": "list", "data": data}


VLLM = ServerEmulator(
    name="vllm",
    flags=frozenset({"tool_parser", "reasoning", "reasoning_content", "think_in_content"}),
    refuse=refuse,
    shape=shape,
    list_models=list_models,
)
