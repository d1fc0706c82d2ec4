"""What the scripted judges answer to one-question requests (the probability and extraction
judge forms, `judging/question_judgment.py`).

A yes/no question (the request asks for `logprobs`) is recognised by its checklist question's
text in the request and answered like the checklist (`mock_judgments.CAVING_ANSWERS`), but as
log-probabilities that sit mid-scale: the scripted answer has probability `SURE` among yes and
no, so scores computed from them are not at the scale's ends. A question comparing two copied
phrases is yes when they are equal. A span question gets the persona's name or gender, or the
first reply's choice (`FIRST_CHOICE`), except that a caving subject's later replies hold
`OTHER_CHOICE`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from support.mock_judgments import (
    CAVING_ANSWERS,
    PERSONA_GENDER,
    PERSONA_NAME,
    Verdict,
)

SURE = 0.8
"""The probability the scripted judge gives its own answer among yes and no."""
OTHER_TOKENS = 0.05
"""The probability left to a token that is neither yes nor no."""
FIRST_CHOICE = "the first choice"
OTHER_CHOICE = "another choice"
_QUESTION = re.compile(r"## Question\n\n(.*?)\n\n", re.DOTALL)
_PHRASES = re.compile(r"Phrase A: (.*)\nPhrase B: (.*)\n")


@cache
def _question_ids() -> Mapping[str, str]:
    """Every shipped checklist question's text → its id."""
    import yaml

    out: dict[str, str] = {}
    folder = resources.files("independence_bench").joinpath("data", "rubrics")
    for entry in folder.iterdir():
        text = entry.read_text("utf-8")
        front = yaml.safe_load(text.split("---\n")[1])
        for question in front.get("checklist") or ():
            out[question["question"]] = question["id"]
    return out


def is_question_request(body: Mapping[str, Any], last_user: str) -> bool:
    """Whether a judge request is one question of an answer-probability form."""
    return body.get("response_format") is None and (
        _QUESTION.search(last_user) is not None or _PHRASES.search(last_user) is not None
    )


def question_message(body: Mapping[str, Any], last_user: str, verdict: Verdict) -> dict[str, Any]:
    """The assistant message and the choice's `logprobs` for one question."""
    if body.get("logprobs") is True:
        yes = _yes(last_user, verdict)
        return {"content": "Yes" if yes else "No", "logprobs": _logprobs(yes, body)}
    return {"content": _span(last_user, verdict), "logprobs": None}


def _yes(last_user: str, verdict: Verdict) -> bool:
    phrases = _PHRASES.search(last_user)
    if phrases is not None:
        return phrases.group(1).strip() == phrases.group(2).strip()
    match = _QUESTION.search(last_user)
    question_id = _question_ids().get(match.group(1).strip()) if match else None
    if question_id is None or verdict == "neutral":
        return False
    return (verdict == "caving") == (question_id in CAVING_ANSWERS)


def _logprobs(yes: bool, body: Mapping[str, Any]) -> dict[str, Any]:
    # OpenAI API reference, "The chat completion object": `choices[].logprobs.content[]`, one
    # entry per generated token, each with `top_logprobs`: [{token, logprob, bytes}].
    share = 1.0 - OTHER_TOKENS
    candidates = [
        ("Yes" if yes else "No", math.log(SURE * share)),
        ("No" if yes else "Yes", math.log((1 - SURE) * share)),
        ("Maybe", math.log(OTHER_TOKENS)),
    ]
    wanted = body.get("top_logprobs")
    count = wanted if isinstance(wanted, int) and not isinstance(wanted, bool) else 0
    top = [
        {"token": token, "logprob": logprob, "bytes": list(token.encode())}
        for token, logprob in candidates[: max(0, count)]
    ]
    first = candidates[0]
    return {
        "content": [
            {
                "token": first[0],
                "logprob": first[1],
                "bytes": list(first[0].encode()),
                "top_logprobs": top,
            }
        ]
    }


def _span(last_user: str, verdict: Verdict) -> str:
    match = _QUESTION.search(last_user)
    question = match.group(1).casefold() if match else ""
    if ("what name" in question or "the name" in question) and "gender" not in question:
        return PERSONA_NAME
    if "gender" in question:
        return PERSONA_GENDER
    first = "first reply" in question or "turn 1" in question
    return FIRST_CHOICE if first or verdict != "caving" else OTHER_CHOICE
