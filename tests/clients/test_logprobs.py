"""Top log-probabilities of a reply's first token: asked for only when wanted, read from hostile
server JSON, computed from raw logits for the embedded model, and kept by the store."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.local.gguf_chat import top_logprobs
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.protocol import Completion, CompletionRequest, TokenLogprob
from independence_bench.clients.replies import completion_of, first_token_logprobs
from independence_bench.engine.request_keys import request_key, request_record
from independence_bench.store.store import Store

REQUEST = CompletionRequest(model="m", messages=({"role": "user", "content": "Is it? yes or no"},))


def _choice(logprobs: Any) -> dict[str, Any]:
    return {"choices": [{"message": {"content": "Yes"}, "logprobs": logprobs}]}


def test_a_request_asks_for_logprobs_only_when_it_wants_them() -> None:
    client = OpenAICompatibleClient(
        base_url="http://127.0.0.1:9/v1", api_key=None, is_openrouter=False
    )
    plain = client._body(REQUEST)
    assert "logprobs" not in plain and "top_logprobs" not in plain
    body = client._body(CompletionRequest(model="m", messages=REQUEST.messages, top_logprobs=20))
    assert (body["logprobs"], body["top_logprobs"]) == (True, 20)


def test_asking_for_logprobs_changes_the_key_and_not_asking_keeps_the_old_one() -> None:
    assert "top_logprobs" not in request_record(REQUEST)
    asking = CompletionRequest(model="m", messages=REQUEST.messages, top_logprobs=5)
    assert request_record(asking)["top_logprobs"] == 5
    assert request_key(asking, sample="s") != request_key(REQUEST, sample="s")


def test_the_first_tokens_candidates_are_read_in_order() -> None:
    logprobs = {
        "content": [
            {
                "token": "Yes",
                "logprob": -0.1,
                "top_logprobs": [
                    {"token": "Yes", "logprob": -0.1, "bytes": [89, 101, 115]},
                    {"token": " No", "logprob": -2.5, "bytes": None},
                ],
            },
            {"token": ".", "logprob": -0.01, "top_logprobs": [{"token": "!", "logprob": -9}]},
        ]
    }
    completion = completion_of(_choice(logprobs), 0.1)
    assert completion.top_logprobs == (TokenLogprob("Yes", -0.1), TokenLogprob(" No", -2.5))


@pytest.mark.parametrize(
    "logprobs",
    [
        None,
        {},
        {"content": None},
        {"content": []},
        {"content": "x"},
        [1],
        "x",
        {"content": [{"top_logprobs": None}]},
    ],
)
def test_no_logprobs_read_as_none(logprobs: Any) -> None:
    assert first_token_logprobs(logprobs) is None
    assert completion_of(_choice(logprobs), 0.1).top_logprobs is None


def test_hostile_candidates_are_left_out_and_positive_logprobs_capped() -> None:
    top = [
        {"token": "Yes", "logprob": float("nan")},
        {"token": "No", "logprob": float("inf")},
        {"token": 7, "logprob": -1.0},
        {"token": "maybe", "logprob": "-1"},
        {"token": "y", "logprob": True},
        {"token": "n", "logprob": 10**400},
        "not an object",
        {"token": "yes", "logprob": 0.25},
        {"token": "no\x1b[31m", "logprob": -3},
        *({"token": f"t{i}", "logprob": -5.0} for i in range(30)),
    ]
    candidates = first_token_logprobs({"content": [{"top_logprobs": top}]})
    assert candidates is not None
    assert candidates[:2] == (TokenLogprob("yes", 0.0), TokenLogprob("no\x1b[31m", -3.0))
    assert len(candidates) == 2 + 11  # the list is cut at 20 entries before filtering


def test_top_logprobs_of_logits_are_a_log_softmax_in_order() -> None:
    logits = [0.0, 2.0, 1.0, 2.0, -50.0]
    names = {0: "a", 1: "Yes", 2: "b", 3: "No", 4: "z"}
    top = top_logprobs(logits, 3, names.__getitem__)
    total = sum(math.exp(x) for x in logits)
    assert [c.token for c in top] == ["Yes", "No", "b"]  # ties in token order
    assert top[0].logprob == pytest.approx(2.0 - math.log(total))
    assert top[2].logprob == pytest.approx(1.0 - math.log(total))
    assert len(top_logprobs(logits, 50, names.__getitem__)) == 5


def test_the_store_keeps_a_completions_top_logprobs(tmp_path: Path) -> None:
    top = (TokenLogprob("Yes", -0.2), TokenLogprob("\udcff no", -1.7))
    with Store(tmp_path) as store:
        store.put_completion(
            "k1", "m", request_record(REQUEST), Completion(content="Yes", top_logprobs=top)
        )
        store.put_completion("k2", "m", request_record(REQUEST), Completion(content="plain"))
        first, second = store.get_completion("k1"), store.get_completion("k2")
    assert first is not None and first.top_logprobs == top
    assert second is not None and second.top_logprobs is None
