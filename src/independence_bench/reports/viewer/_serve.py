"""Serving the viewer on 127.0.0.1: only the files `write_viewer` wrote, nothing else.

`aib view --out . --serve` in a project folder served everything under it: `.env` with its
key, and `/etc/passwd` through a symlink. A request is answered only when its path is one the
viewer writes (`index.html`, `app.js`, `style.css`, `data/index.js`, `data/shared.js`,
`data/models/m-<hash>.js`) and every part of that path in the folder is a real directory or
regular file, not a symbolic link; anything else is a 404. A `Host` other than 127.0.0.1 or
localhost at the bound port is refused (DNS rebinding).
"""

from __future__ import annotations

import functools
import os
import re
import stat
import urllib.parse
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from independence_bench.errors import UserError

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SERVED_PATH = re.compile(
    r"/(?:index\.html|app\.js|style\.css|data/(?:index|shared)\.js|data/models/m-[0-9a-f]{20}\.js)"
)
"""The paths of the files `write_viewer` writes (`/` is `/index.html`)."""


def served_file(folder: Path, url_path: str) -> Path | None:
    """The file of `folder` a request for `url_path` may read, or None: only a path the viewer
    writes, and only through real directories to a regular file (no symbolic link)."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(url_path).path, errors="strict")
    if path == "/":
        path = "/index.html"
    if SERVED_PATH.fullmatch(path) is None:
        return None
    here = folder
    parts = path.strip("/").split("/")
    for depth, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return None
        last = depth == len(parts) - 1
        if not (stat.S_ISREG(mode) if last else stat.S_ISDIR(mode)):
            return None
    return here


class _ViewerHandler(SimpleHTTPRequestHandler):
    """Serves the viewer's own files (`served_file`): no directory listings, no logging, a
    strict CSP."""

    server_version = "aib-viewer"
    sys_version = ""

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def list_directory(self, path: Any) -> None:
        self.send_error(404, "No listing")
        return None

    def _host_is_ours(self) -> bool:
        """Only `Host: 127.0.0.1:<port>` or `localhost:<port>`: a page on another site whose
        name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name and is
        refused, so it cannot read the transcripts."""
        port = getattr(self.server, "server_port", 0)  # HTTPServer sets it when bound
        host = (self.headers.get("Host") or "").strip().lower()
        if host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return True
        self.send_error(421, "Misdirected Request: use http://127.0.0.1 or localhost")
        return False

    def _is_viewer_file(self) -> bool:
        try:
            allowed = served_file(Path(self.directory), self.path) is not None
        except UnicodeDecodeError:
            allowed = False
        if not allowed:
            self.send_error(404, "Not a file of the viewer")
        return allowed

    def do_GET(self) -> None:
        if self._host_is_ours() and self._is_viewer_file():
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._host_is_ours() and self._is_viewer_file():
            super().do_HEAD()

    def log_message(self, format: str, *args: Any) -> None:
        return None


def make_server(folder: Path, port: int) -> ThreadingHTTPServer:
    """An HTTP server for `folder` on 127.0.0.1:`port` (0 picks a free port); not started."""
    handler = functools.partial(_ViewerHandler, directory=str(folder))
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise UserError(f"cannot serve on 127.0.0.1:{port}: {exc}; pick another --port") from None


def serve_viewer(folder: Path, port: int, *, echo: Callable[[str], None]) -> None:
    """Serve the viewer on 127.0.0.1 until interrupted (Ctrl-C)."""
    server = make_server(folder, port)
    host, bound = server.server_address[:2]
    echo(f"serving the viewer at http://{host!s}:{bound}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        echo("stopped")
    finally:
        server.server_close()
