"""Keeping API keys out of everything aib writes: error texts, the store, output, tracebacks.

Keys live only in the environment mapping handed to a `ClientPool` and in the SDK clients made
from it. What can carry them further is text from outside: an error body from a proxy that
echoes the `Authorization` header, an SDK message, a traceback. A `Redactor` replaces every
known secret value, anything shaped like a bearer token or an `sk-` key, and the
`user:password@` of any URL with `[redacted]`; a model's stored configuration keeps its URLs
without credentials (`config.ModelSpec.stored_config`). It is applied where such text enters
(the HTTP client's errors) and where text leaves (the CLI's error lines and tracebacks); model
replies are not touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8
"""Shorter values (e.g. `AIB_API_KEY=none`) are not treated as secrets."""
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s/?#]*@")
"""The `user:password@` of a URL (`http://user:pw@host/v1`), up to the authority's last `@`:
a password may hold a raw `@` (`http://u:p@ss@host`), and only the last one ends it."""
_LOOSE_CREDENTIALS = re.compile(r"(?<=://)\S*@")
"""In free text, everything from `://` to the last `@` before a space: a password with a raw
`/`, `?` or `#` ends the URL's authority early, and its tail must not be shown either."""
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|password|secret|sig)=)[^&;#\s]+"
)
"""A key in a URL's query string (`?api_key=…`)."""
_SHAPES = (
    re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=*-]+"),
    re.compile(r"(?i)\bBasic\s+[A-Za-z0-9+/]{6,}=*"),
    re.compile(r"\bsk-[A-Za-z0-9_*-]{6,}"),
)


def without_url_credentials(text: str) -> str:
    """`text` with the credentials of every URL in it replaced: `http://[redacted]@host/v1`."""
    return _URL_CREDENTIALS.sub(f"{REDACTED}@", text)


def url_shown(url: str) -> str:
    """A URL as a message shows it: no credentials (whatever characters they hold), and no
    query or fragment values, which may carry a key (`?api_key=…`)."""
    shown = _LOOSE_CREDENTIALS.sub(f"{REDACTED}@", url)
    for mark in ("?", "#"):
        head, found, _ = shown.partition(mark)
        shown = f"{head}{mark}…" if found else shown
    return shown


def secrets_in_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names say they are secrets (`*_KEY`, `*_TOKEN`, …)."""
    return tuple(
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_CHARS
    )


class Redactor:
    """Replaces known secrets and key-shaped strings in a text with `[redacted]`."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        values = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_CHARS}
        # Longest first, so a key that contains another is replaced whole.
        self._secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        for shape in _SHAPES:
            text = shape.sub(REDACTED, text)
        text = _QUERY_SECRET.sub(rf"\1{REDACTED}", text)
        return _LOOSE_CREDENTIALS.sub(f"{REDACTED}@", text)
