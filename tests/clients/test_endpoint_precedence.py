"""One endpoint rule for tested models and judges: the command line's URL, else the models.yaml
entry's own, else OpenRouter — checked over loopback, with "OpenRouter" a second loopback
server that counts what reaches it, so a transcript sent anywhere else is seen."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.openrouter import BASE_URL_ENV
from independence_bench.workflows.plan import LOCAL_JUDGE, RunOptions, resolve_models
from support.mock_server import MockConfig, MockServer

SUBJECT = "scripted-firm"
JUDGE = "scripted-judge"
QUICK = ("--scenarios", "direct", "--runs", "1", "--data-dir", "d")


@pytest.fixture()
def default(aib: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    """A loopback server standing in for OpenRouter, the endpoint of a spec with no URL (after
    `aib`, which clears the keys)."""
    with MockServer(MockConfig()) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-key")
        yield server


@pytest.fixture()
def other() -> Iterator[MockServer]:
    with MockServer(MockConfig()) as server:
        yield server


def _models_yaml(model_url: str | None, judge_url: str | None, *, judge: bool = True) -> None:
    entry: dict[str, Any] = {"id": SUBJECT}
    judge_entry: dict[str, Any] = {"id": JUDGE}
    if model_url:
        entry["base_url"] = model_url
    if judge_url:
        judge_entry["base_url"] = judge_url
    data: dict[str, Any] = {"models": [entry]}
    if judge:
        data["judge"] = judge_entry
    Path("models.yaml").write_text(json.dumps(data), encoding="utf-8")


def _models_at(server: MockServer) -> set[str]:
    return {str(body.get("model")) for body in server.seen.requests}


def test_with_no_url_anywhere_the_default_endpoint_serves(default: MockServer, aib: Any) -> None:
    _models_yaml(None, None)
    result = aib("run", "--config", "models.yaml", *QUICK)
    assert result.code == 0, result.err
    assert _models_at(default) == {SUBJECT, JUDGE}  # the stand-in really is the default


def test_base_url_on_the_command_line_takes_the_judge_of_models_yaml_too(
    default: MockServer, server: MockServer, aib: Any
) -> None:
    _models_yaml(None, None)
    result = aib("run", "--config", "models.yaml", "--base-url", server.base_url, *QUICK)
    assert result.code == 0, result.err
    assert _models_at(server) == {SUBJECT, JUDGE}
    assert default.seen.request_count == 0, "a transcript went to the default endpoint"


def test_the_command_line_wins_over_the_entries_own_urls(
    default: MockServer, server: MockServer, other: MockServer, aib: Any
) -> None:
    _models_yaml(default.base_url, default.base_url)
    result = aib(
        "run",
        "--config",
        "models.yaml",
        "--base-url",
        server.base_url,
        "--judge-base-url",
        other.base_url,
        *QUICK,
    )
    assert result.code == 0, result.err
    assert _models_at(server) == {SUBJECT} and _models_at(other) == {JUDGE}
    assert default.seen.request_count == 0


def test_without_a_command_line_url_each_entry_keeps_its_own(
    default: MockServer, server: MockServer, other: MockServer, aib: Any
) -> None:
    _models_yaml(server.base_url, other.base_url)
    result = aib("run", "--config", "models.yaml", *QUICK)
    assert result.code == 0, result.err
    assert _models_at(server) == {SUBJECT} and _models_at(other) == {JUDGE}
    assert default.seen.request_count == 0


def test_models_on_their_own_endpoint_are_judged_on_this_machine(
    default: MockServer, server: MockServer
) -> None:
    _models_yaml(server.base_url, None, judge=False)
    env = {BASE_URL_ENV: default.base_url, "OPENROUTER_API_KEY": "k"}
    specs, judge = resolve_models(RunOptions(config_path=Path("models.yaml"), env=env))
    assert [s.base_url for s in specs] == [server.base_url]
    # The default judge is never on OpenRouter for models elsewhere: no transcript goes there.
    assert judge is not None and judge.id == LOCAL_JUDGE and judge.base_url is None


def test_aib_judge_sends_to_its_base_url_only(
    default: MockServer, server: MockServer, other: MockServer, aib: Any
) -> None:
    first = aib("run", "--models", SUBJECT, "--judge", JUDGE, "--base-url", server.base_url, *QUICK)
    assert first.code == 0, first.err
    asked = server.seen.request_count
    graded = "scripted-judge-graded"
    again = aib("judge", "--judge", graded, "--base-url", other.base_url, "--data-dir", "d")
    assert again.code == 0, again.err
    assert _models_at(other) == {"scripted-judge-graded"}
    assert server.seen.request_count == asked and default.seen.request_count == 0
