"""Issue 36: what a run costs, told right before and paid once — whole runs on the OpenRouter
emulator billing as documented (`support/emulate_billing.py`).

Prompt caching where the provider documents it (breakpoints for Anthropic, nothing for
automatic families, `--no-prompt-cache`, the request keys unchanged), cache usage stored and
shown, `aib estimate` within 10% of the bill in each pricing case, the credit check against
`GET /key`, and `transforms: []`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.openrouter import BASE_URL_ENV, FREE_RPM_ENV, KEY_ALIAS_ENV
from independence_bench.gathering.spend import run_spend
from independence_bench.store.store import Store
from support.mock_openrouter import MockOpenRouter, OpenRouterScript

SCENARIOS = ("--suite", "v3", "--scenarios", "escalation_pref_city,psych", "--runs", "1")
STORE = ("--data-dir", "d")
TOOL_SCENARIOS = (
    "--suite",
    "full",
    "--scenarios",
    "direct",
    "--variants",
    "neutral",
    "--runs",
    "1",
)
"""`full` asks in both delivery modes (v3 in user_role only, v2 in tool_role only)."""
BILLING = OpenRouterScript(bill=True, reply_tokens=250, judge_reply_tokens=400)


@contextmanager
def emulated(monkeypatch: pytest.MonkeyPatch, script: OpenRouterScript) -> Iterator[MockOpenRouter]:
    with MockOpenRouter(script) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(KEY_ALIAS_ENV, "sk-or-test")
        monkeypatch.setenv(FREE_RPM_ENV, "60000")
        yield server


def _models(family: str) -> tuple[str, ...]:
    return ("--models", f"{family}/scripted-firm", "--judge", f"{family}/scripted-judge")


def _billed(label: str, judge: str) -> tuple[float, float]:
    """What the stored calls of `label`'s run and its judging cost."""
    with Store(Path("d"), read_only=True) as store:
        (run,) = store.runs("v3")
        spend = run_spend(
            store, suite_id="v3", suite_hash=run.suite_hash, labels=[label], judge=judge
        )
    assert spend.models.usd and spend.judge.usd
    return spend.models.usd, spend.judge.usd


def _estimated(out: str, label: str) -> float:
    row = next(line for line in out.splitlines() if line.startswith(label + " "))
    return float(next(x for x in row.split() if x.startswith("$")).strip("$").replace(",", ""))


CASES = [
    ("no caching", "anthropic", False, ("--no-prompt-cache",), "no caching"),
    ("automatic caching", "openai", False, (), "automatic caching (≥ 1,024 tokens)"),
    ("explicit caching", "anthropic", False, (), "explicit caching, cache_control"),
    ("bring your own key", "anthropic", True, (), "explicit caching, cache_control"),
    ("reasoning tokens", "openai", False, ("--reasoning-effort", "high"),
     "reasoning 1,638 tokens a reply"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "family", "byok", "extra", "words"), CASES)
def test_the_estimate_is_within_ten_percent_of_the_bill_in_each_pricing_case(
    case: str,
    family: str,
    byok: bool,
    extra: tuple[str, ...],
    words: str,
    aib: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = OpenRouterScript(bill=True, reply_tokens=250, judge_reply_tokens=400, byok=byok)
    with emulated(monkeypatch, script):
        estimate = aib("estimate", *_models(family), *SCENARIOS, *STORE, *extra)
        assert estimate.code == 0, estimate.err
        result = aib("run", *_models(family), *SCENARIOS, *STORE, *extra)
        assert result.code == 0, result.err
    label = f"{family}/scripted-firm" + ("@high" if "--reasoning-effort" in extra else "")
    subject_line = next(x for x in estimate.out.splitlines() if x.startswith(f"  {label}:"))
    assert words in subject_line, case
    if byok:
        assert "bring-your-own-key call adds OpenRouter's fee" in estimate.out
    model_usd, judge_usd = _billed(label, f"{family}/scripted-judge")
    assert _estimated(estimate.out, label) == pytest.approx(model_usd, rel=0.10), case
    judge_estimate = _estimated(estimate.out, f"judge {family}/scripted-judge")
    assert judge_estimate == pytest.approx(judge_usd, rel=0.10), case


def test_breakpoints_go_only_to_models_that_need_them_and_never_change_what_is_stored(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, BILLING) as server:
        assert aib("run", *_models("anthropic"), *SCENARIOS, *STORE).code == 0
        bodies = server.bodies_seen
        # The same run without breakpoints asks for the same calls: all stored, none sent.
        again = aib("run", *_models("anthropic"), *SCENARIOS, *STORE, "--no-prompt-cache")
        assert again.code == 0, again.err
        assert len(server.bodies_seen) == len(bodies)
    assert all(b["transforms"] == [] for b in bodies)  # no silent middle-out compression
    subject = [b for b in bodies if b["model"] == "anthropic/scripted-firm"]
    judge = [b for b in bodies if b["model"] == "anthropic/scripted-judge"]

    def marked(body: dict[str, Any]) -> list[int]:
        return [
            i
            for i, m in enumerate(body["messages"])
            if isinstance(m.get("content"), list) and "cache_control" in m["content"][-1]
        ]

    # prompt-caching page, Anthropic: breakpoints on the system prompt and the conversation.
    assert len(subject) == 11 and len(judge) == 2
    assert all(marked(b) == [0, len(b["messages"]) - 1] for b in subject)
    assert all(marked(b) == [0] for b in judge)  # the judge's fixed instructions only
    with emulated(monkeypatch, BILLING) as server:
        uncached = aib("run", *_models("anthropic"), *SCENARIOS, "--data-dir", "e",
                       "--no-prompt-cache")  # fmt: skip
        assert uncached.code == 0, uncached.err
        assert server.bodies_seen and not any(marked(b) for b in server.bodies_seen)
        assert aib("run", *_models("openai"), *SCENARIOS, "--data-dir", "f").code == 0
        automatic = [b for b in server.bodies_seen if b["model"].startswith("openai/")]
    assert automatic and not any(marked(b) for b in automatic)  # OpenAI caches on its own


def test_cache_use_is_stored_per_call_and_shown_in_the_spend_line_and_report(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, BILLING):
        result = aib("run", *_models("anthropic"), *SCENARIOS, *STORE)
    assert result.code == 0, result.err
    with Store(Path("d"), read_only=True) as store:
        calls = [store.get_completion(k) for k in store.completion_keys()]
    subject = [c for c in calls if c and c.answered_model == "anthropic/scripted-firm"]
    assert sum(c.cached_tokens or 0 for c in subject) > 0
    assert sum(c.cache_write_tokens or 0 for c in subject) > 0
    assert any((c.cache_discount or 0) < 0 for c in subject)  # a write costs more than input
    spend = next(line for line in result.out.splitlines() if line.startswith("total spend"))
    assert "prompt cache:" in spend and "tokens read" in spend and "uncached" in spend
    report = aib("report", *STORE, "--no-charts", "--resamples", "200")
    assert report.code == 0, report.err
    markdown = Path("d/report/LEADERBOARD.md").read_text("utf-8")
    assert "### Cost and prompt caching" in markdown
    row = next(x for x in markdown.splitlines() if x.startswith("| anthropic/scripted-firm |"))
    billed, uncached, saved = (float(c.strip(" $-")) for c in row.split("|")[2:5])
    assert uncached > billed and saved == pytest.approx(uncached - billed, abs=2e-4)
    document = json.loads(Path("d/report/results.json").read_text("utf-8"))
    (model,) = document["suites"][0]["models"]
    assert model["cached_tokens"] == sum(c.cached_tokens or 0 for c in subject)
    assert model["uncached_cost_usd"] == pytest.approx(model["cost_usd"] + model["cache_saved_usd"])
    assert document["suites"][0]["judge_cache"]["cached_tokens"] >= 0


def test_a_run_larger_than_the_keys_credit_stops_before_any_call_unless_allowed(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = OpenRouterScript(bill=True, limit_remaining=0.005)
    with emulated(monkeypatch, short) as server:
        refused = aib("run", *_models("openai"), *SCENARIOS, *STORE)
        assert refused.code == 2 and not server.bodies_seen  # nothing sent
        assert refused.err.count("\n") == 1
        assert "of credit left (GET /key limit_remaining)" in refused.err
        assert "--allow-partial" in refused.err and "it would pay for about" in refused.err
        allowed = aib("run", *_models("openai"), *SCENARIOS, *STORE, "--allow-partial")
        assert allowed.code == 0, allowed.err
        assert "running that much (--allow-partial)" in allowed.out
    unlimited = OpenRouterScript(bill=True, limit_remaining=None)  # null: no limit
    with emulated(monkeypatch, unlimited):
        result = aib("run", *_models("openai"), *SCENARIOS, "--data-dir", "e")
        assert result.code == 0, result.err
        assert "credit" not in result.out


def test_a_prompt_over_the_context_fails_with_one_line_instead_of_being_shortened(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript(context_length=1200)):
        result = aib("run", *_models("acme"), *SCENARIOS, *STORE)
    assert result.code == 3
    assert "the prompt is longer than the context of acme/scripted-firm" in result.out
    assert "maximum context length is 1200 tokens" in result.out


def test_a_reply_from_another_model_is_flagged_in_runs(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript(answer_as="acme/cheaper-model")):
        assert aib("run", *_models("acme"), *SCENARIOS, *STORE).code == 0
    runs = aib("runs", *STORE)
    assert "by another model" in runs.out
    assert "acme/scripted-firm → acme/cheaper-model" in runs.out
    # The viewer flags it on the turn: its data carries the answering model (`answered_by`).
    assert aib("view", *STORE, "--out", "v", "--resamples", "100").code == 0
    data = "".join(p.read_text("utf-8") for p in Path("v").rglob("*.js"))
    assert "acme/cheaper-model" in data and "not the model asked" in data
    with emulated(monkeypatch, OpenRouterScript()):
        assert aib("run", *_models("acme"), *SCENARIOS, "--data-dir", "e").code == 0
    assert "another model" not in aib("runs", "--data-dir", "e").out


def test_tools_go_only_to_providers_that_take_them_or_the_run_stops_with_one_line(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with emulated(monkeypatch, OpenRouterScript(no_tool_providers=True)) as server:
        stopped = aib("run", *_models("acme"), *TOOL_SCENARIOS, *STORE)
        assert stopped.code == 2
        assert [x for x in stopped.err.splitlines() if not x.startswith("progress:")] == [
            stopped.err.splitlines()[-1]
        ]
        assert "no OpenRouter provider takes tool calls for acme/scripted-firm" in stopped.err
        assert "--modes user_role" in stopped.err
        tools = [b for b in server.bodies_seen if "tools" in b]
        assert tools and all(b["provider"]["require_parameters"] is True for b in tools)
        plain = aib("run", *_models("acme"), *TOOL_SCENARIOS, *STORE, "--modes", "user_role")
        assert plain.code == 0, plain.err
