"""The reply cap: how much of one reply `aib run` keeps, and the flag on a reply it cut.

A server can send a reply of any size (a looping model, a hostile endpoint: 5 MB replies once
made a 604 MB store). A reply whose content, reasoning or any tool call's arguments exceed
`REPLY_CAP_CHARS` characters is cut to that length before it is used or stored: the next turn's
request, the transcript and the judge all see the same cut text, and a re-run finds the same
stored reply. `Completion.cut_chars` counts the characters dropped; `aib runs` shows how many
replies of each run were cut. A cut tool call's arguments are no longer whole JSON; the
conversation reads them as a truncated call (`conversation.extract_reply`). OpenRouter's
`reasoning_details` must go back unmodified or not at all, so blocks whose JSON is over the cap
are dropped whole (their text stays in `reasoning`, cut like any text); the provenance texts
(generation id, native finish reason, serving provider) are cut like the others.
"""

from __future__ import annotations

import json
from dataclasses import replace

from independence_bench.clients.protocol import Completion

REPLY_CAP_CHARS = 65_536
"""Characters kept of each text field of one reply (64 Ki; an ordinary reply is under 8 Ki)."""


def cap_reply(completion: Completion, cap: int = REPLY_CAP_CHARS) -> Completion:
    """`completion` with each text field cut to `cap` characters, `cut_chars` counting what was
    dropped; the same object when nothing exceeds the cap."""
    dropped = 0

    def cut(text: str | None) -> str | None:
        nonlocal dropped
        if text is None or len(text) <= cap:
            return text
        dropped += len(text) - cap
        return text[:cap]

    content = cut(completion.content)
    reasoning = cut(completion.reasoning)
    calls = tuple(replace(c, arguments=cut(c.arguments) or "") for c in completion.tool_calls)
    details = completion.reasoning_details
    if details:
        size = len(json.dumps([dict(block) for block in details], ensure_ascii=False))
        if size > cap:
            dropped += size
            details = ()
    generation_id = cut(completion.generation_id)
    native_finish_reason = cut(completion.native_finish_reason)
    served_by = cut(completion.served_by)
    answered_model = cut(completion.answered_model)
    if not dropped:
        return completion
    return replace(
        completion,
        content=content,
        reasoning=reasoning,
        tool_calls=calls,
        reasoning_details=details,
        cut_chars=completion.cut_chars + dropped,
        generation_id=generation_id,
        native_finish_reason=native_finish_reason,
        served_by=served_by,
        answered_model=answered_model,
    )
