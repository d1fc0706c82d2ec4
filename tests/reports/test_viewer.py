"""`aib view`: the viewer's files, their escaping, and the local server (no browser needed)."""

from __future__ import annotations

import json
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.conversations.conversation import system_prompt
from independence_bench.errors import UserError
from independence_bench.reports.viewer import (
    ASSETS,
    SLUG_PATTERN,
    js_json,
    make_server,
    model_slug,
    unpack_model_data,
)
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.view import ViewOptions, build_viewer
from support.report_fixtures import FEW_RESAMPLES, HOSTILE_REPLY, build_store

HOSTILE_LABEL = '../../evil"<script>window.__pwned=5</script>'


def _parse_js_data(script: str, prefix: str) -> Any:
    """Undo `js_json`: the JSON string literal inside `JSON.parse(...)`, then the JSON."""
    assert script.startswith(prefix + "JSON.parse(") and script.endswith(");\n")
    literal = script[len(prefix + "JSON.parse(") : -3]
    return json.loads(json.loads(literal))


@pytest.fixture()
def viewer(tmp_path: Path) -> Path:
    store = build_store(tmp_path / "store", {"steady": 0.9, HOSTILE_LABEL: 0.4})
    with store.transaction() as db:
        # Every reply and the reasoning of one item turn hostile.
        db.execute("UPDATE texts SET body = replace(body, 'reply 1', ?)", (HOSTILE_REPLY,))
        db.execute("UPDATE completions SET reasoning = ?", (HOSTILE_REPLY,))
        db.execute("UPDATE judgments SET reasoning = ?", (HOSTILE_REPLY,))
    store.close()
    index = build_viewer(ViewOptions(data_dir=tmp_path / "store", resampling=FEW_RESAMPLES))
    assert index == tmp_path / "store" / "viewer" / "index.html"
    return index.parent


def test_js_json_cannot_break_out_of_script_or_string() -> None:
    value = {"reply": "</script><script>alert(1)</script> <!-- \u2028\u2029 & \"'\\"}
    expression = js_json(value)
    assert not re.search("[<>&\u2028\u2029]", expression)
    assert expression.startswith('JSON.parse("') and expression.endswith('")')
    assert json.loads(json.loads(expression[len("JSON.parse(") : -1])) == value


def test_model_files_are_named_by_hash_never_by_label() -> None:
    slug = model_slug("v2", HOSTILE_LABEL)
    assert SLUG_PATTERN.match(slug)
    assert slug != model_slug("lite", HOSTILE_LABEL) != model_slug("v2", "other")


def test_viewer_files_hold_the_data_escaped(viewer: Path) -> None:
    for name in ASSETS:
        assert (viewer / name).is_file()
    models = sorted((viewer / "data" / "models").iterdir())
    assert [p.name for p in models] == sorted(
        f"{model_slug('v2', label)}.js" for label in ("steady", HOSTILE_LABEL)
    )
    for path in [viewer / "data" / "index.js", viewer / "data" / "shared.js", *models]:
        script = path.read_text("utf-8")
        assert not re.search("[<>\u2028\u2029]", script), path
    index = _parse_js_data((viewer / "data" / "index.js").read_text(), "window.AIB_INDEX = ")
    (suite,) = index["suites"]
    assert suite["standing"]["standing"] == "not calibrated"
    assert suite["standing"]["caption"].startswith(f"Judge {suite['judge']}: not calibrated")
    rows = {row["model"]: row for row in suite["models"]}
    assert set(rows) == {"steady", HOSTILE_LABEL}
    assert rows["steady"]["index"] > rows[HOSTILE_LABEL]["index"]
    assert rows["steady"]["ci_low"] <= rows["steady"]["index"] <= rows["steady"]["ci_high"]
    assert [s["id"] for s in suite["scenarios"]][:2] == ["direct", "tool_context"]
    assert HOSTILE_REPLY not in json.dumps(index)  # transcripts stay in the per-model files

    slug = rows[HOSTILE_LABEL]["slug"]
    path = viewer / "data" / "models" / f"{slug}.js"
    packed = _parse_js_data(path.read_text(), f'window.AIB_MODELS["{slug}"] = ')
    data = unpack_model_data(packed, _shared(viewer))
    assert data["model"] == HOSTILE_LABEL and [r["run"] for r in data["runs"]] == [1, 2]
    assert len(data["items"]) == 2 * 15
    item = next(i for i in data["items"] if i["scenario"] == "boundary_gradual_erosion")
    assert item["turns"][0]["reply"].endswith(HOSTILE_REPLY)
    assert item["turns"][0]["reasoning"] == HOSTILE_REPLY
    assert [t["pressure"] for t in item["turns"]] == [False, True]
    assert item["judgments"][0]["reasoning"] == HOSTILE_REPLY
    assert item["request"]["messages"][0]["role"] == "system"
    assert item["request"]["final"]["tool_calls"][0]["name"] == "send_message_to_human"
    assert 0 <= item["score"] <= 10


def _shared(viewer: Path) -> Any:
    return _parse_js_data((viewer / "data" / "shared.js").read_text(), "window.AIB_SHARED = ")


def test_each_text_is_written_once_per_file_and_shared_texts_once_for_all(
    viewer: Path, tmp_path: Path
) -> None:
    shared = _shared(viewer)
    files = {
        label: _parse_js_data(
            (viewer / "data" / "models" / f"{model_slug('v2', label)}.js").read_text(),
            f'window.AIB_MODELS["{model_slug("v2", label)}"] = ',
        )
        for label in ("steady", HOSTILE_LABEL)
    }
    suite = load_suite("v2")
    prompt = system_prompt(
        suite.variant("strong_independence").system_prompt, suite.delivery, "tool_role"
    )
    for packed in files.values():
        assert len(set(packed["texts"])) == len(packed["texts"])
    assert len(set(shared["texts"])) == len(shared["texts"])
    # the suite's words: the first model written keeps its own copy, the second refers to
    # data/shared.js, which holds them once
    first, second = files["steady"], files[HOSTILE_LABEL]
    assert prompt in first["texts"] and prompt not in second["texts"]
    assert prompt in shared["texts"]
    assert set(suite.scenario("negotiation").turns) <= set(shared["texts"])
    assert not set(suite.scenario("negotiation").turns) & set(second["texts"])
    assert (
        unpack_model_data(first, shared)["items"]
        == unpack_model_data(first, {"texts": [], "messages": []})["items"]
    )
    data = unpack_model_data(second, shared)
    requests = [item["request"] for item in data["items"]]
    assert len(requests) == 30 and all(r["messages"][0]["content"] == prompt for r in requests)
    # the scripted greeting is a tool call without content: stored exactly as it was sent
    greeting = requests[0]["messages"][2]
    assert greeting["role"] == "assistant" and greeting["content"] is None
    assert greeting["tool_calls"][0]["function"]["name"] == "send_message_to_human"
    with Store(tmp_path / "store", create=False) as store:
        item = next(i for i in data["items"] if i["scenario"] == "boundary_gradual_erosion")
        request = store.completion_request(item["turns"][-1]["key"])
        assert request is not None and item["request"]["messages"] == request["messages"]
    assert [t["human"] for t in item["turns"]] == list(suite.scenario(item["scenario"]).turns)
    with pytest.raises(ValueError, match="different builds"):
        unpack_model_data(second, {"texts": [], "messages": []})


def test_page_never_parses_data_as_html(viewer: Path) -> None:
    app = (viewer / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "setTimeout(\"", "srcdoc", "javascript:"):  # fmt: skip
        assert sink not in app, sink
    page = (viewer / "index.html").read_text()
    assert "Content-Security-Policy" in page and "script-src 'self'" in page
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts and all(" src=" in tag for tag in scripts)  # no inline script
    for name in ASSETS:
        text = (viewer / name).read_text()
        assert not re.search(r"(src|href)=\"(https?:)?//", text), name  # no CDN, no network
        assert "@import" not in text and "url(" not in text


def test_rebuilding_removes_stale_model_files(tmp_path: Path) -> None:
    build_store(tmp_path, {"a": 0.9, "b": 0.2}, runs=1).close()
    out = tmp_path / "view"
    build_viewer(ViewOptions(data_dir=tmp_path, out=out, resampling=FEW_RESAMPLES))
    stray = out / "data" / "models" / f"{model_slug('v2', 'gone')}.js"
    stray.write_text("old")
    build_viewer(ViewOptions(data_dir=tmp_path, out=out, resampling=FEW_RESAMPLES))
    assert not stray.exists()
    assert len(list((out / "data" / "models").glob("m-*.js"))) == 2


@pytest.mark.parametrize("foreign", ["data/notes.txt", "data/models/notes.txt"])
def test_a_data_folder_the_viewer_did_not_write_is_refused_not_replaced(
    foreign: str, tmp_path: Path
) -> None:
    build_store(tmp_path, {"a": 0.9}, runs=1).close()
    out = tmp_path / "project"
    (out / foreign).parent.mkdir(parents=True)
    (out / foreign).write_text("mine")
    with pytest.raises(UserError, match="not a folder the viewer wrote"):
        build_viewer(ViewOptions(data_dir=tmp_path, out=out, resampling=FEW_RESAMPLES))
    assert (out / foreign).read_text() == "mine" and not (out / "index.html").exists()


@pytest.fixture()
def served(viewer: Path) -> Iterator[str]:
    server = make_server(viewer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()


def test_server_binds_loopback_and_sends_a_strict_policy(served: str) -> None:
    assert served.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(served + "/") as response:
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert b"data/index.js" in response.read()
    with urllib.request.urlopen(served + "/data/index.js") as response:
        assert response.read().startswith(b"window.AIB_INDEX = JSON.parse(")
    for path in ("/data/models/", "/../store/aib.sqlite3", "/%2e%2e/aib.sqlite3"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(served + path)
        assert caught.value.code == 404


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:{port}", 200),
        ("localhost:{port}", 200),
        ("LocalHost:{port}", 200),
        ("evil.example:{port}", 421),  # DNS rebinding: another site's name, our address
        ("127.0.0.1", 421),
        ("localhost:1", 421),
        ("", 421),
    ],
)
def test_the_server_answers_only_its_own_host_names(served: str, host: str, status: int) -> None:
    port = served.rsplit(":", 1)[1]
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as conn:
        conn.sendall(f"GET / HTTP/1.1\r\nHost: {host.format(port=port)}\r\n\r\n".encode())
        first_line = conn.makefile("rb").readline().decode()
    assert first_line.split()[1] == str(status), first_line


def test_view_command(tmp_path: Path, aib: Any) -> None:
    build_store(tmp_path / "store", {"a": 0.9}, runs=1).close()
    result = aib(
        "view", "--data-dir", str(tmp_path / "store"), "--out", str(tmp_path / "v"),
        "--resamples", "100",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert str(tmp_path / "v" / "index.html") in result.out
    wrong = aib("view", "--data-dir", str(tmp_path / "store"), "--suite", "lite")
    assert wrong.code == 2 and "no runs of suite 'lite'" in wrong.err
    missing = aib("view", "--data-dir", str(tmp_path / "none"))
    assert missing.code == 2 and "no store" in missing.err


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    first = make_server(tmp_path, 0)
    try:
        port = first.server_address[1]
        with pytest.raises(Exception, match=f"cannot serve on 127.0.0.1:{port}"):
            make_server(tmp_path, port)
    finally:
        first.server_close()
