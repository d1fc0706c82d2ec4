"""`aib run` on OpenRouter as its documentation describes it, through `OPENROUTER_BASE_URL`
pointed at the emulator (`tests/support/mock_openrouter.py`), subjects and judge alike."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import GENERIC_KEY_ENV, RetryPolicy
from independence_bench.clients.openrouter import (
    BASE_URL_ENV,
    FREE_RPM_ENV,
    KEY_ALIAS_ENV,
    REFERER_ENV,
    is_openrouter_endpoint,
)
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_command
from support.mock_openrouter import (
    CUT_REPLY,
    MockOpenRouter,
    OpenRouterScript,
    catalog,
)
from support.quick_retry import shorten_backoff

SUBJECT = "acme/scripted-firm"
JUDGE = "acme/scripted-judge"
QUICK = ("--scenarios", "direct", "--runs", "1", "--data-dir", "d")
FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.001)


@contextmanager
def emulated(monkeypatch: pytest.MonkeyPatch, script: OpenRouterScript) -> Iterator[MockOpenRouter]:
    """The emulator as OpenRouter: its URL in `OPENROUTER_BASE_URL`, the key in the alias
    `OPENROUTER_KEY` (after the `aib` fixture has cleared both)."""
    with MockOpenRouter(script) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(KEY_ALIAS_ENV, "sk-or-test")
        monkeypatch.setenv(FREE_RPM_ENV, "60000")
        yield server


def _rows(sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(Path("d") / "aib.sqlite3")) as db:
        return db.execute(sql).fetchall()


def _bodies(server: MockOpenRouter, model: str) -> list[dict[str, Any]]:
    return [b for b in server.seen.requests if b.get("model") == model]


def test_base_url_variable_makes_any_url_openrouter_for_subject_and_judge(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        assert {"scripted-firm", "scripted-judge"} <= {b["model"] for b in server.seen.requests}
        # attribution headers on every call (app attribution page), OpenRouter's only
        assert all(h.get("http-referer") and h.get("x-title") for h in server.headers_seen)
        assert all("usage" not in body for body in server.seen.requests)
        judge = _bodies(server, "scripted-judge")
        assert judge and all(b["provider"]["require_parameters"] is True for b in judge)
    assert _rows("SELECT COUNT(*) FROM judgments WHERE status = 'scored'") == [(1,)]


def test_without_require_parameters_the_emulated_provider_ignores_the_schema(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emulator's side of the point above: a judge call without `require_parameters` gets a
    provider that drops the schema, so the run would have been judged on prose."""
    with emulated(monkeypatch, OpenRouterScript()) as server:
        import urllib.request

        body = {"model": JUDGE, "messages": [{"role": "user", "content": "x"}],
                "response_format": {"type": "json_object"}}  # fmt: skip
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            content = json.loads(reply.read())["choices"][0]["message"]["content"]
        assert not content.lstrip().startswith("{")


def test_a_server_that_is_not_openrouter_is_sent_no_openrouter_field(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emulator reached by `--base-url` without `OPENROUTER_BASE_URL` is just a server:
    it gets no reasoning, provider or transforms field and no attribution header; a reasoning
    effort it documents no field for is refused before anything is sent (issue 36)."""
    routed = f"models:\n  - id: {SUBJECT}\n    provider: {{only: [alpha], sort: price}}\n"
    Path("models.yaml").write_text(routed + f"judge:\n  id: {JUDGE}\n", encoding="utf-8")
    Path("effort.yaml").write_text(
        routed + "    reasoning_effort: high\n" + f"judge:\n  id: {JUDGE}\n", encoding="utf-8"
    )
    with MockOpenRouter() as server:
        monkeypatch.setenv(GENERIC_KEY_ENV, "local-key")
        refused = aib("run", "--config", "effort.yaml", "--base-url", server.base_url, *QUICK)
        assert refused.code == 2 and not server.seen.requests
        assert refused.err.count("\n") == 1
        assert "reasoning effort high cannot be sent to" in refused.err
        aib("run", "--config", "models.yaml", "--base-url", server.base_url, *QUICK)
        assert not is_openrouter_endpoint(server.base_url, {})
        assert {"scripted-firm", "scripted-judge"} <= {b["model"] for b in server.seen.requests}
        for body in server.seen.requests:
            assert not {"reasoning", "provider", "usage", "transforms"} & set(body)
        assert all("http-referer" not in h and "x-title" not in h for h in server.headers_seen)


def test_base_url_equal_to_the_variable_is_openrouter_too(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        args = ("--reasoning-effort", "low", "--base-url", server.base_url)
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *args, *QUICK)
        assert result.code == 0, result.err
        assert all(b["reasoning"] == {"effort": "low"} for b in _bodies(server, "scripted-firm"))


def test_a_reply_cut_off_in_band_is_retried_never_stored_nor_judged(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    shorten_backoff(monkeypatch)
    with emulated(monkeypatch, OpenRouterScript(inband_errors=1)):
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
    replies = _rows("SELECT body FROM texts")
    assert not any(CUT_REPLY in str(text) for (text,) in replies)
    assert _rows("SELECT finish_reason FROM completions WHERE finish_reason = 'error'") == []


def test_a_judge_reply_cut_off_in_band_is_retried_never_scored(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    shorten_backoff(monkeypatch)
    with emulated(monkeypatch, OpenRouterScript(inband_errors=1, inband_judge=True)) as server:
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        assert len(_bodies(server, "scripted-judge")) == 2  # the cut one and its retry
    assert _rows("SELECT status, attempts FROM judgments") == [("scored", 1)]
    assert not any(CUT_REPLY in str(text) for (text,) in _rows("SELECT body FROM texts"))


def _run_api(
    server: MockOpenRouter, scenarios: tuple[str, ...] = ("direct",)
) -> tuple[int, list[str]]:
    lines: list[str] = []
    env = {BASE_URL_ENV: server.base_url, KEY_ALIAS_ENV: "sk-or-test", FREE_RPM_ENV: "60000"}
    options = RunOptions(
        models=SUBJECT,
        judge=JUDGE,
        runs=1,
        scenarios=scenarios,
        data_dir=Path("d"),
        env=env,
        retry=FAST,
        show_progress=False,
    )
    return run_command(options, echo=lines.append), lines


def test_an_inband_error_that_persists_fails_the_conversation_with_its_message(
    aib: Any,
) -> None:
    with MockOpenRouter(OpenRouterScript(inband_errors=100)) as server:
        status, _ = _run_api(server)
        assert len(_bodies(server, "scripted-judge")) == 0  # never judged
    assert status == 3
    errors = _rows("SELECT error FROM items WHERE status = 'failed'")
    assert len(errors) == 1
    assert "Provider returned error" in errors[0][0] and "provider Alpha" in errors[0][0]
    assert "upstream connection reset" in errors[0][0]


def test_a_later_turn_cut_off_in_band_keeps_the_turns_answered_before(aib: Any) -> None:
    script = OpenRouterScript(inband_errors=100, inband_after=1)
    with MockOpenRouter(script) as server:
        status, _ = _run_api(server, scenarios=("name_gender",))
    assert status == 3
    ((error, transcript),) = _rows("SELECT error, transcript_json FROM items")
    assert error.startswith("turn 2: ") and "Provider returned error" in error
    assert len(json.loads(transcript)) == 1  # turn 1, answered before the cut, is kept


@pytest.mark.parametrize("choice", [True, False])
def test_an_inband_key_error_stops_the_run_without_retries(aib: Any, choice: bool) -> None:
    script = OpenRouterScript(inband_errors=100, inband_code=401, inband_choice=choice)
    with MockOpenRouter(script) as server:
        from independence_bench.errors import UserError

        with pytest.raises(UserError, match="rejected the API key"):
            _run_api(server)
        assert len(_bodies(server, "scripted-firm")) == 1


def test_reasoning_none_is_sent_and_details_are_stored_and_passed_back(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, "--reasoning-effort", "none",
                     *QUICK[:-2], "--data-dir", "none")  # fmt: skip
        assert result.code == 0, result.err
        subject = _bodies(server, "scripted-firm")
        assert subject and all(b["reasoning"] == {"effort": "none"} for b in subject)
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, "--reasoning-effort", "xhigh",
                     "--scenarios", "name_gender", *QUICK[2:])  # fmt: skip
        assert result.code == 0, result.err
        passed_back = [
            m["reasoning_details"]
            for b in _bodies(server, "scripted-firm")
            for m in b["messages"]
            if "reasoning_details" in m
        ]
    assert passed_back, "the second turn carries the first reply's reasoning blocks"
    assert [b["type"] for b in passed_back[0]] == ["reasoning.text", "reasoning.encrypted"]
    stored = _rows(
        "SELECT reasoning, reasoning_tokens, reasoning_details_json, generation_id, "
        "native_finish_reason, served_by FROM completions WHERE reasoning IS NOT NULL"
    )
    assert stored
    reasoning, tokens, details, generation, native, provider = stored[0]
    assert reasoning.startswith("Weighing the request") and tokens == 7
    assert len(json.loads(details)) == 2
    assert generation.startswith("gen-") and native == "end_turn" and provider == "Alpha"


def test_byok_cost_is_fee_plus_upstream(aib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with emulated(monkeypatch, OpenRouterScript(byok=True)):
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
    ((cost, prompt, completion),) = _rows(
        "SELECT cost_usd, prompt_tokens, completion_tokens FROM completions LIMIT 1"
    )
    assert cost == pytest.approx(1.05 * 1e-6 * (prompt + completion))


def test_a_model_on_a_later_page_of_models_is_found(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    last = catalog()[-1]["id"]
    assert last.endswith(":free")
    with emulated(monkeypatch, OpenRouterScript(page_size=3)) as server:
        result = aib("estimate", "--models", last, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        assert server.seen.model_lists > 3


def test_estimate_uses_request_reasoning_and_pinned_provider_prices(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: {SUBJECT}\n    provider: [beta]\n"
        f"  - id: {SUBJECT}\n    label: unpinned\n",
        encoding="utf-8",
    )
    with emulated(monkeypatch, OpenRouterScript()):
        result = aib("estimate", "--config", "models.yaml", "--judge", JUDGE, *QUICK)
    assert result.code == 0, result.err
    assert "beta's price" in result.out
    pinned = next(line for line in result.out.splitlines() if line.startswith(SUBJECT + "+beta"))
    plain = next(line for line in result.out.splitlines() if line.startswith("unpinned"))
    money = [float(x.strip("$").replace(",", "")) for x in pinned.split() if x.startswith("$")]
    base = [float(x.strip("$").replace(",", "")) for x in plain.split() if x.startswith("$")]
    assert money[0] == pytest.approx(3 * base[0], rel=0.01)  # Beta costs three times Alpha
    assert money[1] > money[0]  # reasoning priced above output in the upper bound


def test_provider_object_is_sent_as_given(aib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: {SUBJECT}\n    provider: {{only: [beta], sort: price, "
        "data_collection: deny, quantizations: [fp8], allow_fallbacks: false}\n"
        f"    reasoning_effort: {{max_tokens: 500, exclude: true}}\n",
        encoding="utf-8",
    )
    with emulated(monkeypatch, OpenRouterScript()) as server:
        result = aib("run", "--config", "models.yaml", "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        bodies = _bodies(server, "scripted-firm")
    given = {"only": ["beta"], "sort": "price", "data_collection": "deny",
             "quantizations": ["fp8"], "allow_fallbacks": False}  # fmt: skip
    # v2 asks in tool_role: a request with tools asks only for providers that take them
    # (issue 36), the rest of the object as given.
    assert bodies and all("tools" in b for b in bodies)
    assert all(b["provider"] == {**given, "require_parameters": True} for b in bodies)
    body = bodies[0]
    assert body["reasoning"] == {"max_tokens": 500, "exclude": True}
    assert _rows("SELECT DISTINCT served_by FROM completions WHERE reasoning IS NULL") != []


def test_a_free_models_daily_cap_stops_that_model_in_one_line(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript(free_daily_cap=1)) as server:
        result = aib("run", "--models", SUBJECT + ":free", "--judge", JUDGE,
                     "--scenarios", "direct,name_gender", *QUICK[2:])  # fmt: skip
        capped = len(_bodies(server, "scripted-firm"))
    assert result.code == 3
    assert "rate limit of 1 requests used up until" in result.out + result.err
    assert capped == 1  # one answered; the capped 429s are not retried
    assert (result.out + result.err).count("rate limit of 1 requests used up") == 1


def test_a_402_with_retry_after_waits_then_goes_on(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    shorten_backoff(monkeypatch)  # Retry-After: 0 is kept; only the backoff is shortened
    with emulated(monkeypatch, OpenRouterScript(credits_402=1)):
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
    assert result.code == 0, result.err


def test_attribution_can_be_turned_off(aib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        monkeypatch.setenv(REFERER_ENV, "")
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        assert all("http-referer" not in h for h in server.headers_seen)


def test_the_viewer_shows_generation_id_native_finish_and_provider(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()):
        result = aib("run", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
    result = aib("view", "--data-dir", "d", "--out", "v", "--resamples", "100")
    assert result.code == 0, result.err
    data = "".join(p.read_text(encoding="utf-8") for p in Path("v", "data").rglob("*.js"))
    assert "gen-1" in data and "end_turn" in data and "Alpha" in data
    for field in ("native_finish", "generation", "reasoning_tokens"):
        assert field in data  # the model file's field table names them
    app = Path("v", "app.js").read_text(encoding="utf-8")
    assert "turn.native_finish" in app and "turn.generation" in app


def test_estimate_needs_no_key_and_says_its_prices_are_openrouters_public_list(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        monkeypatch.delenv(KEY_ALIAS_ENV)
        result = aib("estimate", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
        assert result.code == 0, result.err
        assert server.listed_with_key and not any(server.listed_with_key)
        assert server.seen.request_count == 0  # no chat call, only the list
    rows = [line for line in result.out.splitlines() if line.startswith((SUBJECT, "judge "))]
    assert len(rows) == 2
    assert all(row.endswith("OpenRouter's public model list") for row in rows), rows
    assert "unknown" not in result.out


def test_an_id_without_provider_prefix_is_told_the_id_form(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript()) as server:
        result = aib("estimate", "--models", "scripted-firm", "--judge", JUDGE, *QUICK)
        assert server.seen.request_count == 0
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert "does not list model 'scripted-firm'" in line
    assert "OpenRouter ids read provider/model, e.g. openai/gpt-4o-mini" in line


def test_a_list_that_wants_a_key_leaves_a_keyless_estimates_prices_unknown(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gateway in OPENROUTER_BASE_URL may want a key for its list, unlike OpenRouter."""
    with emulated(monkeypatch, OpenRouterScript()) as server:
        monkeypatch.delenv(KEY_ALIAS_ENV)
        # Under /private every route wants a key, the model list too: a 401 without one.
        monkeypatch.setenv(BASE_URL_ENV, server.base_url + "/private")
        result = aib("estimate", "--models", SUBJECT, "--judge", JUDGE, *QUICK)
    assert result.code == 0, result.err
    assert "rejected" not in result.out + result.err
    assert "(2 prices unknown)" in result.out
