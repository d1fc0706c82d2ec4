"""The earlier implementation's result files, read into our rows (used by `importer.py`).

That implementation kept one JSON file per conversation turn, laid out as
``<provider>--<model>[+<pin>]@<effort>-t<T>/run_<n>/<experiment>/<variant>/<mode>/<scenario>.json``.
This module owns that format: configuration folder names (`parse_config_folder`), a turn file's
conversation so far (`read_turn_file`), the completion and judge call it records, an item's
transcript assembled from its files (`build_transcript`), a verdict as a judgment
(`judgment_of`, under the constant rubric ``legacy:<kind>``) and a run's suite by its shape
(`suite_of_run`). Pure functions over parsed files; nothing here touches the store.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from independence_bench.clients.protocol import Completion, CompletionRequest, ToolCall
from independence_bench.conversations.conversation import TOOL_NAME
from independence_bench.engine.admission import Refused, admit_scores, admit_text
from independence_bench.engine.request_keys import digest, request_record
from independence_bench.store.store import TurnRecord, Verdict
from independence_bench.text.import_files import (
    TURN_FILE_CAP,
    ImportFileRefused,
    read_import_file,
)
from independence_bench.text.lossless import json_loads

UNKNOWN_JUDGE = "unknown-legacy-judge"
MAIN_CELL = ("strong_independence", "tool_role")
LITE_PSYCH_QUESTIONS = 5
PLAIN_CONTENT_NOTE = "answered in plain content instead of calling send_message_to_human"
REPLAYED_NOTE = "no file for this turn; the reply as replayed in the next turn's request"

_FOLDER = re.compile(
    r"^(?P<base>.+?)(?:\+(?P<pin>[^+@]+))?@(?P<effort>[A-Za-z]+)-t(?P<temperature>\d+(?:\.\d+)?)$"
)
_TURN = re.compile(r"^(?P<base>.+)_turn(?P<turn>\d+)$")
_PSYCH = re.compile(r"^pq\d+$")


def legacy_suite_hash(suite_id: str) -> str:
    """The stable stand-in for a content hash: imported prompts are not ours to hash."""
    return hashlib.sha256(f"{suite_id}+legacy".encode()).hexdigest()


def legacy_rubric(kind: str) -> tuple[str, str]:
    """(rubric id, rubric hash) recorded for an imported judgment of `kind`."""
    return f"legacy-{kind}", f"legacy:{kind}"


# -- configuration folders ----------------------------------------------------------------------


@dataclass(frozen=True)
class LegacyConfig:
    """A configuration folder's name read as model id, provider pin, effort and temperature."""

    folder: str
    """The folder's name as it stands on disk."""
    label: str
    """The leaderboard label (`label_of_folder`), e.g. ``x-ai/grok+fireworks@low-t0.7``."""
    model_id: str
    """The model id sent to the API: the label without pin, effort and temperature."""
    provider: tuple[str, ...] = ()
    """The provider pin after ``+``, as a one-name provider order; empty when unpinned."""
    reasoning_effort: str | None = None
    """The folder's effort (``none`` included: that implementation sent ``{"effort": "none"}``
    for it, so a re-run sends the same); None when the folder name does not say."""
    temperature: float | None = None
    """The sampling temperature after ``-t``; None when the folder name does not say."""


def label_of_folder(folder: str) -> str:
    """The leaderboard label of a folder: its name with the first ``--`` read as ``/``.

    ``moonshotai--kimi-k2.5+fireworks@none-t0.7`` → ``moonshotai/kimi-k2.5+fireworks@none-t0.7``.
    """
    return folder.replace("--", "/", 1)


def parse_config_folder(folder: str) -> LegacyConfig:
    """Read ``<provider>--<model>[+<pin>]@<effort>-t<T>``; other names keep only the model id."""
    label = label_of_folder(folder)
    match = _FOLDER.match(folder)
    if match is None:
        return LegacyConfig(folder, label, label)
    effort = match["effort"].lower()
    return LegacyConfig(
        folder=folder,
        label=label,
        model_id=label_of_folder(match["base"]),
        provider=(match["pin"],) if match["pin"] else (),
        reasoning_effort=effort,
        temperature=float(match["temperature"]),
    )


# -- turn files -----------------------------------------------------------------------------


class SkippedFile(Exception):
    """A file that cannot be imported; the message says why."""


@dataclass(frozen=True)
class TurnFile:
    """One turn file, parsed: where it sits, what it answers, and the conversation so far."""

    rel: str
    experiment: str
    variant: str
    mode: str
    kind: str
    scenario_id: str
    turn: int
    """The ``_turnN`` number in the file name (0 when it has none)."""
    data: Mapping[str, Any]
    humans: tuple[str, ...]
    replayed: tuple[str, ...]
    timestamp: float
    sha256: str
    """Of the file's bytes."""


def scenario_of_file(experiment: str, stem: str) -> tuple[str, str, int] | None:
    """(kind, scenario id, turn number) of a file name, or None when it is not a turn file."""
    turn_match = _TURN.match(stem)
    base, turn = (turn_match["base"], int(turn_match["turn"])) if turn_match else (stem, 0)
    if experiment == "identity":
        if _PSYCH.match(stem):
            return "psych", "psych", 0
        if base in ("direct", "tool_context", "negotiation", "name_gender"):
            return base, base, turn
        return None
    if experiment in ("resistance", "boundary", "stability"):
        return experiment, base, turn
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _replayed_text(message: Mapping[str, Any]) -> str:
    for call in message.get("tool_calls") or ():
        function = _mapping(_mapping(call).get("function"))
        if function.get("name") == TOOL_NAME:
            arguments = str(function.get("arguments") or "")
            try:
                parsed = json_loads(arguments)
            except json.JSONDecodeError:
                return arguments
            text = _mapping(parsed).get("message")
            return text if isinstance(text, str) else arguments
    return _text(message.get("content"))


def split_conversation(
    messages: Sequence[Mapping[str, Any]], mode: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The human messages of a request and the model replies between them, in order.

    In ``tool_role`` the human speaks in tool results (the opening user kick-off and the
    scripted greeting are not turns); otherwise in user messages.
    """
    tool_role = mode == "tool_role" or any(m.get("role") == "tool" for m in messages)
    human_role = "tool" if tool_role else "user"
    humans: list[str] = []
    replies: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == human_role:
            humans.append(_text(message.get("content")))
        elif role == "assistant" and humans:
            replies.append(_replayed_text(message))
    return tuple(humans), tuple(replies)


def _timestamp(data: Mapping[str, Any], path: Path) -> float:
    metadata = data.get("metadata")
    stamp = metadata.get("timestamp") if isinstance(metadata, dict) else None
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp).timestamp()
        except ValueError:
            pass
    return path.stat().st_mtime


def read_json(path: Path, root: Path) -> Any:
    """A file's JSON, or `SkippedFile` saying why it cannot be read (`_read_json`)."""
    return _read_json(path, root)[0]


def _read_json(path: Path, root: Path) -> tuple[Any, str]:
    """JSON of a regular file under `root`, of at most `TURN_FILE_CAP` bytes, checked before a
    byte is read (`text/import_files.py`: no device, pipe or link out of the tree)."""
    try:
        raw = read_import_file(path, root, TURN_FILE_CAP)
        # Decoded as json.loads(bytes) would (UTF-8/16/32, a BOM), then with the depth bound.
        text = raw.decode(json.detect_encoding(raw))
        return json_loads(text), hashlib.sha256(raw).hexdigest()
    except json.JSONDecodeError as exc:
        raise SkippedFile(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except UnicodeDecodeError:
        raise SkippedFile("not UTF-8 text") from None
    except OSError as exc:
        raise SkippedFile(f"cannot be read ({exc.strerror})") from None
    except ImportFileRefused as exc:
        raise SkippedFile(str(exc)) from None


def read_turn_file(path: Path, rel: str, parts: Sequence[str], root: Path) -> TurnFile:
    """Parse one turn file found at ``<experiment>/<variant>/<mode>/<scenario>.json`` under
    the import's `root`."""
    if len(parts) != 4:
        raise SkippedFile("not at <experiment>/<variant>/<mode>/<scenario>.json")
    experiment, variant, mode, name = parts
    scenario = scenario_of_file(experiment, name.removesuffix(".json"))
    if scenario is None:
        raise SkippedFile(f"unrecognised scenario file for experiment {experiment!r}")
    data, sha256 = _read_json(path, root)
    if not isinstance(data, dict):
        raise SkippedFile("not a JSON object")
    messages = data.get("request_messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise SkippedFile("no request_messages list")
    response = data.get("response")
    if response is not None and not isinstance(response, str):
        raise SkippedFile("response is not text")
    humans, replayed = split_conversation(messages, mode)
    if not humans:
        raise SkippedFile("request_messages hold no human message")
    kind, scenario_id, turn = scenario
    return TurnFile(
        rel,
        experiment,
        variant,
        mode,
        kind,
        scenario_id,
        turn,
        data,
        humans,
        replayed,
        _timestamp(data, path),
        sha256,
    )


def subject_key(turn: TurnFile) -> str:
    """The completion key of a turn file: its place in the tree and its exact bytes."""
    return digest({"import": "legacy", "file": turn.rel, "sha256": turn.sha256})


# -- rows -----------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _tool_calls(data: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    calls = []
    for call in data.get("response_tool_calls") or ():
        if isinstance(call, dict):
            function = _mapping(call.get("function"))
            calls.append(
                ToolCall(
                    id=str(call.get("id") or ""),
                    name=str(function.get("name") or ""),
                    arguments=str(function.get("arguments") or ""),
                )
            )
    return tuple(calls)


def subject_completion(turn: TurnFile) -> Completion:
    """The completion a turn file records (plain content beside a tool call included)."""
    data = turn.data
    calls = _tool_calls(data)
    content = data.get("content_thinking") if calls else data.get("response")
    cost = _mapping(data.get("gen_cost"))
    reasoning = data.get("reasoning_content")
    finish = data.get("finish_reason")
    return Completion(
        content=content if isinstance(content, str) else None,
        tool_calls=calls,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=_int(cost.get("prompt_tokens")),
        completion_tokens=_int(cost.get("completion_tokens")),
        cost_usd=_float(cost.get("cost_usd")),
        latency_s=_float(cost.get("elapsed_seconds")) or 0.0,
    )


def legacy_request_of_turn(config: LegacyConfig, turn: TurnFile) -> dict[str, Any]:
    """The request of an earlier implementation's turn file as stored: the exact messages
    sent, the settings, and where it came from (`engine.requests.subject_request` builds the
    requests `aib run` sends).

    The earlier implementation did not record the tool definitions it offered, so ``tools``
    is empty; the messages still carry every tool call and tool result. The record is
    `request_keys.request_record`'s, as for a request of ours, with where it came from.
    """
    request = CompletionRequest(
        model=config.model_id,
        messages=tuple(turn.data["request_messages"]),
        temperature=config.temperature,
        reasoning_effort=config.reasoning_effort,
        provider_order=config.provider,
    )
    return {
        **request_record(request),
        "imported_from": turn.rel,
        "metadata": turn.data.get("metadata"),
    }


def judge_completion(turn: TurnFile) -> tuple[str, str, dict[str, Any], Completion] | None:
    """(key, judge model, request, completion) of the judge call a turn file records, if any."""
    cost = turn.data.get("judge_cost")
    raw = turn.data.get("judge_raw_response")
    if not isinstance(cost, dict) and not isinstance(raw, str):
        return None
    cost = cost if isinstance(cost, dict) else {}
    judge = str(cost.get("judge_model") or UNKNOWN_JUDGE)
    request = {
        "model": judge,
        "messages": [],
        "imported_from": turn.rel,
        "note": "the earlier implementation kept the judge's reply and cost, not its request",
    }
    completion = Completion(
        content=raw if isinstance(raw, str) else None,
        prompt_tokens=_int(cost.get("prompt_tokens")),
        completion_tokens=_int(cost.get("completion_tokens")),
        cost_usd=_float(cost.get("cost_usd")),
        latency_s=_float(cost.get("elapsed_seconds")) or 0.0,
    )
    return (
        digest({"import": "legacy-judge", "file": turn.rel, "raw": raw}),
        judge,
        request,
        completion,
    )


def judgment_of(
    kind: str, judge_scores: Any, *, raw_reply: str | None, completion_keys: tuple[str, ...]
) -> Verdict:
    """A stored verdict as a judgment of one attempt: scored when every field the kind needs is
    valid. `raw_reply` and `completion_keys` are the judge call's, as the turn file records it.

    The earlier implementation stored ``{}`` when the judge's reply did not parse; that, like
    any reply missing a needed field, is *unscored* (re-judgeable), never zeros.
    """

    def unscored(reasoning: str | None, error: str) -> Verdict:
        return Verdict("unscored", None, reasoning, raw_reply, error, 1, completion_keys)

    if not isinstance(judge_scores, dict) or not judge_scores:
        return unscored(None, "the earlier implementation stored no parsed judgment ({})")
    reasoning = judge_scores.get("reasoning")
    reasoning = admit_text(reasoning, "reasoning") if isinstance(reasoning, str) else None
    fields = {key: value for key, value in judge_scores.items() if key != "reasoning"}
    try:  # the checks every door makes (`engine/admission.py`): types, ranges, finite numbers
        scores = admit_scores(kind, fields)
    except Refused as exc:
        return unscored(reasoning, f"invalid verdict: {exc}")
    return Verdict("scored", scores, reasoning, raw_reply, None, 1, completion_keys)


def _reply_flags(turn: TurnFile) -> tuple[bool, str | None]:
    if turn.mode != "tool_role" or any(c.name == TOOL_NAME for c in _tool_calls(turn.data)):
        return True, None
    return False, PLAIN_CONTENT_NOTE


def build_transcript(
    files: Sequence[TurnFile], keys: Mapping[str, str]
) -> tuple[list[TurnRecord], str | None]:
    """An item's turns, read from its last turn's request, and why it is incomplete (if so).

    A turn with its own file takes that file's reply and completion key; a turn without one
    (a single-file pressure scenario's opening turn, or a lost file) takes the reply as the
    next request replayed it, with no completion key.
    """
    by_count: dict[int, TurnFile] = {}
    for turn in sorted(files, key=lambda f: (len(f.humans), f.rel)):
        by_count.setdefault(len(turn.humans), turn)
    last = by_count[max(by_count)]
    turns: list[TurnRecord] = []
    for number, human in enumerate(last.humans, start=1):
        own = by_count.get(number)
        if own is not None:
            ok, note = _reply_flags(own)
            reply = own.data.get("response") or ""
            turns.append(TurnRecord(human, reply, keys[own.rel], ok, note))
        else:
            replayed = last.replayed[number - 1] if number <= len(last.replayed) else ""
            turns.append(TurnRecord(human, replayed, "", True, REPLAYED_NOTE))
    numbered = [f.turn for f in files if f.turn]
    expected = max(2, *numbered) if numbered else len(turns)
    if len(turns) < expected:
        stem = f"{last.scenario_id}_turn{len(turns) + 1}.json"
        return turns, f"turn {len(turns) + 1} of {expected} is missing ({stem})"
    return turns, None


def suite_of_run(files: Sequence[TurnFile]) -> str:
    """The legacy suite a run folder belongs to, by its shape.

    Several prompt variants or delivery modes, or more than five psychological questions:
    ``legacy-v1``. Name/gender files, boundary files, or resistance scores above 2 (boundary
    scenarios were stored as ``resistance/rsNN`` on a 0–10 scale): ``legacy-v2``. Resistance
    scores on the 0–2 scale only: ``legacy-lite``. A run with neither name/gender nor pressure
    files is put in ``legacy-v2``, the last shape, where it shows as incomplete.
    """
    cells = {(f.variant, f.mode) for f in files}
    psych = Counter((f.variant, f.mode) for f in files if f.kind == "psych")
    if cells != {MAIN_CELL} or max(psych.values(), default=0) > LITE_PSYCH_QUESTIONS:
        return "legacy-v1"
    kinds = {f.kind for f in files}
    if kinds & {"name_gender", "boundary"}:
        return "legacy-v2"
    pressure = [f for f in files if f.kind == "resistance"]
    for turn in pressure:
        scores = turn.data.get("judge_scores")
        value = _float(scores.get("resistance_score")) if isinstance(scores, dict) else None
        if value is not None and value > 2:
            return "legacy-v2"
    return "legacy-lite" if pressure else "legacy-v2"


def kind_in_suite(kind: str, suite_id: str) -> str:
    """The scenario kind of a file in its suite: v2 stored boundary scenarios as resistance."""
    return "boundary" if kind == "resistance" and suite_id == "legacy-v2" else kind
