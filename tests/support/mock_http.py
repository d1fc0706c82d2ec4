"""HTTP/1.1 framing for the mock server: reading one request, writing one response.

Keep-alive, Content-Length bodies only (a chunked request is refused with 411), JSON, HTML or
plain-text bodies. No dependencies beyond asyncio streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus

from independence_bench.text.lossless import json_dumps
from support.mock_behaviours import MockReply
from support.mock_hostile import INVALID_UTF8_BYTES, INVALID_UTF8_MARK


@dataclass(frozen=True)
class HttpRequest:
    """One parsed HTTP/1.1 request."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    keep_alive: bool
    query: str = ""
    """The target's query string, without `?` (OpenRouter's paged model list reads it)."""


class HttpRequestError(Exception):
    """A request the server cannot parse; answered with `status` and then the connection closes."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    """Read one request from a connection; None when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        raise HttpRequestError(400, f"malformed request line {lines[0]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpRequestError(411, "chunked request bodies are not supported; send Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise HttpRequestError(400, "Content-Length is not a number") from None
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await reader.readexactly(length) if length > 0 else b""
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
    path, _, query = target.partition("?")
    return HttpRequest(method.upper(), path, headers, body, keep_alive, query)


def render_response(reply: MockReply, *, keep_alive: bool) -> bytes:
    """Serialise a reply as an HTTP/1.1 response with a JSON (or HTML) body."""
    if reply.html is not None:
        body, content_type = reply.html.encode(), "text/html; charset=utf-8"
    elif reply.plain is not None:
        body, content_type = reply.plain.encode(), "text/plain; charset=utf-8"
    else:
        body, content_type = json_dumps(reply.payload).encode(), "application/json"
        body = body.replace(INVALID_UTF8_MARK.encode(), INVALID_UTF8_BYTES)
    lines = [
        f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
        *(f"{name}: {value}" for name, value in reply.headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
