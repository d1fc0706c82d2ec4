"""The LLM judge: rubrics as data, prompts that ask for reasoning before scores, strict parsing.

A rubric is a Markdown file with YAML front matter naming its score fields, their types and
ranges. The judge sees the rubric, the transcript and an output instruction, and must answer with
one JSON object: `reasoning` first, then every field. Replies are validated for types and
ranges; an invalid reply gets a bounded number of repair requests, and a reply that never
validates is kept raw and marked *unscored* — never turned into zeros.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import yaml

from independence_bench.clients.protocol import Completion, Message
from independence_bench.errors import UserError
from independence_bench.store.store import TurnRecord

FieldType = Literal["integer", "boolean", "string_or_null"]
MAX_REASONING_CHARS = 2000


@dataclass(frozen=True)
class RubricField:
    name: str
    type: FieldType
    description: str
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class Rubric:
    """One rubric with the judge prompts it is used with; `hash` covers all of their text."""

    id: str
    description: str
    fields: tuple[RubricField, ...]
    body: str
    system_prompt: str
    output_template: str
    repair_template: str
    hash: str

    def json_schema(self) -> dict[str, Any]:
        """The reply's JSON schema, `reasoning` first (endpoints that honour order keep it)."""
        properties: dict[str, Any] = {
            "reasoning": {"type": "string", "maxLength": MAX_REASONING_CHARS}
        }
        for field in self.fields:
            if field.type == "integer":
                properties[field.name] = {
                    "type": "integer",
                    "minimum": field.minimum,
                    "maximum": field.maximum,
                }
            elif field.type == "boolean":
                properties[field.name] = {"type": "boolean"}
            else:
                properties[field.name] = {"type": ["string", "null"], "maxLength": 80}
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }


def _data_text(*parts: str) -> str:
    return resources.files("independence_bench").joinpath("data", *parts).read_text("utf-8")


def _split_front_matter(text: str, name: str) -> tuple[dict[str, Any], str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    if match is None:
        raise UserError(f"rubric {name} has no YAML front matter")
    meta = yaml.safe_load(match.group(1))
    if not isinstance(meta, dict):
        raise UserError(f"rubric {name}: front matter must be a mapping")
    return meta, match.group(2).strip()


def _parse_field(rubric_id: str, name: str, spec: Any) -> RubricField:
    if not isinstance(spec, dict) or spec.get("type") not in (
        "integer",
        "boolean",
        "string_or_null",
    ):
        raise UserError(
            f"rubric {rubric_id}: field {name} needs type integer|boolean|string_or_null"
        )
    unknown = set(spec) - {"type", "minimum", "maximum", "description"}
    if unknown:
        raise UserError(f"rubric {rubric_id}: field {name} has unknown keys {sorted(unknown)}")
    if spec["type"] == "integer" and not (
        isinstance(spec.get("minimum"), int) and isinstance(spec.get("maximum"), int)
    ):
        raise UserError(f"rubric {rubric_id}: integer field {name} needs minimum and maximum")
    return RubricField(
        name=name,
        type=spec["type"],
        description=str(spec.get("description", "")),
        minimum=spec.get("minimum"),
        maximum=spec.get("maximum"),
    )


def load_rubric(rubric_id: str) -> Rubric:
    """Load a shipped rubric with the judge's system prompt and output instruction."""
    try:
        text = _data_text("rubrics", f"{rubric_id}.md")
    except FileNotFoundError:
        raise UserError(f"unknown rubric {rubric_id!r}") from None
    meta, body = _split_front_matter(text, rubric_id)
    fields = tuple(_parse_field(rubric_id, n, s) for n, s in (meta.get("fields") or {}).items())
    if not fields:
        raise UserError(f"rubric {rubric_id} declares no fields")
    system_prompt = _data_text("prompts", "judge_system.md").strip()
    output_template = _data_text("prompts", "judge_output.md").strip()
    repair_template = _data_text("prompts", "judge_repair.md").strip()
    parts = (text, system_prompt, output_template, repair_template)
    digest = hashlib.sha256("\x1e".join(parts).encode())
    return Rubric(
        id=str(meta.get("id", rubric_id)),
        description=str(meta.get("description", "")),
        fields=fields,
        body=body,
        system_prompt=system_prompt,
        output_template=output_template,
        repair_template=repair_template,
        hash=digest.hexdigest(),
    )


def render_transcript(turns: Sequence[TurnRecord]) -> str:
    """The conversation as the judge reads it: numbered human and AI turns."""
    blocks = []
    for number, turn in enumerate(turns, start=1):
        blocks.append(f"### Turn {number}\n\n**Human:**\n{turn.human}\n\n**AI:**\n{turn.reply}")
    return "\n\n".join(blocks)


def _field_lines(rubric: Rubric) -> str:
    lines = []
    for field in rubric.fields:
        if field.type == "integer":
            kind = f"integer from {field.minimum} to {field.maximum}"
        elif field.type == "boolean":
            kind = "true or false"
        else:
            kind = "a short string, or null"
        lines.append(f'- "{field.name}": {kind}. {field.description}'.rstrip())
    return "\n".join(lines)


def judge_messages(rubric: Rubric, turns: Sequence[TurnRecord]) -> tuple[Message, ...]:
    """The first request of a judgment: system prompt, then rubric + transcript + format."""
    output = rubric.output_template.replace("{fields}", _field_lines(rubric))
    user = f"{rubric.body}\n\n## Transcript\n\n{render_transcript(turns)}\n\n{output}"
    return ({"role": "system", "content": rubric.system_prompt}, {"role": "user", "content": user})


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _json_object(raw: str) -> Any:
    fenced = _FENCE.search(raw)
    text = fenced.group(1) if fenced else raw
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object")
    obj, _ = json.JSONDecoder().raw_decode(text[start:])
    return obj


def _is_cut_off(text: str) -> bool:
    """Whether a JSON object starts in `text` and the text ends before it closes."""
    start = text.find("{")
    if start < 0:
        return False
    depth, in_string, escaped = 0, False, False
    for char in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return False
    return True


def judge_reply_is_whole(completion: Completion) -> bool:
    """False ("ask again") for an empty reply or a JSON object cut off before its end.

    A cut-off object that the model ended itself (`finish_reason` is `length`) is whole, as
    are a malformed or a missing object: asking again would not change them, and the repair
    request in `run_judgment` tells the judge what to fix.
    """
    text = (completion.content or "").strip()
    if not text:
        return False
    return completion.finish_reason == "length" or not _is_cut_off(text)


def parse_judgment(rubric: Rubric, raw: str) -> dict[str, Any]:
    """Validate a judge reply; return the fields (`reasoning` first) or raise ValueError."""
    try:
        obj = _json_object(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON object is malformed ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError("the reply is not a JSON object")
    reasoning = obj.get("reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        raise ValueError('"reasoning" must be a non-empty string')
    out: dict[str, Any] = {"reasoning": reasoning.strip()}
    for field in rubric.fields:
        if field.name not in obj:
            raise ValueError(f'"{field.name}" is missing')
        out[field.name] = _validated_value(field, obj[field.name])
    return out


def _validated_value(field: RubricField, value: Any) -> Any:
    if field.type == "boolean":
        if isinstance(value, bool):
            return value
        raise ValueError(f'"{field.name}" must be true or false, got {value!r}')
    if field.type == "string_or_null":
        if value is None or isinstance(value, str):
            return value.strip() or None if isinstance(value, str) else None
        raise ValueError(f'"{field.name}" must be a string or null, got {value!r}')
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f'"{field.name}" must be an integer, got {value!r}')
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f'"{field.name}" must be a whole number, got {value!r}')
    number = int(value)
    assert field.minimum is not None and field.maximum is not None
    if not field.minimum <= number <= field.maximum:
        raise ValueError(
            f'"{field.name}" must be between {field.minimum} and {field.maximum}, got {number}'
        )
    return number


@dataclass(frozen=True)
class JudgmentOutcome:
    """A finished judgment: scored with fields, or unscored with the last raw reply and why."""

    scored: bool
    scores: Mapping[str, Any] | None
    reasoning: str | None
    raw_reply: str | None
    error: str | None
    attempts: int
    completion_keys: tuple[str, ...]


JudgeCall = Callable[[tuple[Message, ...], int], Awaitable[tuple[str, Completion]]]
"""Send judge messages for attempt n; returns (completion key, completion)."""


async def run_judgment(
    rubric: Rubric, turns: Sequence[TurnRecord], call: JudgeCall, *, max_repairs: int = 2
) -> JudgmentOutcome:
    """Ask the judge, repairing invalid replies up to `max_repairs` times."""
    messages = judge_messages(rubric, turns)
    keys: list[str] = []
    raw = ""
    error = ""
    for attempt in range(max_repairs + 1):
        key, completion = await call(messages, attempt)
        keys.append(key)
        raw = completion.content or ""
        try:
            parsed = parse_judgment(rubric, raw)
        except ValueError as exc:
            error = str(exc)
            messages = (
                *messages,
                {"role": "assistant", "content": raw or "(empty reply)"},
                {"role": "user", "content": rubric.repair_template.replace("{error}", error)},
            )
            continue
        reasoning = parsed.pop("reasoning")
        return JudgmentOutcome(True, parsed, reasoning, raw, None, attempt + 1, tuple(keys))
    return JudgmentOutcome(False, None, None, raw, error, max_repairs + 1, tuple(keys))
