"""Money: `aib estimate` before anything is sent, and `aib run --max-cost` as a hard cap."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.budget import BudgetExhausted, CostGuard, Price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import Completion, CompletionRequest
from independence_bench.errors import UserError
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_benchmark
from support.mock_behaviours import COST_PER_TOKEN_USD
from support.mock_server import MockServer
from support.store_views import stored_fingerprints

SUBJECT_CALLS_PER_RUN = sum(len(s.turns) for s in load_suite("v2").scenarios)
ITEMS_PER_RUN = len(load_suite("v2").scenarios)


def _args(server: MockServer, *extra: str) -> list[str]:
    return [
        "--models",
        "scripted-firm,scripted-caving",
        "--judge",
        "scripted-judge",
        "--base-url",
        server.base_url,
        "--data-dir",
        "store",
        *extra,
    ]


def _row(out: str, name: str) -> list[str]:
    return next(line for line in out.splitlines() if line.startswith(name)).split()


def test_estimate_counts_calls_tokens_and_cost_without_sending_a_call(
    server: MockServer, aib: Any
) -> None:
    result = aib("estimate", *_args(server, "--runs", "3"))
    assert result.code == 0, result.err
    assert server.seen.request_count == 0
    assert not Path("store").exists()
    assert "characters / 4" in result.out and "upper bound" in result.out
    firm = _row(result.out, "scripted-firm")
    assert firm[1] == f"{3 * SUBJECT_CALLS_PER_RUN:,}"
    assert firm[-3:] == ["endpoint's", "model", "list"]
    judge = _row(result.out, "judge scripted-judge")
    assert judge[2] == f"{2 * 3 * ITEMS_PER_RUN:,}"
    prompt_tokens = int(firm[2].replace(",", ""))
    replies = int(firm[3].replace(",", ""))
    cost = float(firm[4].removeprefix("$"))
    assert cost == pytest.approx((prompt_tokens + replies) * COST_PER_TOKEN_USD, abs=1e-4)
    total = _row(result.out, "total")
    assert total[1] == f"{2 * 3 * (SUBJECT_CALLS_PER_RUN + ITEMS_PER_RUN):,}"


def test_estimate_after_a_partial_run_counts_only_what_is_left(
    server: MockServer, aib: Any
) -> None:
    assert aib("run", *_args(server, "--runs", "1")).code == 0
    result = aib("estimate", *_args(server, "--runs", "2"))
    assert result.code == 0, result.err
    assert _row(result.out, "scripted-firm")[1] == str(SUBJECT_CALLS_PER_RUN)
    assert _row(result.out, "judge scripted-judge")[2] == str(2 * ITEMS_PER_RUN)
    fresh = aib("estimate", *_args(server, "--runs", "1", "--fresh"))
    assert _row(fresh.out, "scripted-firm")[1] == str(SUBJECT_CALLS_PER_RUN)


def test_estimate_takes_prices_from_models_yaml_and_shows_unknown_ones(
    server: MockServer, aib: Any
) -> None:
    Path("models.yaml").write_text(
        f"""
models:
  - id: scripted-firm
    base_url: {server.base_url}
    price_prompt_per_mtok: 3
    price_completion_per_mtok: 15
  - id: some-local-model
    base_url: http://127.0.0.1:9/v1
  - id: some-remote-model
    base_url: http://unpriced.invalid:9/v1
judge:
  id: scripted-judge
  base_url: {server.base_url}
""",
        encoding="utf-8",
    )
    result = aib("estimate", "--config", "models.yaml", "--runs", "1", "--data-dir", "store")
    assert result.code == 0, result.err
    firm = _row(result.out, "scripted-firm")
    assert firm[-1] == "models.yaml"
    expected = int(firm[2].replace(",", "")) * 3e-6 + int(firm[3].replace(",", "")) * 15e-6
    assert float(firm[4].removeprefix("$")) == pytest.approx(expected, abs=1e-4)
    local = _row(result.out, "some-local-model")
    assert local[4] == "$0.0000" and local[-1] == "local"  # runs on this machine: free
    remote = _row(result.out, "some-remote-model")
    assert remote[4] == "unknown" and remote[5] == "unknown"
    assert "(1 price unknown)" in result.out and _row(result.out, "total")[4] == "≥"
    assert server.seen.request_count == 0


def _spent(store: Path) -> float:
    """What the stored calls cost: the subject's own figures, the judge's tokens at list price."""
    with closing(sqlite3.connect(store / "aib.sqlite3")) as db:
        rows = db.execute(
            "SELECT cost_usd, prompt_tokens, completion_tokens FROM completions"
        ).fetchall()
    return sum(c if c is not None else (p + t) * COST_PER_TOKEN_USD for c, p, t in rows)


def test_max_cost_stops_before_the_cap_and_the_same_command_resumes(
    server: MockServer, aib: Any
) -> None:
    capped = aib("run", *_args(server, "--runs", "1", "--max-cost", "0.05"))
    assert capped.code == 0, capped.err
    last = capped.out.strip().splitlines()[-1]
    assert last.startswith("stopped at the --max-cost cap:") and "to resume" in last
    spent = _spent(Path("store"))
    assert 0 < spent <= 0.05
    runs = aib("runs", "--data-dir", "store")
    assert "partial" in runs.out

    resumed = aib("run", *_args(server, "--runs", "1"))
    assert resumed.code == 0, resumed.err
    assert "stopped at" not in resumed.out
    assert "2 complete, 0 partial" in aib("runs", "--data-dir", "store").out
    stored = stored_fingerprints(Path("store"))
    assert sum(stored.values()) == 2 * (SUBJECT_CALLS_PER_RUN + ITEMS_PER_RUN)
    assert sum(server.seen.answered.values()) == sum(stored.values()), "a call was paid for twice"


class _UnpricedClient:
    """An endpoint that keeps no model list, so nothing says what its models cost."""

    async def complete(self, request: CompletionRequest) -> Completion:
        raise AssertionError("nothing may be sent when the cap cannot be enforced")

    async def aclose(self) -> None:
        pass


def test_max_cost_refuses_to_start_without_every_price(tmp_path: Path) -> None:
    def factory(spec: ModelSpec) -> tuple[str, _UnpricedClient, int]:
        return "unpriced", _UnpricedClient(), 4

    options = RunOptions(
        config_path=tmp_path / "models.yaml",
        data_dir=tmp_path / "store",
        show_progress=False,
        factories=(factory,),
        max_cost=1.0,
    )
    (tmp_path / "models.yaml").write_text(
        "models:\n"
        "  - {id: priced, price_prompt_per_mtok: 1, price_completion_per_mtok: 2}\n"
        "  - {id: unpriced}\n"
        "judge: {id: judge, price_prompt_per_mtok: 1, price_completion_per_mtok: 2}\n",
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=r"--max-cost needs a price for every model.*unpriced"):
        run_benchmark(options)
    assert not (tmp_path / "store").exists()


def _request(prompt_chars: int, max_tokens: int) -> CompletionRequest:
    messages = ({"role": "user", "content": "x" * prompt_chars},)
    return CompletionRequest("m", messages, max_tokens=max_tokens)


async def test_the_guard_waits_for_calls_in_flight_then_stops_for_good() -> None:
    guard = CostGuard(1.0, {"m": Price(0.0, 0.001, "test")})
    first = await guard.reserve("m", _request(0, 400))  # worst case 0.40
    second = await guard.reserve("m", _request(0, 400))
    waiting = asyncio.ensure_future(guard.reserve("m", _request(0, 400)))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # 0.8 reserved + 0.4 > 1.0: wait for the calls in flight
    guard.settle(first, Completion(content="x", cost_usd=0.05))
    third = await asyncio.wait_for(waiting, 1)  # 0.05 spent + 0.4 + 0.4 fits
    guard.settle(second, Completion(content="x", prompt_tokens=10, completion_tokens=100))
    guard.settle(third, Completion(content="x"))  # no cost, no tokens: the worst case
    assert guard.spent_usd == pytest.approx(0.05 + 0.1 + 0.4)
    assert guard.reserved_usd == 0.0
    with pytest.raises(BudgetExhausted):
        await guard.reserve("m", _request(0, 500))  # 0.55 + 0.5 > 1.0 with nothing in flight
    assert guard.stopped
    with pytest.raises(BudgetExhausted):
        await guard.reserve("m", _request(0, 1))  # stopped for good: no squeezing in
    assert guard.refused == 2
    assert json.dumps(guard.cap_usd) == "1.0"


def test_prices_come_from_models_yaml_first_then_the_endpoint_list() -> None:
    from independence_bench.clients.catalog import _listed, _listing, resolve_prices
    from independence_bench.clients.endpoints import ClientPool

    entries = [  # as OpenRouter's GET /api/v1/models lists them: USD per token, as strings
        {
            "id": "openai/gpt-4o-mini",
            "pricing": {"prompt": "0.00000015", "completion": "0.0000006"},
        },
        {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
        {"id": "broken/model", "pricing": {"prompt": "n/a"}},
        {"id": "llama3.1:latest"},
    ]
    listing = _listing("https://openrouter.ai/api/v1", entries, "endpoint's model list")
    assert _listed("openai/gpt-4o-mini:nitro", listing.ids)
    assert _listed("llama3.1", listing.ids) and not _listed("gpt-5", listing.ids)
    specs = (
        ModelSpec(id="openai/gpt-4o-mini:floor"),
        ModelSpec(
            id="openai/gpt-4o-mini",
            label="pinned",
            price_prompt_per_mtok=1,
            price_completion_per_mtok=2,
        ),
        ModelSpec(id="openrouter/auto"),
        ModelSpec(id="broken/model"),
    )
    pool = ClientPool(env={"OPENROUTER_API_KEY": "sk-or-test-key-000"})
    prices = resolve_prices(specs, {"https://openrouter.ai/api/v1": listing}, pool)
    assert prices["openai/gpt-4o-mini:floor"] == Price(1.5e-7, 6e-7, "endpoint's model list")
    assert prices["pinned"] == Price(1e-6, 2e-6, "models.yaml")
    assert prices["openrouter/auto"] is None and prices["broken/model"] is None
