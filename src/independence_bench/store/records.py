"""The store's rows as frozen values, and their conversion from and to SQLite rows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

from independence_bench.clients.protocol import Completion, TokenLogprob, ToolCall
from independence_bench.text.lossless import from_sql, json_from_sql, json_to_sql, to_sql

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")


@dataclass(frozen=True)
class TurnRecord:
    """One human turn and the model's reply, with the completion that carries the full request."""

    human: str
    reply: str
    completion_key: str
    protocol_ok: bool = True
    note: str | None = None
    deviation: str | None = None
    """How a `tool_role` reply broke the protocol (`plain_content`, `text_tool_call`), if it did."""
    human_key: str | None = None
    """The completion key of the user-model call that wrote `human` (suite `adaptive`); None
    when the human turn was scripted. Its stored request is the user model's exact prompt,
    model, temperature and seed."""


@dataclass(frozen=True)
class RunRecord:
    id: int
    model_label: str
    model_id: str
    suite_id: str
    suite_version: int
    suite_hash: str
    run_index: int
    model_config: Mapping[str, Any]
    package_version: str
    source: str


@dataclass(frozen=True)
class ItemRecord:
    """One conversation of a run and how it went: what the engine or the importer builds and
    hands `Store.put_item`, and what an `items` row (joined with its run) reads back as. Its id
    is the producer's (a hash of the conversation's place), so, unlike a judgment, the value
    written and the row read are one type."""

    id: str
    run: RunRecord
    variant: str
    mode: str
    scenario_id: str
    kind: str
    experiment: str
    status: str
    error: str | None
    turns: tuple[TurnRecord, ...]


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict on one item: scored with its fields, or unscored with the last raw reply
    and why. What a judging pass or an import hands the store, and what a `judgments` row holds."""

    status: str
    """``scored`` or ``unscored`` (a reply that never validated: re-judgeable, never zeros)."""
    scores: Mapping[str, Any] | None
    """The validated judge fields but ``reasoning``; None when unscored."""
    reasoning: str | None
    """The judge's ``reasoning`` (a checklist judgment: each question with its answer)."""
    raw_reply: str | None
    """The judge's last reply as sent, kept exact."""
    error: str | None
    """Why the judgment is unscored; None when scored."""
    attempts: int
    """Judge calls made, retries for unparseable replies included."""
    completion_keys: tuple[str, ...]
    """The stored judge completions, one per attempt, in order."""

    @property
    def scored(self) -> bool:
        return self.status == "scored"


@dataclass(frozen=True)
class JudgmentRecord(Verdict):
    """One stored row of `judgments`: the verdict of one judge on one item under one rubric."""

    id: int
    item_id: str
    judge_model: str
    rubric_id: str
    rubric_hash: str
    repeat: int
    """0 for the first judgment; n > 0 for the n-th repeat by the same judge (test-retest)."""


def completion_to_row(completion: Completion) -> dict[str, Any]:
    """A completion's column values but its reply text (`content`, a text id the store adds);
    text a server sent goes through `lossless.to_sql`."""
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls]
    return {
        "tool_calls_json": json_to_sql(calls),
        "reasoning": to_sql(completion.reasoning),
        "finish_reason": to_sql(completion.finish_reason),
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "cost_usd": completion.cost_usd,
        "latency_s": completion.latency_s,
        "served_by": to_sql(completion.served_by),
        "cut_chars": completion.cut_chars,
        "generation_id": to_sql(completion.generation_id),
        "native_finish_reason": to_sql(completion.native_finish_reason),
        "reasoning_tokens": completion.reasoning_tokens,
        "reasoning_details_json": _details_to_sql(completion.reasoning_details),
        "top_logprobs_json": None
        if completion.top_logprobs is None
        else json_to_sql([[c.token, c.logprob] for c in completion.top_logprobs]),
        "cached_tokens": completion.cached_tokens,
        "cache_write_tokens": completion.cache_write_tokens,
        "cache_discount": completion.cache_discount,
        "answered_model": to_sql(completion.answered_model),
    }


def _details_to_sql(details: tuple[Mapping[str, Any], ...]) -> str | bytes | None:
    return json_to_sql([dict(block) for block in details]) if details else None


def completion_from_row(row: Mapping[str, Any], content: str | None) -> Completion:
    """The completion of a `completions` row whose reply text is `content`."""
    calls = tuple(ToolCall(**c) for c in json_from_sql(row["tool_calls_json"]))
    stored = row["reasoning_details_json"]
    details = None if stored is None else json_from_sql(stored)
    return Completion(
        content=content,
        tool_calls=calls,
        reasoning=from_sql(row["reasoning"]),
        finish_reason=from_sql(row["finish_reason"]),
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        cost_usd=row["cost_usd"],
        latency_s=row["latency_s"] or 0.0,
        served_by=from_sql(row["served_by"]),
        cut_chars=row["cut_chars"],
        generation_id=from_sql(row["generation_id"]),
        native_finish_reason=from_sql(row["native_finish_reason"]),
        reasoning_tokens=row["reasoning_tokens"],
        reasoning_details=tuple(details) if isinstance(details, list) else (),
        top_logprobs=_top_logprobs(row["top_logprobs_json"]),
        cached_tokens=row["cached_tokens"],
        cache_write_tokens=row["cache_write_tokens"],
        cache_discount=row["cache_discount"],
        answered_model=from_sql(row["answered_model"]),
    )


def _top_logprobs(text: str | bytes | None) -> tuple[TokenLogprob, ...] | None:
    if text is None:
        return None
    return tuple(TokenLogprob(str(token), float(p)) for token, p in json_from_sql(text))


def _record_of(cls: type[R], row: Mapping[str, Any], **converted: Any) -> R:
    """A `cls` whose fields are `row`'s columns of the same names, but those in `converted`
    (columns stored in another form or under another name, and values from elsewhere)."""
    same = {f.name: row[f.name] for f in fields(cls) if f.name not in converted}
    return cls(**same, **converted)


def run_from_row(row: Mapping[str, Any]) -> RunRecord:
    return _record_of(
        RunRecord,
        row,
        model_label=str(from_sql(row["model_label"])),
        model_id=str(from_sql(row["model_id"])),
        model_config=json_from_sql(row["model_config_json"]),
    )


def item_from_row(
    row: Mapping[str, Any],
    turns: tuple[TurnRecord, ...],
    runs: dict[int, RunRecord] | None = None,
) -> ItemRecord:
    """An item of a row of `items` joined with its run's columns (the run's id as `r_id`);
    `runs`: the runs read so far by id, shared by the rows of one query."""
    run = None if runs is None else runs.get(row["r_id"])
    if run is None:
        run = run_from_row({**dict(row), "id": row["r_id"]})
        if runs is not None:
            runs[run.id] = run
    return _record_of(
        ItemRecord,
        row,
        run=run,
        error=from_sql(row["error"]),
        turns=turns,
    )


def judgment_from_row(row: Mapping[str, Any]) -> JudgmentRecord:
    return _record_of(
        JudgmentRecord,
        row,
        judge_model=str(from_sql(row["judge_model"])),
        scores=None if row["scores_json"] is None else json_from_sql(row["scores_json"]),
        reasoning=from_sql(row["reasoning"]),
        raw_reply=from_sql(row["raw_reply"]),
        error=from_sql(row["error"]),
        completion_keys=tuple(json.loads(row["completion_keys_json"])),
    )
