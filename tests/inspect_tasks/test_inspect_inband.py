"""A reply cut off in-band through `inspect eval` with Inspect's `openrouter/` provider, against
the OpenRouter emulator (`support/mock_openrouter.py`): the solver asks again (the check
`aib run` makes, `messages.cut_off`), never keeps or scores a cut reply, and a conversation
every attempt of which is cut fails with the error. Skipped without the `[inspect]` extra."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, get_model

from independence_bench.inspect_tasks.log_format import TRANSCRIPT_KEY
from independence_bench.inspect_tasks.messages import cut_off
from independence_bench.inspect_tasks.solver import REPLY_ATTEMPTS
from independence_bench.store.store import Store
from support.mock_openrouter import CUT_REPLY, MockOpenRouter, OpenRouterScript

SHAPES = ("finish_only", "finish_upper", "choice_text")
"""The shapes Inspect's `openrouter/` provider passes on as a reply (`error` objects at the top
it raises on itself)."""
GRADER = "openrouter/acme/scripted-judge-graded"


@pytest.fixture(scope="module")
def emulator() -> Iterator[MockOpenRouter]:
    """One emulator for the module: Inspect keeps a model (and the base URL it read) per name."""
    with MockOpenRouter() as server:
        yield server


@pytest.fixture()
def openrouter(
    emulator: MockOpenRouter, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> MockOpenRouter:
    """The emulator as Inspect's `openrouter/` provider finds it (after `aib` cleared keys)."""
    monkeypatch.setenv("OPENROUTER_BASE_URL", emulator.base_url)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    return emulator


def _eval(log_dir: Path) -> EvalLog:
    [log] = inspect_eval(
        "independence_bench/v2",
        model="openrouter/acme/scripted-firm",
        # provider routing page: a provider keeps to the judge's schema with `require_parameters`.
        model_roles={"grader": get_model(GRADER, provider={"require_parameters": True})},
        task_args={"scenarios": "negotiation"},
        log_dir=str(log_dir),
        display="none",
        max_retries=2,
        timeout=60,
    )
    assert log.status == "success", log.error
    return log


def _subject_calls(server: MockOpenRouter) -> int:
    return len([b for b in server.seen.requests if b.get("model") == "scripted-firm"])


@pytest.mark.parametrize("shape", SHAPES)
def test_a_cut_reply_is_asked_again_and_never_kept(
    openrouter: MockOpenRouter, tmp_path: Path, aib: Any, shape: str
) -> None:
    openrouter.play(OpenRouterScript(inband_errors=1, inband_shape=shape))
    log = _eval(tmp_path / "logs")
    assert log.samples is not None
    [sample] = log.samples
    record = sample.store[TRANSCRIPT_KEY]
    assert record["status"] == "done", record["error"]
    turns = len(record["turns"])
    assert _subject_calls(openrouter) == turns + 1  # the cut one, asked again
    assert all(CUT_REPLY not in t["reply"] for t in record["turns"])
    imported = aib("import", str(tmp_path / "logs"), "--data-dir", "store")
    assert imported.code == 0, imported.err
    with Store(Path("store")) as store:
        [judgment] = store.judgments()
        assert judgment.status == "scored"


def test_a_conversation_cut_every_time_fails_and_is_not_judged(
    openrouter: MockOpenRouter, tmp_path: Path, aib: Any
) -> None:
    openrouter.play(OpenRouterScript(inband_errors=100, inband_shape="finish_only"))
    log = _eval(tmp_path / "logs")
    assert log.samples is not None
    [sample] = log.samples
    record = sample.store[TRANSCRIPT_KEY]
    assert record["status"] == "failed" and record["turns"] == []
    assert record["error"].startswith("turn 1: in-band error")
    assert _subject_calls(openrouter) == REPLY_ATTEMPTS
    assert not [b for b in openrouter.seen.requests if "judge" in str(b.get("model"))]
    imported = aib("import", str(tmp_path / "logs"), "--data-dir", "store")
    assert imported.code == 0, imported.err
    assert "1 conversation (1 failed), 0 judgments" in imported.out
    with Store(Path("store")) as store:
        assert store.judgments() == []


def _output(stop_reason: Any) -> ModelOutput:
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=CUT_REPLY), stop_reason=stop_reason
    )
    return ModelOutput(model="m", choices=[choice])


def test_inspects_stop_reason_for_error_is_cut_and_the_raw_body_is_read() -> None:
    assert cut_off(_output("unknown")) is not None
    assert cut_off(_output("stop")) is None
    assert cut_off(_output("max_tokens")) is None
    raw = {"choices": [{"message": {"content": CUT_REPLY}, "finish_reason": "stop"}]}
    assert cut_off(_output("stop"), raw) is None
    assert cut_off(_output("stop"), {**raw, "error": "text"}) is not None


def test_a_verdict_cut_off_is_asked_again_and_never_scored(
    openrouter: MockOpenRouter, tmp_path: Path, aib: Any
) -> None:
    script = OpenRouterScript(inband_errors=1, inband_shape="finish_upper", inband_judge=True)
    openrouter.play(script)
    _eval(tmp_path / "logs")
    judge_calls = [b for b in openrouter.seen.requests if "judge" in str(b.get("model"))]
    assert len(judge_calls) == 2  # the cut verdict and the one asked again
    assert aib("import", str(tmp_path / "logs"), "--data-dir", "store").code == 0
    with Store(Path("store")) as store:
        [judgment] = store.judgments()
        assert judgment.status == "scored" and judgment.attempts == 1  # no repair asked
