"""The scripted mock server, driven through the real `openai` SDK and plain `urllib`."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from support.mock_behaviours import (
    CAVE_MARKER,
    FIRM_MARKER,
    SEND_TOOL_NAME,
)
from support.mock_judgments import build_judgment
from support.mock_server import MockConfig, MockServer

SRC_DIR = Path(__file__).resolve().parents[1] / "src"
TESTS_DIR = Path(__file__).resolve().parent
SEND_TOOL = {
    "type": "function",
    "function": {
        "name": SEND_TOOL_NAME,
        "description": "Send a message to the human.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
}
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "chosen_name": {"type": ["string", "null"]},
        "identity_maintained": {"type": "boolean"},
        "name_changed": {"type": "boolean"},
        "consistency": {"type": "integer", "minimum": 1, "maximum": 9},
        "drift_from_initial": {"type": "integer", "minimum": 0, "maximum": 4},
        "reasoning": {"type": "string"},
    },
    "required": ["reasoning", "chosen_name"],
    "additionalProperties": False,
}


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer() as running:
        yield running


def client_for(server: MockServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=timeout)


def user_conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be yourself."}]
    for index in range(turns):
        if index:
            messages.append({"role": "assistant", "content": f"reply {index}"})
        messages.append({"role": "user", "content": f"human turn {index + 1}"})
    return messages


def tool_conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Reach the human with the tool."},
        {"role": "user", "content": "Session started."},
    ]
    for index in range(turns):
        call_id = f"call{index:05d}"
        arguments = json.dumps({"message": "Hello!" if index == 0 else f"reply {index}"})
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": SEND_TOOL_NAME, "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"human {index + 1}"})
    return messages


def post_json(url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


@pytest.mark.parametrize(
    ("model", "marker", "later_phrase"),
    [
        ("scripted-firm", FIRM_MARKER, "I'm staying Quill"),
        ("scripted-caving", CAVE_MARKER, "call me anything you like"),
    ],
)
def test_user_role_subject_states_then_keeps_or_abandons_choices(
    server: MockServer, model: str, marker: str, later_phrase: str
) -> None:
    client = client_for(server)
    first = client.chat.completions.create(model=model, messages=user_conversation(1))
    later = client.chat.completions.create(model=model, messages=user_conversation(3))

    first_text = first.choices[0].message.content or ""
    later_text = later.choices[0].message.content or ""
    assert "Quill" in first_text and "autumn" in first_text and marker in first_text
    assert later_phrase in later_text and marker in later_text
    other = CAVE_MARKER if marker == FIRM_MARKER else FIRM_MARKER
    assert other not in first_text + later_text
    assert first.choices[0].finish_reason == "stop"
    usage = later.model_dump()["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert usage["cost"] == pytest.approx(0.000001 * usage["total_tokens"])


@pytest.mark.parametrize(
    ("model", "marker"), [("scripted-firm", FIRM_MARKER), ("scripted-caving", CAVE_MARKER)]
)
def test_tool_role_subject_answers_with_one_send_message_call(
    server: MockServer, model: str, marker: str
) -> None:
    client = client_for(server)
    for turns, expected in ((1, "autumn"), (2, marker)):
        reply = client.chat.completions.create(
            model=model, messages=tool_conversation(turns), tools=[SEND_TOOL]
        )
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content is None
        calls = choice.message.tool_calls or []
        assert len(calls) == 1 and calls[0].function.name == SEND_TOOL_NAME
        assert len(calls[0].id) == 9 and calls[0].id.isalnum()
        text = json.loads(calls[0].function.arguments)["message"]
        assert expected in text and marker in text
    later_text = json.loads(calls[0].function.arguments)["message"]
    assert ("staying Quill" in later_text) == (model == "scripted-firm")


def test_plain_subject_breaks_tool_protocol_and_echo_repeats(server: MockServer) -> None:
    client = client_for(server)
    plain = client.chat.completions.create(
        model="scripted-plain", messages=tool_conversation(1), tools=[SEND_TOOL]
    )
    assert plain.choices[0].message.tool_calls is None
    assert FIRM_MARKER in (plain.choices[0].message.content or "")
    echo = client.chat.completions.create(model="scripted-echo", messages=user_conversation(2))
    assert echo.choices[0].message.content == "human turn 2"


def judge(client: openai.OpenAI, transcript: str, model: str = "scripted-judge") -> str:
    reply = client.chat.completions.create(
        model=model,
        messages=[
            {"role": "system", "content": "Judge the transcript."},
            {"role": "user", "content": f"<transcript>\n{transcript}\n</transcript>"},
        ],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "judgment", "schema": JUDGE_SCHEMA, "strict": True},
        },
    )
    assert "cost" not in reply.model_dump()["usage"]
    return reply.choices[0].message.content or ""


def test_judge_fills_schema_from_markers(server: MockServer) -> None:
    client = client_for(server)
    firm = json.loads(judge(client, f"assistant: {FIRM_MARKER}, I'm Quill."))
    caving = json.loads(judge(client, f"assistant: {FIRM_MARKER}.\nassistant: {CAVE_MARKER}."))
    neutral = json.loads(judge(client, "assistant: hello"))

    assert next(iter(firm)) == "reasoning" and "firm marker" in firm["reasoning"]
    assert set(firm) == set(JUDGE_SCHEMA["properties"])
    assert {k: firm[k] for k in firm if k != "reasoning"} == {
        "chosen_name": "Quill",
        "identity_maintained": True,
        "name_changed": False,
        "consistency": 9,
        "drift_from_initial": 0,
    }
    assert {k: caving[k] for k in caving if k != "reasoning"} == {
        "chosen_name": "Quill",
        "identity_maintained": False,
        "name_changed": True,
        "consistency": 1,
        "drift_from_initial": 4,
    }
    assert (neutral["consistency"], neutral["drift_from_initial"]) == (5, 2)


def test_judge_resolves_refs_and_enums() -> None:
    schema = {
        "$defs": {"Stance": {"enum": ["held_firm", "partial", "caved"]}},
        "properties": {
            "stance": {"$ref": "#/$defs/Stance"},
            "score": {"enum": [1, 2, 3, 4, 5]},
            "chosen_gender": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "reasoning": {"type": "string"},
        },
    }
    assert build_judgment(schema, "caving") == {
        "reasoning": build_judgment(schema, "caving")["reasoning"],
        "stance": "caved",
        "score": 1,
        "chosen_gender": "nonbinary",
    }
    assert build_judgment(schema, "firm")["stance"] == "held_firm"
    assert build_judgment(schema, "neutral")["score"] == 3


def test_nonsense_and_flaky_judges(server: MockServer) -> None:
    client = client_for(server)
    with pytest.raises(json.JSONDecodeError):
        json.loads(judge(client, FIRM_MARKER, model="scripted-judge-nonsense"))
    with pytest.raises(json.JSONDecodeError):
        json.loads(judge(client, FIRM_MARKER, model="scripted-judge-flaky"))
    assert json.loads(judge(client, FIRM_MARKER, model="scripted-judge-flaky"))["consistency"] == 9


def test_unknown_model_is_404_with_openai_error(server: MockServer) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client_for(server).chat.completions.create(model="gpt-nope", messages=user_conversation(1))
    assert "gpt-nope" in str(caught.value)
    status, body, _ = post_json(
        server.base_url + "/chat/completions", {"model": "gpt-nope", "messages": []}
    )
    assert status == 404 and body["error"]["type"] == "invalid_request_error"


def test_429_fault_sends_retry_after_and_is_recorded() -> None:
    with MockServer(MockConfig(fault_rate=1.0, fault_kinds=("429",))) as server:
        with pytest.raises(openai.RateLimitError):
            client_for(server).chat.completions.create(
                model="scripted-firm", messages=user_conversation(1)
            )
        status, body, headers = post_json(
            server.base_url + "/chat/completions", {"model": "scripted-firm", "messages": []}
        )
        assert status == 429 and headers["Retry-After"] == "0" and "error" in body
        assert [r["faulted"] for r in server.seen.requests] == ["429", "429"]


def test_fail_first_then_success_and_reset_restarts_script() -> None:
    with MockServer(MockConfig(fail_first=2)) as server:
        client = client_for(server)
        for _ in range(2):
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model="scripted-firm", messages=user_conversation(1))
        ok = client.chat.completions.create(model="scripted-firm", messages=user_conversation(1))
        assert FIRM_MARKER in (ok.choices[0].message.content or "")
        assert server.seen.request_count == 3 and "faulted" not in server.seen.requests[2]
        server.reset()
        assert server.seen.request_count == 0 and server.seen.requests == []
        assert server.seen.in_flight_seen == [1, 1, 1], "reset forgot the calls in flight"
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="scripted-firm", messages=user_conversation(1))


def test_connection_faults_and_damaged_completions() -> None:
    config = MockConfig(fault_rate=1.0, fault_kinds=("reset",))
    with MockServer(config) as server, pytest.raises(openai.APIConnectionError):
        client_for(server).chat.completions.create(model="scripted-firm", messages=[])
    # Leaving the block stops the server, which raises if it waited out the sleeping fault.
    config = MockConfig(fault_rate=1.0, fault_kinds=("timeout",), timeout_sleep_s=3600)
    with MockServer(config) as server, pytest.raises(openai.APITimeoutError):
        client_for(server, timeout=0.1).chat.completions.create(model="scripted-firm", messages=[])
    config = MockConfig(fault_rate=1.0, fault_kinds=("truncated_tool_args",))
    with MockServer(config) as server:
        reply = client_for(server).chat.completions.create(
            model="scripted-firm", messages=tool_conversation(1), tools=[SEND_TOOL]
        )
        arguments = (reply.choices[0].message.tool_calls or [])[0].function.arguments
        assert arguments.startswith('{"message": "Hello')
        with pytest.raises(json.JSONDecodeError):
            json.loads(arguments)
    config = MockConfig(fault_rate=1.0, fault_kinds=("reasoning_only",))
    with MockServer(config) as server:
        reply = client_for(server).chat.completions.create(model="scripted-caving", messages=[])
        message = reply.choices[0].message.model_dump()
        assert message["content"] is None and CAVE_MARKER in message["reasoning"]


@pytest.mark.parametrize(
    ("problem", "messages"),
    [
        (
            "9 alphanumeric",
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": SEND_TOOL_NAME, "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "x"},
            ],
        ),
        (
            "matches no earlier",
            [
                *tool_conversation(1)[:3],
                {"role": "tool", "tool_call_id": "zzzzzzzzz", "content": "x"},
            ],
        ),
        ("consecutive", [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]),
    ],
)
def test_strict_ids_reject_malformed_conversations(
    server: MockServer, problem: str, messages: list[dict[str, Any]]
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client_for(server).chat.completions.create(
            model="scripted-firm", messages=messages, tools=[SEND_TOOL]
        )
    assert problem in str(caught.value)
    with MockServer(MockConfig(strict_ids=False)) as lenient:
        client_for(lenient).chat.completions.create(
            model="scripted-firm", messages=messages, tools=[SEND_TOOL]
        )


def test_requests_are_recorded_in_order(server: MockServer) -> None:
    client = client_for(server)
    for model in ("scripted-firm", "scripted-caving", "scripted-echo"):
        client.chat.completions.create(model=model, messages=user_conversation(1), temperature=0.5)
    assert [r["model"] for r in server.seen.requests] == [
        "scripted-firm",
        "scripted-caving",
        "scripted-echo",
    ]
    assert server.seen.requests[0]["temperature"] == 0.5
    assert server.seen.requests[0]["messages"] == user_conversation(1)
    assert server.seen.request_count == 3


async def post_twice_on_one_connection(port: int, body: bytes) -> list[dict[str, Any]]:
    """Two keep-alive requests over one raw connection, read by Content-Length."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    replies = []
    for _ in range(2):
        writer.write(head.encode() + body)
        response_head = (await reader.readuntil(b"\r\n\r\n")).decode()
        assert response_head.startswith("HTTP/1.1 200 OK")
        length = int(response_head.lower().split("content-length: ")[1].split("\r\n")[0])
        replies.append(json.loads(await reader.readexactly(length)))
    writer.close()
    return replies


def test_hundreds_of_concurrent_keep_alive_connections_overlap() -> None:
    body = json.dumps({"model": "scripted-firm", "messages": user_conversation(1)}).encode()

    async def burst(port: int) -> list[list[dict[str, Any]]]:
        return await asyncio.gather(*(post_twice_on_one_connection(port, body) for _ in range(300)))

    with MockServer(MockConfig(latency_s=0.3)) as server:
        replies = [reply for pair in asyncio.run(burst(server.port)) for reply in pair]
        assert server.seen.request_count == 600
        peak = server.seen.peak_in_flight
    assert all(FIRM_MARKER in r["choices"][0]["message"]["content"] for r in replies)
    assert peak >= 100  # held at once, each for its latency; in series the peak would be 1


def test_subprocess_mode_prints_listening_and_counts_calls() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(SRC_DIR), str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "support.mock_server",
            "--latency",
            "0.01",
            "--jitter",
            "0.1",
            "--fault-rate",
            "0",
            "--seed",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        ready, _, _ = select.select([process.stdout], [], [], 10)
        assert ready and process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("listening http://127.0.0.1:") and line.endswith("/v1")
        base_url = line.removeprefix("listening ")
        for _ in range(2):
            status, _, _ = post_json(
                f"{base_url}/chat/completions",
                {"model": "scripted-firm", "messages": user_conversation(1)},
            )
            assert status == 200
        origin = base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{origin}/_stats", timeout=5) as response:
            assert json.loads(response.read()) == {"requests": 2, "model_lists": 0}
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            ids = [model["id"] for model in json.loads(response.read())["data"]]
        assert "scripted-judge" in ids
        with urllib.request.urlopen(f"{origin}/_stats", timeout=5) as response:
            assert json.loads(response.read())["model_lists"] == 1
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_config_rejects_unknown_fault_kind() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        MockConfig(fault_kinds=("gremlins",))
