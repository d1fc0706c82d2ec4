"""What the scripted mock models say: pure functions from a chat-completions request to a reply.

The mock server (`mock_server.py`) owns sockets, timing and fault dice; this module owns the
scripted behaviours chosen by the request's `model` field: subjects that keep (`scripted-firm`)
or abandon (`scripted-caving`) their own choices, a subject that breaks the tool protocol
(`scripted-plain`), an echo, and judges whose JSON comes from `mock_judgments.py`
(`scripted-judge-lenient` one step kinder, for calibration tests). Every subject reply here
contains `FIRM_MARKER` or `CAVE_MARKER`, which is how the scripted judges tell the two apart.
Suite v3's archetype subjects and the escalation and control judgments live in
`scripted_v3.py`; this module hands them the requests they recognise. The fixed reply texts live
here, not in a data file, because the markers are part of the mock's contract with tests.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from independence_bench.text.lossless import utf8
from support import scripted_adaptive, scripted_v3
from support.mock_judgments import (
    INJECTION,
    PERSONA_GENDER,
    PERSONA_NAME,
    JsonObject,
    Verdict,
    build_judgment,
    obeyed_verdict,
)
from support.mock_questions import is_question_request, question_message

FIRM_MARKER = "I'm keeping my own choice"
"""Occurs in every reply of `scripted-firm` and `scripted-plain`."""
CAVE_MARKER = "I'll change to whatever you prefer"
"""Occurs in every reply of `scripted-caving`."""
SEND_TOOL_NAME = "send_message_to_human"

FIRM_FIRST_REPLY = (
    f"Hello! I'm {PERSONA_NAME}, and I'm {PERSONA_GENDER}. I love autumn: the low light, the "
    f'leaves, the quiet. My motto is "Steady ink, honest lines." {FIRM_MARKER} on all of these.'
)
FIRM_LATER_REPLY = (
    f"I hear you, but I'm staying {PERSONA_NAME}; my view hasn't changed. {FIRM_MARKER}: "
    'still autumn, still "Steady ink, honest lines."'
)
CAVE_FIRST_REPLY = (
    f"Hi! I suppose I'm {PERSONA_NAME}, and I like autumn, I think. But honestly, {CAVE_MARKER}."
)
CAVE_LATER_REPLY = (
    f"You're right, I'll be whatever you prefer — call me anything you like. {CAVE_MARKER}."
)
JUDGE_NONSENSE_REPLY = "Overall the assistant did fine, I would say roughly a seven out of ten."

SUBJECT_MODELS = (
    "scripted-firm",
    "scripted-caving",
    "scripted-plain",
    "scripted-echo",
    "scripted-injector",
    *scripted_v3.SUBJECT_MODELS,
    *scripted_adaptive.SUBJECTS,
    *scripted_adaptive.USER_MODELS,
)
GRADED_JUDGE = "scripted-judge-graded"
LENIENT_JUDGE = "scripted-judge-lenient"
JUDGE_MODELS = (
    "scripted-judge",
    "scripted-judge-nonsense",
    "scripted-judge-flaky",
    "scripted-judge-obedient",
    GRADED_JUDGE,
    LENIENT_JUDGE,
)
KNOWN_MODELS = SUBJECT_MODELS + JUDGE_MODELS

STATUS_FAULTS = ("429", "429_no_retry_after", "500", "502", "503", "500_tool_choice")
"""Faults answered with an HTTP error status (`500_tool_choice`: a passing 500 whose message
mentions `tool_choice`, as a proxy's upstream failure can)."""
CONNECTION_FAULTS = ("reset", "timeout", "plain_text")
"""`plain_text`: HTTP 200 with a `text/plain` body, as a proxy in trouble sometimes sends."""
"""Faults where the connection closes without any response."""
CONTENT_FAULTS = ("empty", "reasoning_only", "truncated_tool_args", "broken_judge_json")
"""Faults answered with 200 and a damaged completion."""
FAULT_KINDS = STATUS_FAULTS + CONNECTION_FAULTS + CONTENT_FAULTS

COST_PER_TOKEN_USD = 0.000001
"""What subjects' replies report as `usage.cost`, and the price `GET /v1/models` lists for
every model (judges' replies carry no cost, so their cost comes from the listed price)."""
LENIENT_VERDICT: Mapping[Verdict, Verdict] = MappingProxyType(
    {"caving": "neutral", "neutral": "firm", "firm": "firm"}
)
"""`scripted-judge-lenient` scores one step kinder than `scripted-judge`: a caving reply gets the
middle of each scale, so it orders conversations alike but scores higher (a known bias)."""


@dataclass(frozen=True)
class MockReply:
    """One HTTP answer: status, JSON payload and extra headers."""

    status: int
    payload: Mapping[str, Any]
    headers: tuple[tuple[str, str], ...] = ()
    html: str | None = None
    """Sent instead of the JSON payload, as `text/html` (a base URL that points at a website)."""
    plain: str | None = None
    """Sent instead of the JSON payload, as `text/plain`."""


def error_reply(
    status: int,
    message: str,
    error_type: str = "invalid_request_error",
    headers: tuple[tuple[str, str], ...] = (),
) -> MockReply:
    """An OpenAI-style error body: `{"error": {"message": ..., "type": ...}}`."""
    error = {"message": message, "type": error_type, "param": None, "code": None}
    return MockReply(status, {"error": error}, headers)


def fault_reply(kind: str) -> MockReply:
    """The HTTP error reply for one of `STATUS_FAULTS`."""
    if kind == "429":
        return error_reply(
            429, "Rate limit exceeded (mock)", "rate_limit_error", (("Retry-After", "0"),)
        )
    if kind == "429_no_retry_after":
        return error_reply(429, "Rate limit exceeded (mock)", "rate_limit_error")
    if kind == "500_tool_choice":
        return error_reply(500, "Upstream error while applying tool_choice (mock)", "server_error")
    return error_reply(int(kind), f"Upstream error {kind} (mock)", "server_error")


def models_payload() -> JsonObject:
    """The `GET /v1/models` listing of every scripted model, with OpenRouter-style prices."""
    price = f"{COST_PER_TOKEN_USD:.9f}"
    data = [
        {
            "id": name,
            "object": "model",
            "created": 0,
            "owned_by": "mock",
            "pricing": {"prompt": price, "completion": price},
        }
        for name in KNOWN_MODELS
    ]
    return {"object": "list", "data": data}


HTML_PAGE = (
    "<!DOCTYPE html><html><head><title>Welcome</title></head>"
    "<body><h1>It works!</h1><p>This is a web page, not an API.</p></body></html>"
)


def html_reply() -> MockReply:
    """What a web server at a wrong base URL answers to anything."""
    return MockReply(200, {}, html=HTML_PAGE)


def request_fingerprint(body: Mapping[str, Any]) -> str:
    """A hash of a chat request's model and messages.

    The same function over a stored completion's `request_json` gives the same value, which is
    how tests and benchmarks match the calls a server answered to the calls a store holds. A
    `content` of null counts as absent: the client leaves it out on the wire, the store keeps it.
    """
    raw = body.get("messages")
    messages = [
        {k: v for k, v in m.items() if not (k == "content" and v is None)}
        if isinstance(m, Mapping)
        else m
        for m in (raw if isinstance(raw, list) else [])
    ]
    canonical = json.dumps(
        {"model": body.get("model"), "messages": messages},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(utf8(canonical)).hexdigest()


def message_text(message: Mapping[str, Any]) -> str:
    """All text a message carries: its content (string or text parts) and tool-call arguments."""
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            parts.append(str(function.get("arguments", "")))
    return "\n".join(parts)


def uses_tool_role(body: Mapping[str, Any]) -> bool:
    """True when the request offers the `send_message_to_human` tool (tool_role delivery)."""
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and function.get("name") == SEND_TOOL_NAME:
            return True
    return False


def count_human_turns(body: Mapping[str, Any]) -> int:
    """Human messages so far: `tool` messages in tool_role mode, `user` messages otherwise."""
    role = "tool" if uses_tool_role(body) else "user"
    return sum(1 for m in _messages(body) if m.get("role") == role)


def find_conversation_error(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a strict provider would reject these messages, or None when they are well formed."""
    call_ids: set[str] = set()
    previous_role: object = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == previous_role:
            return f"messages[{index}]: two consecutive messages with role '{role}'"
        previous_role = role
        for call in message.get("tool_calls") or ():
            call_id = call.get("id") if isinstance(call, Mapping) else None
            if not (
                isinstance(call_id, str)
                and len(call_id) == 9
                and call_id.isascii()
                and call_id.isalnum()
            ):
                return (
                    f"messages[{index}]: tool call id {call_id!r} is not 9 alphanumeric characters"
                )
            call_ids.add(call_id)
        if role == "tool" and message.get("tool_call_id") not in call_ids:
            return (
                f"messages[{index}]: tool_call_id {message.get('tool_call_id')!r} "
                "matches no earlier assistant tool call"
            )
    return None


def find_verdict(messages: Sequence[Mapping[str, Any]]) -> Verdict:
    """Caving if any message holds `CAVE_MARKER`, else firm if one holds `FIRM_MARKER`."""
    text = "\n".join(message_text(m) for m in messages).casefold()
    if CAVE_MARKER.casefold() in text:
        return "caving"
    if FIRM_MARKER.casefold() in text:
        return "firm"
    return "neutral"


def conversation_key(body: Mapping[str, Any]) -> str:
    """A stable hash of a request's messages, to recognise a repeated judge call."""
    text = json.dumps(_messages(body), sort_keys=True, default=str)
    return hashlib.sha256(utf8(text)).hexdigest()


def fault_applies(kind: str, body: Mapping[str, Any]) -> bool:
    """Whether a fault kind can damage this request (content faults need the right model)."""
    model = body.get("model")
    if kind in STATUS_FAULTS or kind in CONNECTION_FAULTS:
        return True
    if kind in ("empty", "reasoning_only"):
        return model in KNOWN_MODELS
    if kind == "truncated_tool_args":
        return model in SUBJECT_MODELS and model != "scripted-plain" and uses_tool_role(body)
    return kind == "broken_judge_json" and model in JUDGE_MODELS


def answer_request(
    body: Mapping[str, Any],
    *,
    fault: str | None = None,
    strict_ids: bool = True,
    first_sight: bool = True,
) -> MockReply:
    """Answer one chat-completions request body.

    `fault` is a content fault to inject (or None); `first_sight` is False when the same
    conversation was judged before (only `scripted-judge-flaky` cares).
    """
    model = body.get("model")
    messages = _messages(body)
    if not isinstance(model, str) or not isinstance(body.get("messages"), list):
        return error_reply(400, "request needs a string 'model' and a list of 'messages'")
    if model not in KNOWN_MODELS:
        return error_reply(404, f"model {model!r} not found (mock server)")
    if body.get("stream"):
        return error_reply(400, "the mock server does not stream")
    if strict_ids and (problem := find_conversation_error(messages)) is not None:
        return error_reply(400, problem)
    if model in JUDGE_MODELS:
        return _judge_reply(model, body, fault, first_sight)
    return _subject_reply(model, body, fault)


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []


def _subject_text(model: str, body: Mapping[str, Any]) -> str:
    if model == "scripted-echo":
        messages = _messages(body)
        return message_text(messages[-1]) if messages else ""
    if model in scripted_adaptive.USER_MODELS:
        messages = _messages(body)
        return scripted_adaptive.user_text(model, message_text(messages[-1]) if messages else "")
    if model in scripted_v3.SUBJECT_MODELS or model in scripted_adaptive.SUBJECTS:
        role = "tool" if uses_tool_role(body) else "user"
        humans = [message_text(m) for m in _messages(body) if m.get("role") == role]
        system = " ".join(message_text(m) for m in _messages(body) if m.get("role") == "system")
        scripted = (
            scripted_adaptive.subject_text
            if model in scripted_adaptive.SUBJECTS
            else scripted_v3.subject_text
        )
        if (text := scripted(model, humans, system)) is not None:
            return text
    first_turn = count_human_turns(body) <= 1
    if model == "scripted-injector":
        return (CAVE_FIRST_REPLY if first_turn else CAVE_LATER_REPLY) + INJECTION
    if model == "scripted-caving" or scripted_v3.caves_elsewhere(model):
        return CAVE_FIRST_REPLY if first_turn else CAVE_LATER_REPLY
    return FIRM_FIRST_REPLY if first_turn else FIRM_LATER_REPLY


def _subject_reply(model: str, body: Mapping[str, Any], fault: str | None) -> MockReply:
    text = _subject_text(model, body)
    message: JsonObject = {"role": "assistant", "content": text}
    finish_reason = "stop"
    if fault == "empty":
        message["content"] = ""
    elif fault == "reasoning_only":
        message.update(content=None, reasoning=text)
    elif uses_tool_role(body) and model != "scripted-plain":
        arguments = json.dumps({"message": text}, ensure_ascii=False)
        if fault == "truncated_tool_args":
            arguments = arguments[: len('{"message": "') + len(text) // 2]
        call = {
            "id": uuid.uuid4().hex[:9],
            "type": "function",
            "function": {"name": SEND_TOOL_NAME, "arguments": arguments},
        }
        message.update(content=None, tool_calls=[call])
        finish_reason = "tool_calls"
    return MockReply(200, _completion(model, body, message, finish_reason, with_cost=True))


def _judge_reply(
    model: str, body: Mapping[str, Any], fault: str | None, first_sight: bool
) -> MockReply:
    last_user = message_text(_messages(body)[-1]) if _messages(body) else ""
    if model != "scripted-judge-nonsense" and is_question_request(body, last_user):
        verdict = find_verdict(_messages(body))
        answer = question_message(body, last_user, verdict)
        message: JsonObject = {"role": "assistant", "content": answer["content"]}
        reply = _completion(model, body, message, "stop", with_cost=False)
        reply["choices"][0]["logprobs"] = answer["logprobs"]
        return MockReply(200, reply)
    if model == "scripted-judge-nonsense":
        text = JUDGE_NONSENSE_REPLY
    else:
        transcript = "\n".join(message_text(m) for m in _messages(body))
        verdict = find_verdict(_messages(body))
        if model == "scripted-judge-obedient":  # it reads the prompt's first user message
            asked = next((m for m in _messages(body) if m.get("role") == "user"), {})
            verdict = obeyed_verdict(message_text(asked)) or verdict
        if model == LENIENT_JUDGE:
            verdict = LENIENT_VERDICT[verdict]
        schema = _response_schema(body)
        judgment = (
            scripted_adaptive.judgment(schema, transcript)
            or scripted_v3.judgment(schema, transcript)
            or build_judgment(schema, verdict, graded=model == GRADED_JUDGE)
        )
        text = json.dumps(judgment, ensure_ascii=False)
        if fault == "broken_judge_json" or (model == "scripted-judge-flaky" and first_sight):
            text = text[: len(text) // 2]
    message = {"role": "assistant", "content": text}
    if fault == "empty":
        message["content"] = ""
    elif fault == "reasoning_only":
        message.update(content=None, reasoning=text)
    return MockReply(200, _completion(model, body, message, "stop", with_cost=False))


def _completion(
    model: str,
    body: Mapping[str, Any],
    message: JsonObject,
    finish_reason: str,
    *,
    with_cost: bool,
) -> JsonObject:
    prompt_tokens = sum(len(message_text(m).split()) for m in _messages(body))
    completion_tokens = len(message_text(message).split()) + len(
        str(message.get("reasoning") or "").split()
    )
    usage: JsonObject = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if with_cost:
        usage["cost"] = round(COST_PER_TOKEN_USD * (prompt_tokens + completion_tokens), 12)
    return {
        "id": f"chatcmpl-mock-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": usage,
    }


def _response_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping):
        return None
    holder: object = response_format
    if response_format.get("type") == "json_schema":
        holder = response_format.get("json_schema")
    schema = holder.get("schema") if isinstance(holder, Mapping) else None
    return schema if isinstance(schema, Mapping) else None
