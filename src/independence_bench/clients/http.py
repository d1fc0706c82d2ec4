"""The one HTTP stack of an endpoint: JSON POSTs (every model call) and GETs on a pooled session.

`openai_compat.py` speaks the chat-completions API (request bodies, error meanings, replies);
this module only carries a JSON body to an endpoint and the reply back, and fetches `GET
/models` over the same session. It exists for speed. At
hundreds of calls in flight the official SDK's request pipeline (typed transforms, an options
model per request, several URL parses, httpx request and header objects) cost about 1 ms of CPU
per call on the benchmark machine, more than the rest of the harness spends on a call, while an
aiohttp POST costs about 0.3 ms; and httpx's connection pool walks every open connection on
every request. `benchmarks/throughput.py` measures the difference (README, "Performance").

The session is created on first use inside the running event loop. The proxy, if the environment
names one for the base URL (`HTTPS_PROXY`, `NO_PROXY`, …), is looked up once: aiohttp's own
`trust_env` looks it up (and reads `~/.netrc`) on a worker thread for every request. The
connections of every endpoint of a run share one `ConnectionBudget`, the open-file budget of
`open_files.py`: a request waits for a slot before it takes a connection, and each session's
pool holds no more than the budget, so no number of calls in flight runs the process out of
file descriptors. Within the budget the endpoint's limiter decides how many calls are in flight.
Transport failures (refused, reset, timed out) raise `HttpFailure`; every HTTP status, error or
not, comes back as an `HttpReply`, its body read within the caps of `reply_body.py`. A POST is
never redirected: aiohttp, like browsers, would resend a 301/302's POST as a GET without its
body, so a redirect is an `HttpFailure` naming where it points.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit
from urllib.request import getproxies, proxy_bypass

from independence_bench.clients.redact import without_url_credentials
from independence_bench.clients.reply_body import BodyBudget, BodyRefused, read_body
from independence_bench.errors import UserError
from independence_bench.text.lossless import json_bytes, json_loads
from independence_bench.version import __version__

if TYPE_CHECKING:
    import aiohttp


class HttpFailure(Exception):
    """No HTTP reply at all: the connection failed, was dropped, or the call timed out."""

    def __init__(self, message: str, *, timed_out: bool, retryable: bool = True) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.retryable = retryable
        """False when asking again cannot help (a body over its cap, a redirected POST)."""


@dataclass(frozen=True)
class HttpReply:
    """An HTTP reply: status, the headers a caller may need, and the raw body."""

    status: int
    content_type: str
    retry_after: str | None
    body: bytes
    rate_limits: Mapping[str, str] = field(default_factory=dict)
    """The `X-RateLimit-*` headers, lower-cased (OpenRouter sends them on its own 429s)."""

    def json(self) -> Any:
        """The body as JSON (bytes that are not UTF-8 kept, `lossless.decode_body`); raises
        `ValueError` when it is not JSON."""
        return json_loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url`, or None (none set, or `NO_PROXY` matches)."""
    parts = urlsplit(url)
    if parts.hostname is None or proxy_bypass(parts.hostname):
        return None
    return getproxies().get(parts.scheme)


def _split_credentials(url: str) -> tuple[str, str | None]:
    """`http://user:pw@host/v1` → (`http://host/v1`, basic auth): the URL kept in memory and
    in error texts carries no password."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    login = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), login


class ConnectionBudget:
    """The connections all endpoints of a run may hold open together; None: no bound."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._slots = asyncio.Semaphore(limit) if limit is not None else None
        self.bodies = BodyBudget()
        """What the reply bodies being read may hold together (`reply_body.py`)."""

    async def __aenter__(self) -> None:
        if self._slots is not None:
            await self._slots.acquire()

    async def __aexit__(self, *_: object) -> None:
        if self._slots is not None:
            self._slots.release()


class JsonPoster:
    """POSTs JSON bodies to paths under one base URL, over one pooled session."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        timeout_s: float,
        connections: ConnectionBudget | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._base_url, login = _split_credentials(base_url.rstrip("/"))
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"ai-independence-bench/{__version__}",
            **(headers or {}),
        }
        if api_key and login is not None:
            raise UserError(
                f"{without_url_credentials(base_url)} has credentials in the URL and an API key "
                "is set too; both would be the Authorization header, so give only one"
            )
        if api_key:
            _refuse_unsendable_key(api_key, base_url)
            self._headers["Authorization"] = f"Bearer {api_key}"
        elif login is not None:
            self._headers["Authorization"] = login
        import aiohttp  # here, not at the top: a re-run with every call stored never needs it

        self._timeout_s = timeout_s
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._proxy = proxy_for(self._base_url)
        self._connections = connections or ConnectionBudget(None)
        self._session: aiohttp.ClientSession | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            limit = self._connections.limit or 0  # aiohttp: 0 is no limit
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0),
                headers=self._headers,
                timeout=self._timeout,
            )
        return self._session

    async def post(self, path: str, payload: Mapping[str, Any]) -> HttpReply:
        """Send `payload` as JSON to `base_url + path`; raise `HttpFailure` if no reply came."""
        data = json_bytes(payload)
        return await self._send("POST", path, data, None)

    async def get(self, path: str, *, connect_timeout_s: float) -> HttpReply:
        """`GET base_url + path`; raise `HttpFailure` if no reply came.

        A host that does not accept the connection within `connect_timeout_s` fails fast; one
        that accepted it gets as long as a model call (a single-slot local server answers only
        once its current generation is done)."""
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=self._timeout_s, sock_connect=connect_timeout_s)
        return await self._send("GET", path, None, timeout)

    async def _send(
        self, method: str, path: str, data: bytes | None, timeout: aiohttp.ClientTimeout | None
    ) -> HttpReply:
        import aiohttp

        try:
            session = self._session_now()
            url = self._base_url + path
            async with (
                self._connections,
                session.request(
                    method,
                    url,
                    data=data,
                    proxy=self._proxy,
                    timeout=timeout or self._timeout,
                    allow_redirects=method != "POST",
                ) as response,
            ):
                if 300 <= response.status < 400 and method == "POST":
                    raise HttpFailure(_redirect_text(response), timed_out=False, retryable=False)
                try:
                    body = await read_body(response, budget=self._connections.bodies)
                except BaseException:
                    response.close()  # a body left unread (over its cap) is not waited for
                    raise
                if not response.content.at_eof():
                    response.close()  # an error body cut at its cap: drop the connection
                # (a body read to its end leaves the connection to the pool, kept alive)
                return HttpReply(
                    status=response.status,
                    content_type=response.headers.get("Content-Type", ""),
                    retry_after=response.headers.get("Retry-After"),
                    body=body,
                    rate_limits={
                        name.lower(): value
                        for name, value in response.headers.items()
                        if name.lower().startswith("x-ratelimit-")
                    },
                )
        except BodyRefused as exc:
            raise HttpFailure(str(exc), timed_out=False, retryable=exc.retryable) from None
        except TimeoutError as exc:  # aiohttp's timeouts subclass it
            raise HttpFailure("request timed out", timed_out=True) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise HttpFailure(str(exc) or type(exc).__name__, timed_out=False) from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _redirect_text(response: aiohttp.ClientResponse) -> str:
    location = without_url_credentials(response.headers.get("Location", "")[:300]) or "nowhere"
    return (
        f"HTTP {response.status}: the endpoint redirects calls to {location}; "
        "set base_url to the address it names (a redirected POST is not followed)"
    )


def _refuse_unsendable_key(key: str, base_url: str) -> None:
    """A key with a control or non-ASCII character cannot go in a header (aiohttp raised a
    traceback mid-run); say where, never what."""
    for position, char in enumerate(key, start=1):
        if not " " < char < "\x7f":
            raise UserError(
                f"the API key for {without_url_credentials(base_url)} has a space, control or "
                f"non-ASCII character at position {position} of {len(key)}; copy the key "
                "again (one line, nothing around it)"
            )
