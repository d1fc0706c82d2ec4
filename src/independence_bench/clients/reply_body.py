"""How much of a reply body is read from the network, and how much all bodies hold together.

A server decides how long its body is: one 1 GB streamed reply once took the process to 4.2 GB,
and at 2,048 calls in flight one bad endpoint could get it killed with every call in flight
lost. So a body is read from the stream chunk by chunk and never past a cap: `BODY_CAP_BYTES`
for a reply (more than any reply that `engine.reply_cap` would keep whole), `ERROR_BODY_CAP_BYTES`
for an error status (only its start becomes the error text; the rest is left unread). Each body
may hold `FREE_BODY_BYTES` on its own; what it holds beyond that is drawn from the run's
`BodyBudget`, shared by every endpoint, so many long replies at once cannot add up past
`LARGE_BODIES_BYTES`. A body over its cap fails the call for good (the endpoint is sending
something no reply needs); a body the shared budget cannot hold now fails it as retryable.
`benchmarks/flood_memory.py` measures the peak with 2,048 flooding replies in flight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

BODY_CAP_BYTES = 8 * 2**20
"""8 MiB: a reply whose text fields each exceed `REPLY_CAP_CHARS` is cut anyway."""
ERROR_BODY_CAP_BYTES = 64 * 2**10
"""64 KiB of an error reply are read; its message is cut further (`ERROR_TEXT_CHARS`)."""
ERROR_TEXT_CHARS = 2_000
"""Characters kept of a server's error message (5 MB error texts once made a 79 MB store)."""
FREE_BODY_BYTES = 64 * 2**10
"""What each body may hold without drawing on the shared budget (an ordinary reply is 2-20 KiB)."""
LARGE_BODIES_BYTES = 256 * 2**20
"""What all bodies of a run together may hold beyond their free part."""


class BodyRefused(Exception):
    """A body was not read whole: over its cap (not retryable) or over the shared budget."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class BodyBudget:
    """The bytes beyond `FREE_BODY_BYTES` that all bodies being read may hold together."""

    def __init__(self, limit: int = LARGE_BODIES_BYTES) -> None:
        self.limit = limit
        self.held = 0

    def draw(self, size: int) -> bool:
        """Take `size` bytes from the budget; False (and nothing taken) when it has not got them."""
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        self.held -= size


def cut_error_text(text: str, limit: int = ERROR_TEXT_CHARS) -> str:
    """A server's error text cut to `limit` characters, saying how many were dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} characters cut]"


async def read_body(response: aiohttp.ClientResponse, *, budget: BodyBudget) -> bytes:
    """The body of `response`, read from the stream up to its cap; raises `BodyRefused`.

    An error status keeps the first `ERROR_BODY_CAP_BYTES` and leaves the rest unread."""
    is_error = response.status >= 400
    cap = ERROR_BODY_CAP_BYTES if is_error else BODY_CAP_BYTES
    declared = response.content_length
    if not is_error and declared is not None and declared > cap:
        raise BodyRefused(_too_long(f"declares {declared:,} bytes"), retryable=False)
    chunks: list[bytes] = []
    size = drawn = 0
    try:
        async for chunk in response.content.iter_any():
            if size + len(chunk) > cap:
                if is_error:
                    chunks.append(chunk[: cap - size])
                    break
                raise BodyRefused(_too_long(f"sent more than {cap:,} bytes"), retryable=False)
            size += len(chunk)
            beyond = size - FREE_BODY_BYTES - drawn
            if beyond > 0:
                if not budget.draw(beyond):
                    raise BodyRefused(
                        "reply body refused: long replies being read already hold "
                        f"{budget.limit // 2**20} MiB; the call is asked again later",
                        retryable=True,
                    )
                drawn += beyond
            chunks.append(chunk)
    finally:
        budget.give_back(drawn)
    return b"".join(chunks)


def _too_long(what: str) -> str:
    return (
        f"reply body too long: the endpoint {what}, over the {BODY_CAP_BYTES // 2**20} MiB "
        "that any reply needs; stopped reading (is the base URL a model API?)"
    )
