"""The reply cap: how much of one reply `aib run` keeps, and the flag on a reply it cut.

A server can send a reply of any size (a looping model, a hostile endpoint: 5 MB replies once
made a 604 MB store). A reply whose content, reasoning or any tool call's arguments exceed
`REPLY_CAP_CHARS` characters is cut to that length before it is used or stored: the next turn's
request, the transcript and the judge all see the same cut text, and a re-run finds the same
stored reply. `Completion.cut_chars` counts the characters dropped; `aib runs` shows how many
replies of each run were cut. A cut tool call's arguments are no longer whole JSON; the
conversation reads them as a truncated call (`conversation.extract_reply`).
"""

from __future__ import annotations

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
    if not dropped:
        return completion
    return replace(
        completion,
        content=content,
        reasoning=reasoning,
        tool_calls=calls,
        cut_chars=completion.cut_chars + dropped,
    )
