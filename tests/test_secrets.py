"""Secrets: planted API keys never reach the store, any written file, the output or a traceback.

The loopback server plays a careless proxy that echoes the caller's `Authorization` header in
every error it returns, so the key really does come back in error texts; the tests then grep
every byte aib wrote and printed for it.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

import independence_bench.workflows.runs as runs_workflow
from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.clients.redact import REDACTED, Redactor, secrets_in_env
from support.cli_commands import aib_commands
from support.mock_server import MockConfig, MockServer
from support.store_views import connect

OPENROUTER_KEY = "sk-or-PLANTED-123"
GENERIC_KEY = "sk-aib-PLANTED-456789"
PROXY_KEY = "proxy-PLANTED-secret-0042"
URL_PASSWORD = "url-PLANTED-pass-0077"
PLANTED = (OPENROUTER_KEY, GENERIC_KEY, PROXY_KEY, URL_PASSWORD)
URL_LOGIN_B64 = base64.b64encode(f"aib:{URL_PASSWORD}".encode())
"""What the echoing proxy sees of the URL's credentials: `Authorization: Basic <this>`."""


def _written_bytes(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _assert_nothing_leaked(texts: dict[str, bytes]) -> None:
    for where, data in texts.items():
        assert URL_LOGIN_B64 not in data, f"the URL's login (as Basic auth) leaked into {where}"
        for key in PLANTED:
            assert key.encode() not in data, f"{key} leaked into {where}"
            assert key[-10:].encode() not in data, f"the end of {key} leaked into {where}"


@pytest.fixture()
def leaky_server() -> Any:
    config = MockConfig(echo_auth=True, fault_rate=0.5, fault_kinds=("500", "503", "429"), seed=5)
    with MockServer(config) as server:
        yield server


def test_planted_keys_appear_nowhere_aib_writes_or_prints(
    leaky_server: MockServer, aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", OPENROUTER_KEY)
    monkeypatch.setenv("PROXY_KEY", PROXY_KEY)
    Path(".env").write_text(f"AIB_API_KEY={GENERIC_KEY}\n", encoding="utf-8")
    Path("models.yaml").write_text(
        f"""
models:
  - id: scripted-firm
    base_url: {leaky_server.base_url.replace("://", f"://aib:{URL_PASSWORD}@")}
  - id: scripted-caving
    base_url: {leaky_server.base_url}
    api_key_env: PROXY_KEY
judge:
  id: scripted-judge
  base_url: {leaky_server.base_url}
""",
        encoding="utf-8",
    )
    data = Path("aib-data")
    outputs: dict[str, bytes] = {}
    # Two quick attempts per call (the CLI has no retry flag): at a 50% fault rate many items
    # fail, and their stored error is the server's, echoed key included — unless redacted.
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    commands: list[tuple[str, ...]] = [
        ("run", "--config", "models.yaml", "--runs", "1"),
        ("estimate", "--config", "models.yaml", "--runs", "1"),
        ("judge", "--judge", "scripted-judge", "--base-url", leaky_server.base_url),
    ]
    commands += _store_readers()
    for command in commands:
        result = aib(*command, "--data-dir", str(data))
        outputs[" ".join(command)] = (result.out + result.err).encode()
    assert outputs["run --config models.yaml --runs 1"]
    with connect(data) as db:
        errors = [row[0] for row in db.execute("SELECT error FROM items WHERE error IS NOT NULL")]
    assert errors, "no item failed: the echoed key never came back, so the test proves nothing"
    assert all(REDACTED in error for error in errors)
    assert any("Authorization" in error for error in errors)
    assert len(outputs) >= 5
    written = _written_bytes(Path.cwd())
    assert any(p.suffix == ".sqlite3" for p in written)
    inputs = (".env", "models.yaml")  # what the user wrote, secrets and all
    _assert_nothing_leaked({str(k): v for k, v in written.items() if k.name not in inputs})
    _assert_nothing_leaked(outputs)


def _store_readers() -> list[tuple[str, ...]]:
    """Every other command that reads the store and needs no argument (reports, viewer…)."""
    out = []
    for name, command in sorted(aib_commands().items()):
        params = {p.name: p for p in command.params}
        if name in ("run", "estimate", "judge") or "data_dir" not in params:
            continue
        if any(p.required for p in command.params):
            continue
        args: tuple[str, ...] = (name,)
        if "resamples" in params:
            args += ("--resamples", "100")
        if "charts" in params:
            args += ("--no-charts",)
        out.append(args)
    return out


def test_a_crash_traceback_is_printed_without_the_key(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", OPENROUTER_KEY)

    def explode(*_: object, **__: object) -> None:
        raise RuntimeError(f"internal bug while holding Bearer {OPENROUTER_KEY}")

    monkeypatch.setattr(runs_workflow, "runs_command", explode)
    result = aib("runs")
    assert result.code == 1
    assert "Traceback" in result.err and "RuntimeError: internal bug" in result.err
    _assert_nothing_leaked({"stderr": result.err.encode(), "stdout": result.out.encode()})


def test_the_redactor_removes_known_secrets_and_key_shaped_strings() -> None:
    env = {"OPENROUTER_API_KEY": OPENROUTER_KEY, "GITHUB_TOKEN": "ghp_abcdefgh1234", "HOME": "/r"}
    redact = Redactor(secrets_in_env(env))
    assert secrets_in_env({"AIB_API_KEY": "none", "PATH": "/usr/bin:/bin:/sbin"}) == ()
    text = (
        f"HTTP 401: bad key {OPENROUTER_KEY} (Authorization: Bearer xyz.123-abc) "
        "token ghp_abcdefgh1234 and an sk-proj-abcdefghij that was never configured"
    )
    cleaned = redact(text)
    assert cleaned == (
        f"HTTP 401: bad key {REDACTED} (Authorization: {REDACTED}) "
        f"token {REDACTED} and an {REDACTED} that was never configured"
    )
    assert redact("a reply about skis and sk-8 boards") == "a reply about skis and sk-8 boards"
    assert redact("GET http://me:pw@host:8/v1 failed") == f"GET http://{REDACTED}@host:8/v1 failed"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1", "is not a valid URL (Invalid IPv6 URL)"),
        ("http://256.256.256.256/v1", "256.256.256.256 is not an IPv4 address"),
        ("http://127.0.0.1:99999/v1", "is not a valid URL (Port out of range 0-65535)"),
        ("file:///etc/passwd", "must start with http:// or https://"),
    ],
)
def test_a_malformed_base_url_is_one_line_with_exit_2(aib: Any, url: str, problem: str) -> None:
    result = aib("run", "--models", "scripted-firm", "--base-url", url, "--judge", "x")
    assert result.code == 2, result.err
    assert result.err.strip().splitlines() == [
        f"aib: error: base_url {url!r}"
        + (" " if problem.startswith("is") or problem.startswith("must") else ": ")
        + problem
    ]
    assert not Path("aib-data").exists()


def test_url_credentials_and_an_api_key_together_are_refused(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROXY_KEY", PROXY_KEY)
    url = f"http://aib:{URL_PASSWORD}@127.0.0.1:9/v1"
    Path("models.yaml").write_text(
        f"models:\n  - id: m\n    base_url: {url}\n    api_key_env: PROXY_KEY\n", "utf-8"
    )
    result = aib("run", "--config", "models.yaml", "--judge", "m")
    assert result.code == 2
    assert "credentials in the URL and an API key" in result.err
    _assert_nothing_leaked({"stderr": result.err.encode(), "stdout": result.out.encode()})
