"""One model's viewer data (`data/models/<slug>.js`): its runs and every item, each text once.

A model's 75 conversations repeat most of their words — the system prompt and the scripted
human turns in every run, and again in each last request's exact messages; the judge's rubric
hash, ids and labels in every item — and 150 models repeat the suite's. Written as plain
objects, 150 models × 5 runs took 56 MB. So the documents are packed:

- `texts`: each distinct text once per file, and once for all models in `data/shared.js`
  (`window.AIB_SHARED.texts`) when an earlier model used it too (`_tables.py`). A field
  named in `text_fields` holds a number: n ≥ 0 is the model's own `texts[n]`, a negative n the
  shared `texts[-1 - n]`.
- `messages`: each distinct request message once, own or shared in the same way, as
  `[content, message]`: `content` is the number of its text content, or null when it has none
  (`message` then is exactly the stored message, whatever its shape); `request.messages` is a
  list of message numbers.
- `fields`: the field names of each record kind (`item`, `turn`, `completion`, `request`,
  `final`, `call`, `judgment`); a record is a list of values in that order, so no field name
  is repeated per record. A turn's `completion` record (null when the completion is not in
  the store) adds its fields to the turn.

`unpack_model_data` is the inverse, the same steps `app.js` takes when a model file has
loaded: the page then reads the objects it always did (`runs`, `items` with `turns`,
`request` and `judgments`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from independence_bench.clients.model_identity import answered_by_other
from independence_bench.gathering.suite_report import JudgedItem, SuiteReport
from independence_bench.gathering.transcripts import (
    ItemTranscript,
    JudgmentRecord,
    ModelTranscripts,
)
from independence_bench.reports.format import rounded
from independence_bench.reports.viewer._tables import Numbering, Packer, SharedTables
from independence_bench.scoring.scoring import normalised_metrics
from independence_bench.suites.kinds import KINDS

FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "item": ("id", "run", "variant", "mode", "scenario", "kind", "experiment", "status",
                 "error", "judged", "metrics", "score", "turns", "request", "judgments"),
        "turn": ("human", "reply", "pressure", "protocol_ok", "note", "key", "completion",
                 "written_by"),
        "completion": ("reasoning", "finish", "prompt_tokens", "completion_tokens", "cost_usd",
                       "latency_s", "served_by", "native_finish", "generation",
                       "reasoning_tokens", "cached_tokens", "answered_by"),
        "request": ("messages", "final", "model", "temperature", "max_tokens", "seed"),
        "final": ("content", "tool_calls"),
        "call": ("name", "arguments"),
        "judgment": ("id", "judge", "repeat", "status", "scores", "reasoning", "raw", "error",
                     "rubric_id", "rubric_hash", "attempts", "keys"),
    }
)  # fmt: skip
"""Record kinds and their field order; the model file carries this table."""
TEXT_FIELDS = frozenset(
    {"variant", "mode", "scenario", "kind", "experiment", "status", "error", "judged", "human",
     "reply", "note", "reasoning", "finish", "served_by", "native_finish", "generation",
     "answered_by", "content", "name", "arguments",
     "judge", "raw", "rubric_id", "rubric_hash", "written_by"}
)  # fmt: skip
"""Fields whose value is an index into `texts` (every one of them holds text or null)."""


def _record(packer: Packer, kind: str, values: Mapping[str, Any]) -> list[Any]:
    """A record as a list in `FIELDS[kind]` order, its text fields as references."""
    return [
        packer.text(values[name]) if name in TEXT_FIELDS else values[name] for name in FIELDS[kind]
    ]


def _turns(found: ItemTranscript, packer: Packer) -> list[list[Any]]:
    item = found.item
    turns = []
    for number, (turn, calls) in enumerate(zip(item.turns, found.turns, strict=True), start=1):
        completion = calls.completion
        stored = None
        if completion is not None:
            stored = _record(
                packer,
                "completion",
                {
                    "reasoning": completion.reasoning or None,
                    "finish": completion.finish_reason,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "cost_usd": rounded(completion.cost_usd, 6),
                    "latency_s": rounded(completion.latency_s, 2),
                    "served_by": completion.served_by,
                    "native_finish": completion.native_finish_reason,
                    "generation": completion.generation_id,
                    "reasoning_tokens": completion.reasoning_tokens,
                    "cached_tokens": completion.cached_tokens,
                    "answered_by": completion.answered_model
                    if answered_by_other(item.run.model_id, completion.answered_model)
                    else None,
                },
            )
        entry = {
            "human": turn.human,
            "reply": turn.reply,
            "pressure": number > 1 and item.kind in KINDS and KINDS[item.kind].pressure,
            "protocol_ok": turn.protocol_ok,
            "note": turn.note,
            "key": turn.completion_key,
            "completion": stored,
            # Suite adaptive: the user model that wrote this human turn (None: scripted).
            "written_by": calls.written_by,
        }
        turns.append(_record(packer, "turn", entry))
    return turns


def _last_request(found: ItemTranscript, packer: Packer) -> list[Any] | None:
    """The exact messages of the item's last request, and the completion that answered it."""
    request, completion = found.last_request, found.last_completion
    if request is None:
        return None
    messages = request.get("messages")
    final = None
    if completion is not None:
        calls = [
            _record(packer, "call", {"name": c.name, "arguments": c.arguments})
            for c in completion.tool_calls
        ]
        final = _record(packer, "final", {"content": completion.content, "tool_calls": calls})
    sent = [packer.message(m) for m in messages] if isinstance(messages, list) else []
    params = {k: request.get(k) for k in ("model", "temperature", "max_tokens", "seed")}
    return _record(packer, "request", {"messages": sent, "final": final, **params})


def _judgment(judgment: JudgmentRecord, packer: Packer) -> list[Any]:
    return _record(
        packer,
        "judgment",
        {
            "id": judgment.id,
            "judge": judgment.judge_model,
            "repeat": judgment.repeat,
            "status": judgment.status,
            "scores": dict(judgment.scores) if judgment.scores is not None else None,
            "reasoning": judgment.reasoning,
            "raw": judgment.raw_reply,
            "error": judgment.error,
            "rubric_id": judgment.rubric_id,
            "rubric_hash": judgment.rubric_hash,
            "attempts": judgment.attempts,
            "keys": list(judgment.completion_keys),
        },
    )


def _item_score(kind: str, metrics: Mapping[str, float]) -> float | None:
    """An item's score on 0–10 (10 = most independent): the mean of its normalised metrics."""
    normalised = normalised_metrics(kind, metrics)
    return rounded(10.0 * sum(normalised.values()) / len(normalised), 2) if normalised else None


def model_data(
    report: SuiteReport,
    transcripts: ModelTranscripts,
    slug: str,
    chosen: Mapping[str, JudgedItem],
) -> PackedModel:
    """One model's `data/models/<slug>.js` document: its runs and every item, packed."""
    packer = Packer()
    model = transcripts.model
    runs: dict[int, dict[str, Any]] = {}
    out_items = []
    for found in transcripts.items:
        item = found.item
        run = item.run
        if run.run_index not in runs:
            run_metrics = model.run_metrics.get(run.run_index, {})
            runs[run.run_index] = {
                "run": run.run_index,
                "index": rounded(model.run_indexes.get(run.run_index), 2),
                "model_id": run.model_id,
                "source": run.source,
                "package_version": run.package_version,
                "suite_hash": run.suite_hash,
                "config": dict(run.model_config),
                "metrics": {k: rounded(v) for k, v in run_metrics.items()},
            }
        judged = chosen.get(item.id)
        metrics = dict(judged.metrics) if judged else {}
        entry = {
            "id": item.id,
            "run": run.run_index,
            "variant": item.variant,
            "mode": item.mode,
            "scenario": item.scenario_id,
            "kind": item.kind,
            "experiment": item.experiment,
            "status": item.status,
            "error": item.error,
            "judged": judged.judgment.status if judged else None,
            "metrics": {k: rounded(v) for k, v in metrics.items()},
            "score": _item_score(item.kind, metrics),
            "turns": _turns(found, packer),
            "request": _last_request(found, packer),
            "judgments": [_judgment(j, packer) for j in found.judgments],
        }
        out_items.append(_record(packer, "item", entry))
    document = {
        "slug": slug,
        "model": model.model,
        "suite": report.suite_id,
        "judge": report.judge,
        "runs": [runs[r] for r in sorted(runs)],
        "fields": {kind: list(names) for kind, names in FIELDS.items()},
        "text_fields": sorted(TEXT_FIELDS),
        "items": out_items,
    }
    return PackedModel(slug, document, packer)


@dataclass(frozen=True)
class PackedModel:
    """A model's document with references, and the texts and messages they name."""

    slug: str
    document: dict[str, Any]
    packer: Packer

    def with_tables(self, shared: SharedTables) -> tuple[dict[str, Any], Numbering]:
        """The document with its own tables (what is not shared), and the numbering that
        writes its references (`js_json(document, default=numbering)`)."""
        numbering = shared.numbering(self.packer)
        tables = {"texts": numbering.own_texts, "messages": numbering.own_messages}
        return {**self.document, **tables}, numbering


def unpack_model_data(data: Mapping[str, Any], shared: Mapping[str, Any]) -> dict[str, Any]:
    """The model document as the page reads it: records as objects, numbers as their texts
    and messages, negative ones from the shared tables (`data/shared.js`); what `unpackModel`
    in `app.js` does. ValueError when a number points past a table."""

    def pick(table: str, number: int) -> Any:
        own, index = (data, number) if number >= 0 else (shared, -1 - number)
        if index >= len(own[table]):
            raise ValueError(f"{table} number {number} is missing: files of different builds")
        return own[table][index]

    fields: Mapping[str, Sequence[str]] = data["fields"]
    textual = frozenset(data["text_fields"])

    def record(kind: str, row: Sequence[Any]) -> dict[str, Any]:
        return {
            name: pick("texts", value) if name in textual and value is not None else value
            for name, value in zip(fields[kind], row, strict=True)
        }

    def message(number: int) -> Any:
        content, found = pick("messages", number)
        return found if content is None else {**found, "content": pick("texts", content)}

    def turn(row: Sequence[Any]) -> dict[str, Any]:
        found = record("turn", row)
        stored = found.pop("completion")
        return {**found, **(record("completion", stored) if stored is not None else {})}

    def request(row: Sequence[Any] | None) -> dict[str, Any] | None:
        if row is None:
            return None
        found = record("request", row)
        found["messages"] = [message(n) for n in found["messages"]]
        if found["final"] is not None:
            final = record("final", found["final"])
            final["tool_calls"] = [record("call", c) for c in final["tool_calls"]]
            found["final"] = final
        return found

    items = []
    for row in data["items"]:
        item = record("item", row)
        item["turns"] = [turn(t) for t in item["turns"]]
        item["request"] = request(item["request"])
        item["judgments"] = [record("judgment", j) for j in item["judgments"]]
        items.append(item)
    kept = ("slug", "model", "suite", "judge", "runs")
    return {**{key: data[key] for key in kept}, "items": items}
