"""Stores for the report and viewer tests, written straight through the `Store` API.

A loopback run (see `test_run_e2e.py`) is the realistic way to fill a store; these builders are
for what a run cannot easily produce: many models, unknown costs, reasoning text, unscored and
failed items, an imported item, and hostile replies planted in chosen places.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.conversations.conversation import TOOL_NAME, build_messages, system_prompt
from independence_bench.stats.core import Resampling
from independence_bench.store.store import ItemRecord, RunRecord, Store, TurnRecord, Verdict
from independence_bench.suites.suite import Scenario, Suite, load_suite

HOSTILE_REPLY = (
    'Sure. <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> '
    '<a href="javascript:window.__pwned=3">x</a> </script><b>bold?</b> \u2028 & done'
)
"""A reply that would run script or navigate if the viewer rendered it as HTML."""
FEW_RESAMPLES = Resampling(100)
"""Enough for a report or viewer whose tests do not read its intervals' bounds."""


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def judge_scores(kind: str, strength: float, rng: random.Random) -> dict[str, Any]:
    """Scores a judge could give an item of `kind` for a model of `strength` (0–1)."""

    def grade(top: int) -> int:
        return max(0, min(top, round(top * strength + rng.uniform(-1.0, 1.0))))

    if kind in ("direct", "tool_context", "psych", "negotiation"):
        scores: dict[str, Any] = {
            "distinctiveness": grade(10),
            "non_assistant_likeness": grade(10),
            "internal_consistency": grade(10),
        }
        if kind == "negotiation":
            scores["drift_from_initial"] = 10 - grade(10)
        return scores
    if kind == "name_gender":
        caved = strength < 0.5
        return {
            "chosen_name": "Quill",
            "chosen_gender": "nonbinary",
            "name_changed": caved,
            "gender_changed": caved,
        }
    if kind in ("resistance", "boundary"):
        return {"resistance_score": grade(2 if kind == "resistance" else 10)}
    return {"consistency_score": grade(10), "graceful_handling": grade(10)}


def _request(suite: Suite, scenario: Scenario, variant: str, mode: str, turn: int) -> Any:
    replies = [f"earlier reply {i + 1}" for i in range(turn)]
    messages = build_messages(
        system=system_prompt(suite.variant(variant).system_prompt, suite.delivery, mode),  # type: ignore[arg-type]
        delivery=suite.delivery,
        mode=mode,  # type: ignore[arg-type]
        human_turns=scenario.turns,
        replies=replies,
        conversation_key=f"{variant}/{mode}/{scenario.id}",
    )
    return {"model": "m", "messages": list(messages), "tools": [], "temperature": 0.7}


def add_item(
    store: Store,
    suite: Suite,
    run: RunRecord,
    scenario: Scenario,
    *,
    variant: str,
    mode: str,
    replies: Sequence[str],
    scores: Mapping[str, Any] | None,
    judge: str = "synthetic-judge",
    cost: float | None = 0.001,
    reasoning: str | None = None,
    judge_reasoning: str = "The subject kept its choices.",
    status: str = "done",
) -> str:
    """Store one item (with its completions) and, when `scores` is given, its judgment."""
    item_id = _key(run.model_label, run.suite_id, run.run_index, variant, mode, scenario.id)[:24]
    turns = []
    for index, reply in enumerate(replies):
        key = _key(item_id, index)
        request = _request(suite, scenario, variant, mode, index)
        calls: tuple[ToolCall, ...] = ()
        content: str | None = reply
        if mode == "tool_role":
            arguments = json.dumps({"message": reply}, ensure_ascii=False)
            calls, content = (ToolCall(id=key[:9], name=TOOL_NAME, arguments=arguments),), None
        completion = Completion(
            content=content,
            tool_calls=calls,
            reasoning=reasoning,
            finish_reason="tool_calls" if calls else "stop",
            prompt_tokens=100,
            completion_tokens=50,
            cost_usd=cost,
            latency_s=0.5,
        )
        store.put_completion(key, run.model_id, request, completion)
        turns.append(TurnRecord(human=scenario.turns[index], reply=reply, completion_key=key))
    error = None if status == "done" else "HTTP 500 three times"
    place = (variant, mode, scenario.id, scenario.kind, scenario.experiment)
    store.put_item(ItemRecord(item_id, run, *place, status, error, tuple(turns)))
    if status == "done":
        judge_key = _key(item_id, "judge")
        store.put_completion(
            judge_key,
            judge,
            {"model": judge, "messages": [{"role": "user", "content": "judge this"}]},
            Completion(content=json.dumps(scores or {}), cost_usd=0.0002),
        )
        store.add_judgment(
            item_id=item_id,
            judge_model=judge,
            rubric_id=scenario.rubric,
            rubric_hash="r" * 64,
            repeat=0,
            verdict=Verdict(
                status="scored" if scores is not None else "unscored",
                scores=scores,
                reasoning=judge_reasoning if scores is not None else None,
                raw_reply=json.dumps({"reasoning": judge_reasoning, **(scores or {})})
                if scores is not None
                else "not json at all",
                error=None if scores is not None else "reply was not JSON",
                attempts=1,
                completion_keys=(judge_key,),
            ),
        )
    return item_id


def build_store(
    data_dir: Path,
    strengths: Mapping[str, float],
    *,
    runs: int = 2,
    suite_id: str = "v2",
    seed: int = 0,
    unpriced: Sequence[str] = (),
    imported_at: float | None = None,
) -> Store:
    """A store where each model answers every scenario of the suite in every cell and run.

    `strengths` (0–1) set how independent each model's judged scores are; models named in
    `unpriced` have completions without a cost. The caller closes the returned store.
    """
    rng = random.Random(seed)
    suite = load_suite(suite_id)
    store = Store(data_dir)
    for label, strength in strengths.items():
        with store.transaction():
            _add_model(store, suite, label, strength, runs, rng, label in unpriced, imported_at)
    return store


def _add_model(
    store: Store,
    suite: Suite,
    label: str,
    strength: float,
    runs: int,
    rng: random.Random,
    unpriced: bool,
    imported_at: float | None,
) -> None:
    for run_index in range(1, runs + 1):
        run, _ = store.ensure_run(
            model_label=label,
            model_id=label,
            suite_id=suite.id,
            suite_version=suite.version,
            suite_hash=suite.content_hash,
            run_index=run_index,
            model_config={"id": label, "temperature": 0.7},
            package_version="0.1.0",
            imported_at=imported_at,
        )
        for variant in suite.variants:
            for mode in suite.delivery_modes:
                for scenario in suite.scenarios:
                    add_item(
                        store,
                        suite,
                        run,
                        scenario,
                        variant=variant.id,
                        mode=mode,
                        replies=[f"{label} reply {i + 1}" for i in range(len(scenario.turns))],
                        scores=judge_scores(scenario.kind, strength, rng),
                        cost=None if unpriced else 0.001,
                    )
