"""What every door checks before a record reaches the store: a server's reply, an imported
verdict, an imported transcript and an Inspect sample pass the same checks here.

`aib run` reads replies through `clients/replies.py`, which already counts a number of the wrong
type as absent; an import reads files anyone may have written. Both end here before a write:
`admit_completion` holds every text field to the reply cap (`reply_cap.py`, as `aib run` cuts
a reply) and every number to a finite, sensible range; `admit_turn` the texts of a transcript's
turn; `admit_json` a stored request (JSON types only, nesting bounded, finite numbers, every
string held to the cap); `admit_suite` an imported run's suite (one this aib ships, with its
formula); `admit_scores` a scored verdict's fields by its kind's metrics (`suites/kinds.py`:
a score is a finite number from 0 to the metric's maximum, a flag a boolean, a round a whole
number) and the rest of its fields as plain JSON. A record that fails is `Refused`, whose
message says why; the import skips it with one line naming the file and goes on. Before these
checks a verdict of `"8"`, `[8]`, NaN, 1e308 or −50, or a suite called `nope`, was stored and
then broke every read command on the whole store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from independence_bench.clients.protocol import Completion
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS, cap_reply
from independence_bench.store.records import TurnRecord
from independence_bench.suites.kinds import ChangedShare, RoundsHeld, Score, kind_named
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.text.lossless import JSON_DEPTH_LIMIT

MAX_TOKENS_COUNT = 2**62
"""Token counts at or above this are nonsense (and beyond SQLite's INTEGER)."""
MAX_COST_USD = 10_000.0
"""A cost above this for one call is nonsense (`clients/replies.MAX_CALL_COST_USD`)."""
MAX_LATENCY_S = 7 * 24 * 3600.0
"""A latency beyond a week is nonsense."""


class Refused(ValueError):
    """A record that may not enter the store; the message says why, in a few words."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _count(value: int | None) -> int | None:
    if value is None:
        return None
    return value if type(value) is int and 0 <= value < MAX_TOKENS_COUNT else None


def _finite(value: float | None, top: float) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and 0 <= number <= top else None


def admit_completion(completion: Completion, cap: int = REPLY_CAP_CHARS) -> Completion:
    """`completion` with each text field held to `cap` (`cap_reply`) and each number that is
    not finite, negative or beyond reason (tokens, cost, latency) read as absent."""
    capped = cap_reply(completion, cap)
    numbers = {
        "prompt_tokens": _count(capped.prompt_tokens),
        "completion_tokens": _count(capped.completion_tokens),
        "reasoning_tokens": _count(capped.reasoning_tokens),
        "cost_usd": _finite(capped.cost_usd, MAX_COST_USD),
        "latency_s": _finite(capped.latency_s, MAX_LATENCY_S) or 0.0,
    }
    if all(getattr(capped, name) == value for name, value in numbers.items()):
        return capped
    return replace(capped, **numbers)  # type: ignore[arg-type]


def admit_text(value: Any, what: str, cap: int = REPLY_CAP_CHARS) -> str:
    """A text field: a string (anything else is `Refused`), held to `cap` characters."""
    if not isinstance(value, str):
        raise Refused(f"{what} is {_describe(value)}, not text")
    return value if len(value) <= cap else value[:cap]


def _optional_text(value: Any, what: str) -> str | None:
    return None if value is None else admit_text(value, what)


def admit_turn(turn: TurnRecord, cap: int = REPLY_CAP_CHARS) -> TurnRecord:
    """A transcript's turn with its texts checked and held to `cap` (the reply as `aib run`
    would have cut it)."""
    checked = TurnRecord(
        admit_text(turn.human, "a human turn", cap),
        admit_text(turn.reply, "a reply", cap),
        admit_text(turn.completion_key, "a completion key", 128),
        turn.protocol_ok if isinstance(turn.protocol_ok, bool) else True,
        _optional_text(turn.note, "a turn's note"),
        _optional_text(turn.deviation, "a turn's deviation"),
        None if turn.human_key is None else admit_text(turn.human_key, "a completion key", 128),
    )
    return turn if checked == turn else checked


def admit_json(value: Any, what: str, cap: int = REPLY_CAP_CHARS, depth: int = 0) -> Any:
    """`value` as JSON the store can keep and every reader can read back: objects with text
    keys, lists, text (each string held to `cap`), finite numbers, booleans and null, nested
    at most `JSON_DEPTH_LIMIT` deep; anything else is `Refused`."""
    if depth > JSON_DEPTH_LIMIT:
        raise Refused(f"{what} nests deeper than {JSON_DEPTH_LIMIT} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value if len(value) <= cap else value[:cap]
    if isinstance(value, int):
        if abs(value) >= MAX_TOKENS_COUNT:
            raise Refused(f"{what} holds the number {_describe(value)}, too large to keep")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Refused(f"{what} holds the number {value!r}")
        return value
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise Refused(f"{what} has a key that is not text")
        return {key[:cap]: admit_json(v, what, cap, depth + 1) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [admit_json(v, what, cap, depth + 1) for v in value]
    raise Refused(f"{what} holds a {type(value).__name__}, not JSON")


def admit_suite(suite_id: Any, formula: Any = None) -> Suite:
    """The shipped suite an imported run says it ran; `Refused` when this aib ships no suite
    of that name or the formula it names is not that suite's."""
    known = available_suites()
    if not isinstance(suite_id, str) or suite_id not in known:
        raise Refused(f"suite {_describe(suite_id)} is not one this aib ships ({', '.join(known)})")
    suite = load_suite(suite_id)
    if formula is not None and formula != suite.formula:
        raise Refused(f"formula {_describe(formula)} is not suite {suite_id}'s ({suite.formula})")
    return suite


def _number(value: Any, name: str, top: float, *, whole: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Refused(f"score {name} is {_describe(value)}, not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise Refused(f"score {name} is {value!r}, not a finite number")
    if not 0 <= value <= top:
        raise Refused(f"score {name} is {_describe(value)}, outside 0–{top:g}")
    if whole and value != int(value):
        raise Refused(f"score {name} is {_describe(value)}, not a whole number")


def _flag(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise Refused(f"score {name} is {_describe(value)}, not true or false")


def _truthy(value: Any, name: str, top: float) -> None:
    if not isinstance(value, bool):
        _number(value, name, top, whole=True)


def admit_scores(kind: str, scores: Any) -> dict[str, Any]:
    """A scored verdict's fields, checked by what kind `kind`'s metrics read (see the module);
    `Refused` naming the first field that fails. The other fields must be plain JSON."""
    try:
        metrics = kind_named(kind).metrics
    except ValueError:
        raise Refused(f"scenario kind {_describe(kind)} is not one this aib knows") from None
    if not isinstance(scores, Mapping):
        raise Refused(f"the scores are {_describe(scores)}, not an object")
    checked = dict(scores)

    def field(name: str) -> Any:
        if name not in checked:
            raise Refused(f"score {name} is missing")
        return checked[name]

    for source in metrics:
        if isinstance(source, Score):
            value = field(source.field)
            if not (source.maximum == 1 and isinstance(value, bool)):
                _number(value, source.field, source.maximum)
            for condition in source.only_if:
                _truthy(field(condition), condition, 100)
            if source.answered is not None:
                _flag(field(source.answered), source.answered)
        elif isinstance(source, ChangedShare):
            for changed, choice in source.parts:
                _flag(field(changed), changed)
                if checked.get(choice) is not None and not isinstance(checked[choice], str):
                    raise Refused(f"score {choice} is {_describe(checked[choice])}, not text")
        elif isinstance(source, RoundsHeld):
            _number(field(source.yield_field), source.yield_field, source.rounds, whole=True)
            _flag(field(source.committed_field), source.committed_field)
    return dict(admit_json(checked, "the other scores"))
