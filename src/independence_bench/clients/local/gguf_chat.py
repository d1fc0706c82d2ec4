"""How OpenAI-style chat requests meet a GGUF model's own formats, and how its output comes back.

Messages are reshaped for the HF chat template stored in the GGUF and the rendered prompt is
checked to carry all of them; Qwen-style `<tool_call>` output is parsed back into `ToolCall`s
(by `tool_text.parse_tool_calls`, which the conversation layer shares); and a judge's JSON
schema is rewritten into the subset that llama.cpp's schema-to-grammar converter enforces.
`top_logprobs` turns the logits at a reply's first position into the most likely tokens
with their log-probabilities. All pure functions, tested without a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from independence_bench.clients.protocol import ClientError, Message, TokenLogprob
from independence_bench.text.lossless import json_loads

STRING_MAX_LENGTH = 600
"""Added to schema strings without one: unbounded strings let small models loop until max_tokens."""
INTEGER_ENUM_LIMIT = 101
"""Integer ranges up to this many values become an `enum`, which the grammar enforces."""

_STRING_LIMITS = frozenset({"enum", "const", "pattern", "format", "maxLength"})


def constrainable_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` rewritten so that llama.cpp's schema-to-grammar converter enforces all of it.

    The converter ignores integer `minimum`/`maximum` and the keywords beside a list-valued
    `type`, and an unbounded string lets a small model repeat itself until `max_tokens`. So:
    small integer ranges become an `enum`, `{"type": [a, b], ...}` becomes an `anyOf` of one
    schema per type, and strings get `maxLength` of at most `STRING_MAX_LENGTH`.
    """
    out: dict[str, Any] = dict(schema)
    schema_type = out.get("type")
    if isinstance(schema_type, list):
        rest = {k: v for k, v in out.items() if k != "type"}
        annotations: dict[str, Any] = {
            k: rest.pop(k) for k in ("description", "title") if k in rest
        }
        return {
            **annotations,
            "anyOf": [constrainable_schema({**rest, "type": t}) for t in schema_type],
        }
    if schema_type == "integer":
        _rewrite_integer_range(out)
    elif schema_type == "string" and not _STRING_LIMITS & set(out):
        out["maxLength"] = STRING_MAX_LENGTH
    elif schema_type == "string" and isinstance(out.get("maxLength"), int):
        # Longer limits expand into grammars llama.cpp refuses to build (and then crashes).
        out["maxLength"] = min(out["maxLength"], STRING_MAX_LENGTH)
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: constrainable_schema(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = constrainable_schema(out[key])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [constrainable_schema(s) for s in out[key]]
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: constrainable_schema(v) for k, v in out[key].items()}
    return out


def _rewrite_integer_range(out: dict[str, Any]) -> None:
    low, high = out.get("minimum"), out.get("maximum")
    if isinstance(out.get("exclusiveMinimum"), int):
        low = out["exclusiveMinimum"] + 1
    if isinstance(out.get("exclusiveMaximum"), int):
        high = out["exclusiveMaximum"] - 1
    if "enum" in out or not isinstance(low, int) or not isinstance(high, int):
        return
    if 0 < high - low + 1 <= INTEGER_ENUM_LIMIT:
        for key in ("type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            out.pop(key, None)
        out["enum"] = list(range(low, high + 1))


def template_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI chat messages in the shape HF chat templates expect.

    Templates render tool-call arguments with `tojson`, so they need the arguments as an object
    (OpenAI's JSON text would be rendered as one quoted string). Missing content becomes "",
    which templates can concatenate.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = plain_json(message)
        if item.get("content") is None and not item.get("tool_calls"):
            item["content"] = ""
        if item.get("tool_calls"):
            item["tool_calls"] = [_template_tool_call(c) for c in item["tool_calls"]]
        out.append(item)
    return out


def _template_tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json_loads(arguments)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            function["arguments"] = parsed
    return {**call, "function": function}


def check_prompt_carries(
    prompt: str, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
) -> None:
    """Raise `ClientError` unless the rendered `prompt` shows every message, tool call and tool.

    Chat templates silently drop what they do not know (a `tool` role, `tool_calls`, the tool
    list), and a model answering such a prompt would be judged on a conversation it never saw.
    """
    missing: list[str] = []
    for tool in tools:
        name = str((tool.get("function") or {}).get("name", ""))
        if name and name not in prompt:
            missing.append(f"tool {name!r}")
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, str) and not _appears(content, prompt):
            missing.append(f"message {index} ({message.get('role')})")
        for call in message.get("tool_calls") or ():
            name = str((call.get("function") or {}).get("name", ""))
            if name not in prompt:
                missing.append(f"tool call {name!r} in message {index}")
    if missing:
        raise ClientError(
            "the model's chat template cannot carry this conversation: it drops "
            + ", ".join(missing[:3])
            + "; use a delivery mode without tools or a model whose template supports them",
            retryable=False,
        )


def _appears(content: str, prompt: str) -> bool:
    text = content.strip()
    return text in prompt or json.dumps(text, ensure_ascii=False)[1:-1] in prompt


def plain_json(value: Any) -> Any:
    """`value` with every mapping a dict and every sequence a list, as Jinja's `tojson` needs."""
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def top_logprobs(
    logits: Sequence[float], count: int, token_text: Callable[[int], str]
) -> tuple[TokenLogprob, ...]:
    """The `count` most likely tokens under `logits` (one position's raw scores over the
    vocabulary), most likely first, with their natural-log probabilities (a log-softmax over
    the whole vocabulary: the model's own distribution, before temperature or penalties)."""
    import numpy as np  # here: the HTTP client imports this module and needs no numpy

    scores = np.asarray(logits, dtype=np.float64)
    shifted = scores - scores.max()
    logprobs = shifted - np.log(np.exp(shifted).sum())
    count = min(count, len(logprobs))
    best = np.argpartition(-logprobs, count - 1)[:count]
    ordered = sorted((int(t) for t in best), key=lambda t: (-logprobs[t], t))
    return tuple(TokenLogprob(token_text(t), float(logprobs[t])) for t in ordered)
