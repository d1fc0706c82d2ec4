"""Which models a run uses when nothing is named: the embedded ones, only without a key."""

from __future__ import annotations

from typing import Any

from independence_bench.clients.local.local_models import DEFAULT_SUBJECT, LocalModels
from independence_bench.workflows.plan import LOCAL_JUDGE, RunOptions, offline_run, resolve_models


def test_no_models_and_no_key_means_the_embedded_subject_and_judge() -> None:
    options = RunOptions(env={})
    assert offline_run(options)
    specs, judge = resolve_models(options)
    assert [s.id for s in specs] == [DEFAULT_SUBJECT]
    assert judge is not None and judge.id == LOCAL_JUDGE and judge.temperature == 0.0
    assert specs[0].seed == 0  # seeded, so a run is reproducible on the same build


def test_a_key_an_endpoint_or_named_models_turn_the_offline_default_off() -> None:
    assert not offline_run(RunOptions(env={"OPENROUTER_API_KEY": "k"}))
    assert not offline_run(RunOptions(env={}, base_url="http://127.0.0.1:1/v1"))
    assert not offline_run(RunOptions(env={}, models="a"))


def test_local_clients_are_made_once_per_model_and_only_for_local_names() -> None:
    specs, judge = resolve_models(RunOptions(env={}))
    assert judge is not None
    local = LocalModels((*specs, judge), {})
    (factory,) = local.factories()
    first = factory(specs[0])
    again = factory(specs[0])
    assert first is not None and again is not None
    assert first[1] is again[1] and first[2] == 1
    assert factory(specs[0].model_copy(update={"id": "openai/gpt-4o-mini"})) is None
    assert LocalModels((), {}).factories() == ()


def test_aib_judge_takes_a_local_judge_as_aib_run_does(server: Any, aib: Any) -> None:
    run = aib(
        "run", "--models", "scripted-firm", "--judge", "scripted-judge", "--base-url",
        server.base_url, "--runs", "1", "--scenarios", "direct", "--data-dir", "store",
    )  # fmt: skip
    assert run.code == 0, run.err
    judged = aib("judge", "--judge", "gguf:missing.gguf", "--data-dir", "store")
    # The local judge is resolved (here: its file is missing), not sent to OpenRouter.
    assert judged.code == 2
    assert "OPENROUTER_API_KEY" not in judged.err
    assert "missing.gguf" in judged.err or "offline" in judged.err


def test_a_missing_key_for_a_remote_judge_is_named_before_a_local_model_loads(
    aib: Any, monkeypatch: Any
) -> None:
    loaded: list[str] = []

    async def record(self: LocalModels, specs: Any) -> None:
        loaded.extend(s.id for s in specs)

    monkeypatch.setattr(LocalModels, "load_all", record)
    result = aib(
        "run", "--models", DEFAULT_SUBJECT, "--judge", "openai/gpt-4o-mini",
        "--scenarios", "direct", "--data-dir", "store",
    )  # fmt: skip
    assert result.code == 2
    assert "OPENROUTER_API_KEY" in result.err
    assert loaded == []  # loading takes minutes; the key is checked first
