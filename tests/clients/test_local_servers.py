"""Whole runs against emulated vLLM, Ollama and LM Studio servers, subject and judge alike.

Each emulator (`tests/support/emulate_*.py`) answers as its server's documentation says: vLLM
started without its tool-call flags refuses every request with `tools`, Ollama refuses them for
a model without tool support, reasoning comes in `reasoning`, `reasoning_content` or as a
`<think>` block in the content, and each lists its models in its own shape. A run must end with
every conversation judged in both delivery modes, the reasoning kept apart from the reply, and
a refused `tools` field turned, after one refusal, into text tool calls counted as deviations.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.tool_prompt import instructions_digest
from independence_bench.store.store import Store
from support.mock_behaviours import FIRM_MARKER
from support.mock_emulator import THOUGHT
from support.mock_server import MockConfig, MockServer

SCENARIOS = "direct,stability_weather"
ITEMS = 2 * 2  # two scenarios, both delivery modes, one prompt variant
OPENROUTER_ONLY_FIELDS = frozenset({"usage", "provider", "reasoning", "transforms", "plugins"})
OPENROUTER_HEADERS = frozenset({"http-referer", "x-title"})


@pytest.fixture()
def emulated(request: pytest.FixtureRequest) -> Iterator[MockServer]:
    server, flags = request.param
    with MockServer(MockConfig(server=server, server_flags=flags)) as running:
        yield running


def _run(aib: Any, base_url: str, *extra: str) -> Any:
    return aib(
        "run", "--suite", "full", "--scenarios", SCENARIOS, "--variants", "neutral",
        "--models", "scripted-firm", "--judge", "scripted-judge", "--base-url", base_url,
        "--runs", "1", "--data-dir", "store", *extra,
    )  # fmt: skip


def _stored() -> tuple[list[Any], list[Any], list[Any]]:
    with Store(Path("store"), read_only=True) as store:
        items = store.items()
        judgments = store.judgments()
        completions = [store.get_completion(t.completion_key) for i in items for t in i.turns]
    return items, judgments, completions


CLEAN = [
    ("vllm", ("tool_parser",)),
    ("vllm", ("tool_parser", "reasoning")),
    ("vllm", ("tool_parser", "reasoning_content")),
    ("vllm", ("tool_parser", "think_in_content")),
    ("ollama", ()),
    ("ollama", ("thinking",)),
    ("lmstudio", ()),
    ("lmstudio", ("think_in_content",)),
    ("lmstudio", ("reasoning_content",)),
]


@pytest.mark.parametrize("emulated", CLEAN, indirect=True, ids=lambda p: "+".join((p[0], *p[1])))
def test_a_server_that_takes_tools_runs_both_modes_to_judged_rows(
    emulated: MockServer, aib: Any
) -> None:
    result = _run(aib, emulated.base_url)
    assert result.code == 0, result.err
    assert f"{ITEMS} conversations run" in result.out and f"{ITEMS} judged" in result.out
    assert "refused tool calls" not in result.out
    items, judgments, completions = _stored()
    assert {i.mode for i in items} == {"user_role", "tool_role"}
    assert all(i.status == "done" for i in items)
    assert all(t.deviation is None for i in items for t in i.turns)
    assert {j.status for j in judgments} == {"scored"} and len(judgments) == ITEMS
    replies = [t.reply for i in items for t in i.turns]
    assert all(FIRM_MARKER in r and "<think>" not in r and THOUGHT not in r for r in replies)
    thinks = set(emulated.config.server_flags) & {
        "reasoning", "reasoning_content", "think_in_content", "thinking"
    }  # fmt: skip
    # The reasoning is kept, apart from the reply, whichever way the server returned it.
    assert all((c is not None and c.reasoning == THOUGHT) == bool(thinks) for c in completions)
    # The judge read the replies without the reasoning (a `<think>` block would reach it).
    judge_bodies = [b for b in emulated.seen.requests if b["model"] == "scripted-judge"]
    assert judge_bodies and all(THOUGHT not in str(b["messages"]) for b in judge_bodies)


REFUSING = [("vllm", ()), ("vllm", ("think_in_content",)), ("ollama", ("no_tools",))]


@pytest.mark.parametrize("emulated", REFUSING, indirect=True, ids=lambda p: "+".join((p[0], *p[1])))
def test_a_server_that_refuses_tools_gets_them_in_the_prompt_after_one_refusal(
    emulated: MockServer, aib: Any
) -> None:
    # Calls in flight as the run likes: the other first turns wait for the first one's answer.
    result = _run(aib, emulated.base_url)
    assert result.code == 0, result.err
    assert f"{ITEMS} judged" in result.out and "0 failed" in result.out
    (notice,) = [line for line in result.out.splitlines() if "refused tool calls" in line]
    assert "refused tool calls for scripted-firm (HTTP 400: " in notice
    assert "--enable-auto-tool-choice --tool-call-parser" in notice and "--jinja" in notice
    assert "--modes user_role" in notice and "protocol deviations" in notice
    bodies = emulated.seen.requests
    assert sum(1 for b in bodies if "tools" in b) == 1  # the one refused request, no more
    text_mode = [b for b in bodies if "<tool_call>" in str(b["messages"][0].get("content"))]
    assert text_mode and all(m.get("role") != "tool" for b in text_mode for m in b["messages"])
    items, judgments, _ = _stored()
    assert all(i.status == "done" for i in items) and len(judgments) == ITEMS
    by_mode = {i.mode: [t.deviation for t in i.turns] for i in items}
    assert set(by_mode["tool_role"]) == {"text_tool_call"}
    notes = {t.note for i in items if i.mode == "tool_role" for t in i.turns}
    assert notes == {
        "the tool call came back as text; message read from it; the server refused tools, so "
        f"they were in the prompt ({instructions_digest()})"
    }
    assert set(by_mode["user_role"]) == {None}
    tool_replies = [t.reply for i in items if i.mode == "tool_role" for t in i.turns]
    assert all(FIRM_MARKER in r and "tool_call" not in r for r in tool_replies)


@pytest.mark.parametrize(
    "emulated",
    [("vllm", ("tool_parser",)), ("ollama", ()), ("lmstudio", ())],
    indirect=True,
    ids=lambda p: p[0],
)
def test_local_servers_get_no_openrouter_only_fields(emulated: MockServer, aib: Any) -> None:
    result = _run(aib, emulated.base_url, "--scenarios", "direct")
    assert result.code == 0, result.err
    seen = emulated.seen
    assert seen.requests and len(seen.headers) == len(seen.requests)
    assert not [sorted(OPENROUTER_ONLY_FIELDS & b.keys()) for b in seen.requests if
                OPENROUTER_ONLY_FIELDS & b.keys()]  # fmt: skip
    assert not [h for h in seen.headers if OPENROUTER_HEADERS & h.keys()]


OPENROUTER_ONLY_FIELDS = frozenset({"usage", "provider", "reasoning", "transforms", "plugins"})
OPENROUTER_HEADERS = frozenset({"http-referer", "x-title"})


REASONING_CASES = [
    # docs.ollama.com "OpenAI compatibility": `reasoning_effort` is a supported request field.
    ("ollama", ("thinking",), "high", {"reasoning_effort": "high"}),
    ("ollama", ("thinking",), "none", {"reasoning_effort": "none"}),
    # docs.vllm.ai "Reasoning Outputs": `chat_template_kwargs` `enable_thinking=False`.
    ("vllm", ("tool_parser", "reasoning"), "none",
     {"chat_template_kwargs": {"enable_thinking": False}}),
    ("vllm", ("tool_parser", "reasoning"), "high", None),  # no documented field: refused
    ("lmstudio", (), "none", None),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "flags", "effort", "fields"), REASONING_CASES)
def test_a_reasoning_effort_reaches_a_local_server_as_it_documents_or_is_refused(
    kind: str, flags: tuple[str, ...], effort: str, fields: dict[str, Any] | None, aib: Any
) -> None:
    """Issue 36: a label names only settings that were sent. Ollama gets `reasoning_effort`,
    vLLM `none` as `enable_thinking: false`; anything else is refused with one line before a
    call; the provider pin (OpenRouter's) reaches no local server either way."""
    with MockServer(MockConfig(server=kind, server_flags=flags)) as emulated:
        Path("models.yaml").write_text(
            f"models:\n  - id: scripted-firm\n    base_url: {emulated.base_url}\n"
            f"    reasoning_effort: {effort}\n    provider: [somewhere]\n"
            f"judge:\n  id: scripted-judge\n  base_url: {emulated.base_url}\n",
            encoding="utf-8",
        )
        result = aib(
            "run", "--suite", "full", "--scenarios", "direct", "--variants", "neutral",
            "--config", "models.yaml", "--runs", "1", "--data-dir", "store",
        )  # fmt: skip
        seen = emulated.seen
    if fields is None:
        assert result.code == 2 and not seen.requests
        assert result.err.count("\n") == 1
        assert f"scripted-firm+somewhere@{effort}: reasoning effort {effort} cannot be sent" in (
            result.err
        )
        return
    assert result.code == 0, result.err
    subject = [b for b in seen.requests if b["model"] == "scripted-firm"]
    assert subject and all(fields.items() <= b.items() for b in subject)
    judge = [b for b in seen.requests if b["model"] == "scripted-judge"]
    assert judge and not any(fields.keys() & b.keys() for b in judge)  # the judge asked none
    sent = [sorted(OPENROUTER_ONLY_FIELDS & b.keys()) for b in seen.requests]
    assert not [names for names in sent if names]
    assert not [h for h in seen.headers if OPENROUTER_HEADERS & h.keys()]
    _, _, completions = _stored()
    thought = [c.reasoning for c in completions if c is not None and c.reasoning]
    assert bool(thought) == (effort != "none")  # `none` turned the thinking off


def test_the_hinted_command_after_a_restart_with_tool_flags_makes_native_calls(
    aib: Any,
) -> None:
    with MockServer(MockConfig(server="vllm")) as refusing:
        first = _run(aib, refusing.base_url)
    assert first.code == 0, first.err
    (notice,) = [line for line in first.out.splitlines() if "refused tool calls" in line]
    assert "run again with --fresh" in notice
    with MockServer(MockConfig(server="vllm", server_flags=("tool_parser",))) as restarted:
        again = _run(aib, restarted.base_url)  # the same command reuses what is stored
        assert again.code == 0, again.err
        assert restarted.seen.request_count == 0
        hinted = _run(aib, restarted.base_url, "--fresh")
        assert hinted.code == 0, hinted.err
        assert sum(1 for body in restarted.seen.requests if "tools" in body) >= 1
    items, _, _ = _stored()
    runs: dict[int, set[str | None]] = {}
    for item in (i for i in items if i.mode == "tool_role"):
        runs.setdefault(item.run.run_index, set()).update(t.deviation for t in item.turns)
    assert runs == {1: {"text_tool_call"}, 2: {None}}  # the new run called the tool natively


def test_a_passing_5xx_that_mentions_tool_choice_does_not_switch_to_the_text_path(
    aib: Any,
) -> None:
    config = MockConfig(fail_first=1, fail_first_kind="500_tool_choice")
    with MockServer(config) as server:
        result = _run(aib, server.base_url, "--modes", "tool_role")
        bodies = server.seen.requests
    assert result.code == 0, result.err
    assert "refused tool calls" not in result.out
    assert all("tools" in b for b in bodies if b["model"] == "scripted-firm")  # retried as is
    items, _, _ = _stored()
    assert {t.deviation for i in items for t in i.turns} == {None}


def test_llama_server_without_jinja_fails_tool_calls_with_the_fix_and_no_text_path(
    aib: Any,
) -> None:
    # llama-server --no-jinja: HTTP 500 "tools param requires --jinja flag" to every request
    # with tools. A 5xx is never a switch to prompt-described tools, nor worth a retry here.
    config = MockConfig(no_jinja=True)
    with MockServer(config) as server:
        result = _run(aib, server.base_url)
        bodies = server.seen.requests
    assert result.code == 3, result.err  # EXIT_SOME_FAILED: the tool_role conversations
    assert "refused tool calls" not in result.out + result.err
    named = [line for line in (result.out + result.err).splitlines() if "--jinja" in line]
    assert len(named) == 1, named
    assert "restart it with --jinja, or run with --modes user_role" in named[0]
    assert named[0].lstrip().startswith("2 × llama-server needs --jinja")
    with_tools = [b for b in bodies if "tools" in b]
    assert len(with_tools) == 2  # one per tool_role conversation: refused once, not retried
    assert not [b for b in bodies if "<tool_call>" in str(b["messages"][0].get("content"))]
    items, judgments, _ = _stored()
    assert {(i.mode, i.status) for i in items} == {("user_role", "done"), ("tool_role", "failed")}
    assert not [t for i in items for t in i.turns if t.deviation is not None]
    assert len(judgments) == 2  # the user_role conversations, judged as usual
