"""Secrets typed where they do not belong never reach a file, an output or a message.

Round 2 of the planted-secret tests (`test_secrets.py` is round 1): a raw `@` in a URL's
password (`http://u:p@ss@host`), a key in a URL's query string (`?api_key=`), a password with
a raw `/`, and a key typed into `api_key_env` where a variable name belongs. Each planted value
is grepped for in every byte aib wrote and printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.endpoints import RetryPolicy
from independence_bench.clients.redact import Redactor, url_shown, without_url_credentials
from support.mock_server import MockConfig, MockServer
from test_secrets import _store_readers, _written_bytes

AT_PASSWORD = "ssPLANTED@tail-0099"
QUERY_KEY = "qsPLANTED-0101"
TYPED_KEY = "sk-or-v1-ekPLANTED0202abcdef"
SLASH_PASSWORD = "slPLANTED/x-0303"
PLANTED = ("PLANTED@tail", "tail-0099", QUERY_KEY, "ekPLANTED0202", "slPLANTED", "x-0303")


def _assert_nothing_leaked(texts: dict[str, bytes]) -> None:
    for where, data in texts.items():
        for secret in PLANTED:
            assert secret.encode() not in data, f"{secret} leaked into {where}"


def test_url_credentials_of_any_characters_are_redacted() -> None:
    url = f"http://aib:{AT_PASSWORD}@127.0.0.1:8000/v1"
    assert without_url_credentials(url) == "http://[redacted]@127.0.0.1:8000/v1"
    assert Redactor()(f"failed: {url} (x)") == "failed: http://[redacted]@127.0.0.1:8000/v1 (x)"
    assert url_shown(f"http://aib:{SLASH_PASSWORD}@h/v1") == "http://[redacted]@h/v1"
    assert url_shown(f"http://h/v1?api_key={QUERY_KEY}") == "http://h/v1?…"
    assert QUERY_KEY not in Redactor()(f"GET http://h/v1/models?api_key={QUERY_KEY}&x=1 failed")


def test_a_raw_at_in_a_url_password_reaches_no_file_or_output(
    aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RetryPolicy.__init__, "__defaults__", (2, 0.0, 0.0))
    config = MockConfig(echo_auth=True, fault_rate=0.5, fault_kinds=("500",), seed=3)
    with MockServer(config) as server:
        url = server.base_url.replace("://", f"://aib:{AT_PASSWORD}@")
        Path("models.yaml").write_text(
            f"models:\n  - id: scripted-firm\n    base_url: {url}\n"
            f"judge:\n  id: scripted-judge\n  base_url: {server.base_url}\n",
            encoding="utf-8",
        )
        outputs: dict[str, bytes] = {}
        commands = [("run", "--config", "models.yaml", "--runs", "1"), *_store_readers()]
        for command in commands:
            result = aib(*command, "--data-dir", "d")
            outputs[" ".join(command)] = (result.out + result.err).encode()
        view = aib("view", "--data-dir", "d", "--out", "v", "--resamples", "100")
        outputs["view"] = (view.out + view.err).encode()
    assert server.seen.request_count > 0
    written = _written_bytes(Path.cwd())
    assert any(p.suffix == ".sqlite3" for p in written) and any(p.suffix == ".js" for p in written)
    _assert_nothing_leaked({str(k): v for k, v in written.items() if k.name != "models.yaml"})
    _assert_nothing_leaked(outputs)


@pytest.mark.parametrize(
    "entry",
    [
        "    base_url: http://127.0.0.1:9/v1?api_key=" + QUERY_KEY,
        "    base_url: http://aib:" + SLASH_PASSWORD + "@127.0.0.1:9/v1",
        "    base_url: http://127.0.0.1:9/v1\n    api_key_env: " + TYPED_KEY,
    ],
)
def test_a_secret_typed_where_it_does_not_belong_is_refused_without_echo(
    entry: str, aib: Any
) -> None:
    Path("models.yaml").write_text(f"models:\n  - id: m\n{entry}\n", encoding="utf-8")
    outputs = {}
    for command in (("run",), ("estimate",)):
        result = aib(*command, "--config", "models.yaml", "--data-dir", "d")
        assert result.code == 2, result.out + result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        outputs[command[0]] = (result.out + result.err).encode()
    _assert_nothing_leaked(outputs)
    written = _written_bytes(Path.cwd())
    _assert_nothing_leaked({str(k): v for k, v in written.items() if k.name != "models.yaml"})
