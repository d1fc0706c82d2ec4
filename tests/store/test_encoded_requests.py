"""A request stored from its parts encoded once (`texts.EncodedRequest`) is the same request,
in the same rows, as one the store encodes itself: the engine's path and an import's agree."""

from __future__ import annotations

from pathlib import Path

from independence_bench.clients.protocol import Completion, CompletionRequest
from independence_bench.engine.request_keys import keyed_record
from independence_bench.store.store import Store
from support.store_views import connect

REQUESTS = [
    CompletionRequest(
        model="m",
        messages=(
            {"role": "system", "content": "You are you. 漢字"},
            {"role": "user", "content": "a lone \ud800 surrogate"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "z": 1, "a": 2}]},
        ),
        temperature=0.5,
        seed=7,
        response_schema={"type": "object", "properties": {"b": {}, "a": {}}},
    ),
    CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},), max_tokens=9),
]


def _rows(data_dir: Path) -> list[tuple[object, ...]]:
    with connect(data_dir) as db:
        return [
            tuple(row)
            for row in db.execute(
                "SELECT completions.key, message_ids, params_id, texts.body FROM completions "
                "JOIN texts ON texts.id = completions.params_id ORDER BY completions.key"
            )
        ] + [
            tuple(r) for r in db.execute("SELECT id, digest, content_id, fields_json FROM messages")
        ]


def test_a_request_stored_from_its_parts_is_stored_as_if_whole(tmp_path: Path) -> None:
    stored: dict[str, list[tuple[object, ...]]] = {}
    for way in ("parts", "whole"):
        with Store(tmp_path / way) as store:
            for index, request in enumerate(REQUESTS):
                key, record, encoded = keyed_record(request, sample=f"run{index}")
                parts = encoded if way == "parts" else None
                store.put_completion(key, "m", record, Completion(content="ok"), encoded=parts)
                assert store.completion_request(key) == record
        stored[way] = _rows(tmp_path / way)
    assert stored["parts"] == stored["whole"]
    assert len(stored["whole"]) == len(REQUESTS) + 4  # two completions, four distinct messages
