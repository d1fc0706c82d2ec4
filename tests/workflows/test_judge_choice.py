"""The judge of a run is chosen in one place (`plan.choose_judge`): a local model named without
`--judge` is judged on this machine, a key never silently turns the offline default off, and
every missing-key line names the flag that avoids it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.local.local_models import DEFAULT_SUBJECT, LocalModels
from independence_bench.clients.local.weights import embedded_models
from independence_bench.errors import UserError
from independence_bench.gathering.standings import judge_standing
from independence_bench.judging.forms import judge_label_of
from independence_bench.workflows.plan import (
    DEFAULT_JUDGE,
    LOCAL_JUDGE,
    RunOptions,
    resolve_models,
)

SERVER = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    "options",
    [
        RunOptions(env={}, models="embedded:qwen2.5-coder-0.5b"),
        RunOptions(env={}, models="gguf:/models/x.gguf"),
        RunOptions(env={}, models="hf:owner/repo/file.gguf"),
        RunOptions(env={}, models="llama3.1:8b", base_url=SERVER),
        # A key does not send local models' transcripts to OpenRouter either.
        RunOptions(env={"OPENROUTER_API_KEY": "k"}, models="embedded:qwen2.5-coder-0.5b"),
        RunOptions(env={"OPENROUTER_API_KEY": "k"}, offline=True),
    ],
    ids=["embedded", "gguf", "hf", "base-url", "embedded-with-key", "offline-with-key"],
)
def test_a_run_with_no_model_on_openrouter_is_judged_on_this_machine(options: RunOptions) -> None:
    _, judge = resolve_models(options)
    assert judge is not None and judge.id == LOCAL_JUDGE and judge.base_url is None
    assert judge.temperature == 0.0 and judge.max_tokens == 1024
    standing = judge_standing(None, judge_label_of(judge))
    assert standing.kind == "smoke test" and standing.index_rho is not None


def test_a_model_on_openrouter_keeps_the_strong_default_judge() -> None:
    _, judge = resolve_models(RunOptions(env={}, models="embedded:qwen2.5-coder-0.5b,openai/x"))
    assert judge is not None and judge.id == DEFAULT_JUDGE


def test_a_judge_endpoint_without_a_judge_model_is_refused() -> None:
    with pytest.raises(UserError, match="--judge is required with --judge-base-url"):
        resolve_models(RunOptions(env={}, models="m", base_url=SERVER, judge_base_url=SERVER))


def test_an_unknown_embedded_name_is_its_own_line_listing_the_shipped_ones(aib: Any) -> None:
    result = aib("estimate", "--models", "embedded:qwen2.5-coder-9b", "--data-dir", "d")
    assert result.code == 2
    shipped = ", ".join(embedded_models())
    assert result.err.strip().splitlines() == [
        f"aib: error: unknown embedded model 'embedded:qwen2.5-coder-9b'; the shipped ones are: "
        f"{shipped}"
    ]


def test_an_unknown_embedded_judge_is_refused_the_same_way() -> None:
    with pytest.raises(UserError, match="unknown embedded model 'embedded:nope'; the shipped"):
        resolve_models(RunOptions(env={}, models=DEFAULT_SUBJECT, judge="embedded:nope"))


def test_estimate_of_an_embedded_model_needs_no_key(aib: Any) -> None:
    result = aib("estimate", "--models", DEFAULT_SUBJECT, "--scenarios", "direct")
    assert result.code == 0, result.err
    judge_line = next(line for line in result.out.splitlines() if line.startswith("judge "))
    assert judge_line.split()[1] == LOCAL_JUDGE and judge_line.endswith("  local")


def test_a_key_with_nothing_named_says_it_turned_the_offline_default_off(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    result = aib("run", "--scenarios", "direct", "--data-dir", "d")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert "$OPENROUTER_API_KEY is set, which turns the offline default off" in line
    assert "add --offline" in line
    assert not Path("d").exists()


def test_offline_with_a_key_plans_the_embedded_pair_and_says_so(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    specs, judge = resolve_models(RunOptions(env={"OPENROUTER_API_KEY": "k"}, offline=True))
    assert [s.id for s in specs] == [DEFAULT_SUBJECT] and judge is not None
    assert judge.id == LOCAL_JUDGE
    refused = aib("run", "--offline", "--models", "openai/gpt-4o-mini", "--data-dir", "d")
    assert refused.code == 2
    assert "--offline runs only models on this machine" in refused.err


def test_the_unknown_suite_is_said_before_the_offline_banner(aib: Any) -> None:
    result = aib("run", "--suite", "v4", "--data-dir", "d")
    assert result.code == 2
    assert result.out == ""  # no banner first
    assert "unknown suite 'v4'" in result.err


@pytest.mark.parametrize(
    ("given", "flag"),
    [
        (("--models", "openai/gpt-4o-mini"), f"--models {DEFAULT_SUBJECT}"),
        (("--preset", "budget"), f"--models {DEFAULT_SUBJECT}"),
        (("--models", DEFAULT_SUBJECT, "--judge", "openai/gpt-4o-mini"), f"--judge {LOCAL_JUDGE}"),
    ],
)
def test_every_missing_key_line_names_the_exact_flag_that_avoids_it(
    given: tuple[str, ...], flag: str, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[str] = []

    async def record(self: LocalModels, specs: Any) -> None:
        loaded.extend(s.id for s in specs)

    monkeypatch.setattr(LocalModels, "load_all", record)
    result = aib("run", *given, "--scenarios", "direct", "--data-dir", "d")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert "$OPENROUTER_API_KEY (or $OPENROUTER_KEY) is not set" in line
    assert flag in line, line
    assert loaded == [] and not Path("d").exists()


def test_a_model_id_without_provider_prefix_gets_a_hint_about_the_id_form(aib: Any) -> None:
    result = aib("run", "--models", "gpt-4o-mini", "--data-dir", "d")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert "'gpt-4o-mini' has no provider prefix" in line
    assert re.search(r"provider/model, e\.g\. openai/gpt-4o-mini", line)


def test_aib_judge_without_a_key_names_the_local_judge_flag(aib: Any) -> None:
    result = aib("judge", "--judge", "openai/gpt-4o-mini", "--data-dir", "d")
    assert result.code == 2
    assert f"--judge {LOCAL_JUDGE}" in result.err
