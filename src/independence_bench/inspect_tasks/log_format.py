"""What our Inspect tasks write into a log beyond Inspect's own record, and how to read it back.

The solver keeps each conversation as our engine would store it (every turn's human text,
reply, exact request and completion) in the sample's store under `TRANSCRIPT_KEY`; the scorer
keeps the verdict and every judge call in its score's metadata. Both are plain JSON, so the
importer reads them with or without `inspect_ai` installed, and nothing is asked again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from independence_bench.clients.protocol import Completion, ToolCall

TASK_MARK = "independence_bench"
"""Key of the task metadata that names the suite: `{"suite": id, "suite_hash": …, …}`."""
TRANSCRIPT_KEY = "independence_bench:transcript"
"""Key of the sample store entry holding the conversation."""
SCORER_NAME = "independence_judge"
EPOCHS_KEY = "epochs"
"""Key of the reduced score's metadata: every epoch's own score metadata, in epoch order."""


def sample_id(variant: str, mode: str, scenario_id: str) -> str:
    """A sample's id: the scenario and its cell (prompt variant and delivery mode)."""
    return f"{scenario_id}/{variant}/{mode}"


def completion_to_json(completion: Completion) -> dict[str, Any]:
    """A completion as JSON the log keeps."""
    return {
        "content": completion.content,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls
        ],
        "reasoning": completion.reasoning,
        "finish_reason": completion.finish_reason,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "cost_usd": completion.cost_usd,
        "latency_s": completion.latency_s,
        "served_by": completion.served_by,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def completion_from_json(data: Mapping[str, Any]) -> Completion:
    """A completion as `completion_to_json` wrote it; a field of the wrong type reads as None."""
    calls = []
    for call in data.get("tool_calls") or ():
        if isinstance(call, Mapping):
            calls.append(
                ToolCall(
                    str(call.get("id", "")), str(call.get("name", "")), str(call.get("arguments"))
                )
            )
    cost = data.get("cost_usd")
    latency = data.get("latency_s")
    return Completion(
        content=_text(data.get("content")),
        tool_calls=tuple(calls),
        reasoning=_text(data.get("reasoning")),
        finish_reason=_text(data.get("finish_reason")),
        prompt_tokens=_count(data.get("prompt_tokens")),
        completion_tokens=_count(data.get("completion_tokens")),
        cost_usd=float(cost) if isinstance(cost, int | float) and cost == cost else None,
        latency_s=float(latency) if isinstance(latency, int | float) else 0.0,
        served_by=_text(data.get("served_by")),
    )
