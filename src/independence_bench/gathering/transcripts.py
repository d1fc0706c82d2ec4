"""The viewer's transcripts: each model's items with every stored call behind them.

`viewer_transcripts` reads, for each suite report, the suite's items (without their words, for
the viewer's index) and then, one model at a time, that model's items with their judgments, the
completion of every turn, the user model that wrote each adaptive human turn, and the exact
request of each item's last turn. It yields them lazily: the viewer writes a model before the
next is read, so its memory is that of the largest model, not of the store. The store must stay
open while they are consumed. `reports.viewer` packs and writes what it yields.

The store's records (`ItemRecord`, `JudgmentRecord`) and the calls' `Completion` are the values
handed over: re-exported here, so a renderer names them without importing the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from independence_bench.clients.protocol import Completion as Completion
from independence_bench.gathering.adaptivity import user_model_of
from independence_bench.gathering.suite_report import ModelReport, SuiteReport
from independence_bench.store.records import ItemRecord as ItemRecord
from independence_bench.store.records import JudgmentRecord as JudgmentRecord
from independence_bench.store.store import Store


@dataclass(frozen=True)
class TurnCalls:
    """What the store holds behind one turn: its completion (None when not stored) and the
    user model that wrote its human message (None for a scripted one)."""

    completion: Completion | None
    written_by: str | None


@dataclass(frozen=True)
class ItemTranscript:
    """One item with its judgments, its turns' calls and its last turn's exact request."""

    item: ItemRecord
    judgments: Sequence[JudgmentRecord]
    turns: tuple[TurnCalls, ...]
    last_request: Mapping[str, Any] | None
    """The last turn's request (messages in order, parameters); None when not stored."""
    last_completion: Completion | None


@dataclass(frozen=True)
class ModelTranscripts:
    """One model's items of one suite report, in the store's order."""

    model: ModelReport
    items: tuple[ItemTranscript, ...]


@dataclass(frozen=True)
class SuiteTranscripts:
    """One suite report's items without their words (the viewer's index), and its models'
    transcripts, read one model at a time as `models` is iterated."""

    report: SuiteReport
    items: Sequence[ItemRecord]
    models: Iterator[ModelTranscripts]


def _item_transcript(store: Store, item: ItemRecord) -> ItemTranscript:
    turns = tuple(
        TurnCalls(store.get_completion(turn.completion_key), user_model_of(store, turn.human_key))
        for turn in item.turns
    )
    last_request = last_completion = None
    if item.turns:
        key = item.turns[-1].completion_key
        last_request = store.completion_request(key)
        last_completion = store.get_completion(key)
    judgments = store.judgments(item_id=item.id)
    return ItemTranscript(item, judgments, turns, last_request, last_completion)


def _model_transcripts(store: Store, report: SuiteReport) -> Iterator[ModelTranscripts]:
    for model in report.models:
        items = store.items(suite_id=report.suite_id, model_label=model.model)
        yield ModelTranscripts(model, tuple(_item_transcript(store, item) for item in items))


def viewer_transcripts(store: Store, reports: Sequence[SuiteReport]) -> Iterator[SuiteTranscripts]:
    """Each report's items and, lazily, its models' transcripts (see the module docstring)."""
    for report in reports:
        items = store.items(suite_id=report.suite_id, words=False)
        yield SuiteTranscripts(report, items, _model_transcripts(store, report))
