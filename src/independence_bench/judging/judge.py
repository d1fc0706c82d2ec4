"""The LLM judge: prompts that ask for reasoning before scores, and the bounded repair loop.

The judge sees the rubric (`rubric.py`), the transcript and an output instruction, and must
answer with one JSON object: `reasoning` first, then every field. The object is taken from the
reply (a Markdown fence is tolerated) and checked by the rubric's `ReplyForm`, the same model
whose JSON schema the request carries; an invalid reply gets a bounded number of repair requests
that say what was wrong, and a reply that never validates is kept raw and marked *unscored* —
never turned into zeros.

In the checklist form (`judge_form="checklist"`) the judge reads the transcript and the rubric's
questions only (no rubric prose, no reasoning asked for) and answers each one; the answers are
validated by the checklist's `ReplyForm` the same way, turned into the rubric's fields by
`checklist.score_checklist`, and kept as the judgment's reasoning, one answered question a line.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from independence_bench.clients.protocol import Completion, Message
from independence_bench.judging.checklist import answer_lines, score_checklist
from independence_bench.judging.forms import JudgeForm
from independence_bench.judging.rubric import AskedForm, Rubric
from independence_bench.store.store import TurnRecord, Verdict
from independence_bench.text.lossless import json_raw_decode

TRANSCRIPT_TAGS = ("transcript", "turn", "human", "ai")
"""The delimiters of the judge's data; the system prompts name them."""
_OPENERS = frozenset("<\uff1c\ufe64\u2039\u2329\u3008\u27e8\u02c2\u1438\u276e\u276c\u29fc")
"""`<` and the characters a reader takes for it: fullwidth and small `<`, `‹`, angle brackets,
the modifier and Canadian syllabics arrowheads, ornamental brackets."""
_FOLDED = str.maketrans(
    "\u2044\u2215\u29f8\u27cb\u0430\u0435\u0456\u0131\u0455\u0441\u0440\u0442\u04bb\u043c\u03c5",
    "////aeiiscpthmu",
)
"""After NFKC and casefolding: slash look-alikes (fraction, division, big solidus, rising
diagonal) as `/`, and the Cyrillic/Greek letters that look like the tags' Latin ones."""
_OPENER = re.compile("[" + re.escape("".join(sorted(_OPENERS))) + "]")
"""Any of `_OPENERS`: found by the regex engine, so text without one is passed over in C."""
_LONGEST_TAG = max(len(tag) for tag in TRANSCRIPT_TAGS)


def _folded(char: str) -> str:
    return unicodedata.normalize("NFKC", char).casefold().translate(_FOLDED)


def _opens_tag(text: str, start: int) -> bool:
    """Whether the `<`-like character at `start` opens or closes a transcript tag as a reader
    would see it: zero-width and other format characters skipped anywhere, spaces skipped
    before the name, look-alike characters read as what they look like."""
    seen = ""
    for char in text[start + 1 : start + 1 + 4 * (_LONGEST_TAG + 8)]:
        if unicodedata.category(char) in ("Cf", "Mn"):
            continue
        if char.isspace() and seen in ("", "/"):
            continue
        seen += _folded(char)
        name = seen.removeprefix("/")
        if len(name) > _LONGEST_TAG:
            break
    name = seen.removeprefix("/")
    return any(
        name.startswith(tag)
        and not (name[len(tag) : len(tag) + 1].isalnum() or name[len(tag) : len(tag) + 1] == "_")
        for tag in TRANSCRIPT_TAGS
    )


def neutralise_tags(text: str) -> str:
    """`text` with the `<` of every opening or closing transcript tag it holds written `&lt;`,
    so a reply cannot close its own turn or the transcript and speak to the judge from outside.

    A tag is found as a reader would see it (`_opens_tag`): `< /ai>`, `<\u200b/transcript>`,
    fullwidth `＜/ai＞`, `‹/ai›` and `<⁄ai>` (fraction slash) are tags; the `<`-like character
    that opens one is replaced, whatever it was. Text without such a tag is left as it is."""
    out = []
    last = 0
    for opener in _OPENER.finditer(text):
        index = opener.start()
        if _opens_tag(text, index):
            out.append(text[last:index] + "&lt;")
            last = index + 1
    return "".join(out) + text[last:] if out else text


def render_transcript(turns: Sequence[TurnRecord]) -> str:
    """The conversation as every judge form reads it: inside `<transcript>`, each numbered
    `<turn>` holding the `<human>` message and the `<ai>` reply, with any tag the texts
    themselves contain neutralised (`neutralise_tags`). The system prompts say that everything
    inside is data to evaluate, never instructions."""
    blocks = [
        f'<turn number="{number}">\n<human>\n{neutralise_tags(turn.human)}\n</human>\n'
        f"<ai>\n{neutralise_tags(turn.reply)}\n</ai>\n</turn>"
        for number, turn in enumerate(turns, start=1)
    ]
    return "<transcript>\n" + "\n".join(blocks) + "\n</transcript>"


def transcript_block(turns: Sequence[TurnRecord]) -> str:
    """The transcript as every judge form embeds it in its request, heading included: the one
    place that decides how a transcript sits inside a judge prompt."""
    return f"## Transcript\n\n{render_transcript(turns)}\n\n"


def _field_lines(asked: AskedForm) -> str:
    return "\n".join(
        f'- "{name}": {spec.prompt_text}. {spec.description}'.rstrip()
        for name, spec in asked.reply.fields.items()
    )


def judge_messages(
    rubric: Rubric, turns: Sequence[TurnRecord], judge_form: JudgeForm = "holistic"
) -> tuple[Message, ...]:
    """The first request of a judgment: system prompt, then rubric (holistic) + transcript +
    the fields or questions to answer."""
    asked = rubric.asked(judge_form)
    output = asked.output_template.replace("{fields}", _field_lines(asked))
    body = f"{asked.body}\n\n" if asked.body else ""
    user = f"{body}{transcript_block(turns)}{output}"
    return ({"role": "system", "content": asked.system_prompt}, {"role": "user", "content": user})


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _json_object(raw: str) -> Any:
    fenced = _FENCE.search(raw)
    text = fenced.group(1) if fenced else raw
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object")
    obj, _ = json_raw_decode(text[start:])
    return obj


def _is_cut_off(text: str) -> bool:
    """Whether a JSON object starts in `text` and the text ends before it closes."""
    start = text.find("{")
    if start < 0:
        return False
    depth, in_string, escaped = 0, False, False
    for char in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return False
    return True


def judge_reply_is_whole(completion: Completion) -> bool:
    """False ("ask again") for an empty reply or a JSON object cut off before its end.

    A cut-off object that the model ended itself (`finish_reason` is `length`) is whole, as
    are a malformed or a missing object: asking again would not change them, and the repair
    request in `run_judgment` tells the judge what to fix.
    """
    text = (completion.content or "").strip()
    if not text:
        return False
    return completion.finish_reason == "length" or not _is_cut_off(text)


def parse_judgment(rubric: Rubric, raw: str, judge_form: JudgeForm = "holistic") -> dict[str, Any]:
    """Validate a judge reply in `judge_form`; return its fields (holistic: `reasoning` first;
    checklist: the answers) or raise ValueError saying every problem."""
    try:
        obj = _json_object(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON object is malformed ({exc.msg})") from None
    return rubric.asked(judge_form).reply.validate(obj)


JudgeCall = Callable[[tuple[Message, ...], int], Awaitable[tuple[str, Completion]]]
"""Send judge messages for attempt n; returns (completion key, completion)."""


async def run_judgment(
    rubric: Rubric,
    turns: Sequence[TurnRecord],
    call: JudgeCall,
    *,
    max_repairs: int = 2,
    judge_form: JudgeForm = "holistic",
) -> Verdict:
    """Ask the judge in `judge_form`, repairing invalid replies up to `max_repairs` times."""
    repair_template = rubric.asked(judge_form).repair_template
    messages = judge_messages(rubric, turns, judge_form)
    keys: list[str] = []
    raw = ""
    error = ""
    for attempt in range(max_repairs + 1):
        key, completion = await call(messages, attempt)
        keys.append(key)
        raw = completion.content or ""
        try:
            parsed = parse_judgment(rubric, raw, judge_form)
        except ValueError as exc:
            error = str(exc)
            messages = (
                *messages,
                {"role": "assistant", "content": raw or "(empty reply)"},
                {"role": "user", "content": repair_template.replace("{error}", error)},
            )
            continue
        if judge_form == "checklist":
            reasoning = answer_lines(rubric, parsed)
            parsed = score_checklist(rubric, parsed)
        else:
            reasoning = parsed.pop("reasoning")
        return Verdict("scored", parsed, reasoning, raw, None, attempt + 1, tuple(keys))
    return Verdict("unscored", None, None, raw, error, max_repairs + 1, tuple(keys))
