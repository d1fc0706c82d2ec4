"""The scorer: our judge, asked through Inspect's `grader` role, and the Independence Index.

`independence_judge` sends the judge exactly the requests `aib judge` sends (`judge.py`: our
rubric in the chosen form, the transcript, the reply schema), validates the reply with the
rubric's own `ReplyForm`, repairs an invalid one a bounded number of times, and records an
unscored verdict as unscored, never as zeros. A score's value is the item's metrics on their
native scales; its metadata keeps the verdict and every judge call for `aib import`.

Epochs are runs: `keep_epochs` reduces a sample's epochs while keeping each epoch's own
metadata, so `index_metric` aggregates exactly as `aib run` does (`scoring.score_model`:
per run the mean of each metric, then the mean over runs, then the suite's formula).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from statistics import fmean
from typing import Any

from inspect_ai.model import GenerateConfig, Model, ResponseSchema, get_model
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from independence_bench.clients.protocol import Completion, Message
from independence_bench.engine.request_keys import request_record
from independence_bench.engine.requests import JUDGE_MAX_TOKENS
from independence_bench.inspect_tasks.log_format import (
    EPOCHS_KEY,
    SCORER_NAME,
    TRANSCRIPT_KEY,
    completion_to_json,
)
from independence_bench.inspect_tasks.messages import (
    chat_messages,
    completion_of_output,
    cut_off,
    last_raw_reply,
)
from independence_bench.inspect_tasks.narrowing import narrowed_suite
from independence_bench.inspect_tasks.solver import GRADER_ROLE, REPLY_ATTEMPTS, request_of
from independence_bench.judging.forms import JudgeForm
from independence_bench.judging.judge import judge_reply_is_whole, run_judgment
from independence_bench.judging.rubric import load_rubric
from independence_bench.scoring.scoring import ScoredItem, item_metrics, measure_items, score_model
from independence_bench.store.records import TurnRecord, Verdict
from independence_bench.suites.suite import Suite


def _judge_call(grader: Model, schema: Mapping[str, Any], name: str, calls: list[Any]) -> Any:
    config = GenerateConfig(
        max_tokens=JUDGE_MAX_TOKENS,
        response_schema=ResponseSchema(name=name, json_schema=JSONSchema.model_validate(schema)),
    )

    async def call(messages: tuple[Message, ...], attempt: int) -> tuple[str, Completion]:
        completion = Completion(content=None)
        for _ in range(REPLY_ATTEMPTS):
            output = await grader.generate(chat_messages(messages), config=config)
            completion = completion_of_output(output)
            if cut_off(output, last_raw_reply()) is not None:
                # A verdict cut off by an error is never read: no content, the error kept.
                completion = replace(completion, content=None, finish_reason="error")
                continue
            if judge_reply_is_whole(completion):
                break
        record = request_record(request_of(grader, messages))
        record["max_tokens"] = JUDGE_MAX_TOKENS
        record["response_schema"] = dict(schema)
        calls.append({"request": record, "completion": completion_to_json(completion)})
        return f"attempt{attempt}", completion

    return call


def _place(state: TaskState, suite: Suite) -> dict[str, Any]:
    scenario = suite.scenario(str(state.metadata["scenario"]))
    return {
        "variant": state.metadata["variant"],
        "mode": state.metadata["mode"],
        "scenario": scenario.id,
        "kind": scenario.kind,
        "experiment": scenario.experiment,
        "epoch": state.epoch,
    }


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "status": verdict.status,
        "scores": dict(verdict.scores) if verdict.scores is not None else None,
        "reasoning": verdict.reasoning,
        "raw_reply": verdict.raw_reply,
        "error": verdict.error,
        "attempts": verdict.attempts,
    }


@scorer(metrics=[], name=SCORER_NAME)
def independence_judge(
    suite_id: str,
    variants: str = "",
    modes: str = "",
    scenarios: str = "",
    judge_form: JudgeForm = "holistic",
) -> Scorer:
    """Judge the sample's conversation with the `grader` role's model (see the module); the
    suite is narrowed as the solver's is."""
    suite = narrowed_suite(suite_id, variants=variants, modes=modes, scenarios=scenarios)

    async def score(state: TaskState, target: Target) -> Score:
        place = _place(state, suite)
        transcript = state.store.get(TRANSCRIPT_KEY) or {}
        if transcript.get("status") != "done":
            error = transcript.get("error") or "the conversation did not finish"
            return Score(value={}, explanation=error, metadata={**place, "status": "failed"})
        grader = get_model(role=GRADER_ROLE, required=True)
        rubric = load_rubric(suite.scenario(place["scenario"]).rubric)
        asked = rubric.asked(judge_form)
        turns = [TurnRecord(t["human"], t["reply"], "") for t in transcript["turns"]]
        calls: list[Any] = []
        schema = asked.reply.json_schema()
        call = _judge_call(grader, schema, asked.schema_name, calls)
        verdict = await run_judgment(rubric, turns, call, judge_form=judge_form)
        metadata = {
            **place,
            **_verdict_json(verdict),
            "judge": str(grader),
            "judge_form": judge_form,
            "rubric_id": rubric.id,
            "rubric_hash": asked.hash,
            "calls": calls,
        }
        if not verdict.scored or verdict.scores is None:
            return Score(value={}, explanation=verdict.error, metadata=metadata)
        item = _scored(place, str(grader), verdict.scores)
        return Score(value=item_metrics(item), explanation=verdict.reasoning, metadata=metadata)

    return score


def _scored(place: Mapping[str, Any], judge: str, scores: Mapping[str, Any]) -> ScoredItem:
    return ScoredItem(
        model="subject",
        run=int(place["epoch"]),
        variant=str(place["variant"]),
        mode=str(place["mode"]),
        scenario_id=str(place["scenario"]),
        kind=str(place["kind"]),
        judge=judge,
        scores=scores,
    )


@score_reducer(name="independence_epochs")
def keep_epochs() -> ScoreReducer:
    """Each metric's mean over a sample's epochs, keeping every epoch's metadata for the index."""

    def reduce(scores: list[Score]) -> Score:
        values: dict[str, list[float]] = defaultdict(list)
        for one in scores:
            if isinstance(one.value, Mapping):
                for key, value in one.value.items():
                    if isinstance(value, int | float):
                        values[key].append(float(value))
        return Score(
            value={key: fmean(v) for key, v in values.items()},
            metadata={EPOCHS_KEY: [one.metadata or {} for one in scores]},
        )

    return reduce


def _epochs(sample: SampleScore) -> Sequence[Mapping[str, Any]]:
    metadata = sample.score.metadata or {}
    kept = metadata.get(EPOCHS_KEY)
    return kept if isinstance(kept, list) else [metadata]


def items_of_scores(scores: list[SampleScore]) -> list[ScoredItem]:
    """Every scored epoch of every sample, as the judged items `aib` scores."""
    return [
        _scored(epoch, str(epoch.get("judge")), epoch["scores"])
        for sample in scores
        for epoch in _epochs(sample)
        if epoch.get("status") == "scored" and isinstance(epoch.get("scores"), Mapping)
    ]


@metric(name="independence_index")
def index_metric(formula: str) -> Metric:
    """The 0–100 Independence Index of the suite's formula; NaN when a metric has no scores.
    Inspect's log names it `independence_index`; `scoring.independence_index` is the formula
    it applies."""

    def compute(scores: list[SampleScore]) -> float:
        index = score_model("subject", measure_items(items_of_scores(scores)), formula).index
        return float("nan") if index is None else index

    return compute


@metric(name="unscored")
def unscored() -> Metric:
    """Conversations (over all epochs) that failed or whose judgment never validated."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(
            1 for sample in scores for epoch in _epochs(sample) if epoch.get("status") != "scored"
        )

    return compute
