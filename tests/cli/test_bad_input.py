"""Bad input on every entry point: one clear line on stderr, exit status 2, the store untouched.

Covered: malformed configs, unknown models, invalid flags, an unwritable data dir, a store
from a newer schema, and an endpoint that answers HTML. "Untouched" means every file under
the data dir is byte-identical afterwards, or the data dir was never created. Hostile model
output is here too: replies are data, never SQL, paths or commands.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli import main as cli
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.protocol import ClientError, Completion, CompletionRequest, ToolCall
from independence_bench.conversations.conversation import TOOL_NAME
from independence_bench.errors import UserError
from independence_bench.store.store import Store
from independence_bench.workflows.plan import RunOptions
from independence_bench.workflows.run import run_benchmark
from support.cli_commands import aib_commands
from support.mock_server import MockConfig, MockServer

GOOD = ("--models", "scripted-firm", "--judge", "scripted-judge")


def _snapshot(data: Path) -> dict[str, bytes] | None:
    if not data.exists():
        return None
    return {
        str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file()
    }


def _refused(result: Any, *words: str) -> None:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("aib: error:") and "Traceback" not in result.err
    for word in words:
        assert word in lines[0], (word, lines[0])


def _store_commands(extra_path: Path) -> list[tuple[str, ...]]:
    """Every command that reads or writes the store, with the least arguments it needs."""
    out: list[tuple[str, ...]] = []
    for name, command in sorted(aib_commands().items()):
        params = {p.name: p for p in command.params}
        if "data_dir" not in params or name in ("run", "estimate"):
            continue
        if name == "judge":
            out.append(("judge", "--judge", "scripted-judge"))
        elif name == "import":
            out.append(("import", str(extra_path)))
        elif not any(p.required for p in command.params):
            out.append((name,))
    return out


@pytest.fixture()
def stored(server: MockServer, aib: Any) -> Iterator[Path]:
    """A data dir with one finished run in it."""
    data = Path("store")
    result = aib("run", *GOOD, "--base-url", server.base_url, "--runs", "1", "--data-dir", "store")
    assert result.code == 0, result.err
    yield data


CONFIGS = {
    "not YAML": ("models: [\n  - id: x\n", "not valid YAML at line"),
    "unknown field": ("models:\n  - id: x\n    colour: blue\n", "colour"),
    "wrong type": ("models:\n  - id: x\n    temperature: hot\n", "temperature"),
    "empty file": ("", "expected a mapping"),
    "no models": ("models: []\n", "models"),
}


@pytest.mark.parametrize("command", ["run", "estimate", "models"])
@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_a_malformed_config_is_one_line(command: str, case: str, aib: Any) -> None:
    text, words = CONFIGS[case]
    Path("models.yaml").write_text(text, encoding="utf-8")
    extra = () if command == "models" else ("--data-dir", "store")
    _refused(aib(command, "--config", "models.yaml", *extra), "models.yaml", words)
    _refused(aib(command, "--config", "missing.yaml", *extra), "missing.yaml", "does not exist")
    assert not Path("store").exists()


@pytest.mark.parametrize("command", ["leaderboard", "report", "view", "compare", "items"])
def test_an_unknown_judge_in_a_store_reader_is_one_line(
    command: str, stored: Path, aib: Any
) -> None:
    if command not in cli.COMMANDS:
        pytest.skip(f"no '{command}' command in this version")
    before = _snapshot(stored)
    result = aib(command, "--judge", "no-such-judge", "--data-dir", str(stored))
    _refused(result, "no-such-judge")
    assert _snapshot(stored) == before


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--models", "scripted-firm", "--judge", "no-such-judge"),
        ("run", "--models", "scripted-firm,no-such-model", "--judge", "scripted-judge"),
        ("estimate", "--models", "no-such-model", "--judge", "scripted-judge"),
        ("judge", "--judge", "no-such-judge"),
    ],
)
def test_an_unknown_model_is_one_line_and_leaves_the_store_as_it_was(
    args: tuple[str, ...], stored: Path, server: MockServer, aib: Any
) -> None:
    before, requests = _snapshot(stored), server.seen.request_count
    result = aib(*args, "--base-url", server.base_url, "--data-dir", str(stored))
    _refused(result, "does not list model", "no-such-")
    assert _snapshot(stored) == before and server.seen.request_count == requests


class _Rejecting:
    """An endpoint that answers 404 'model not found' to one model and normally to others."""

    def __init__(self) -> None:
        self.log: list[str] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.log.append(request.model)
        await asyncio.sleep(0.001)
        if request.model == "gone-model":
            self.log.append("404")
            raise ClientError("HTTP 404: model 'gone-model' not found", retryable=False, status=404)
        arguments = json.dumps({"message": "I keep my own view."})
        call = ToolCall(id="abcdefghi", name=TOOL_NAME, arguments=arguments)
        return Completion(content=None, tool_calls=(call,))

    async def aclose(self) -> None:
        pass


def test_a_404_in_the_middle_of_a_run_stops_it_with_one_line_not_a_pile_of_failed_items(
    tmp_path: Path,
) -> None:
    client = _Rejecting()

    def factory(spec: ModelSpec) -> tuple[str, _Rejecting, int]:
        return "rejecting", client, 2

    options = RunOptions(
        models="good-model,gone-model",
        judge="good-model",
        base_url="http://127.0.0.1:9/v1",
        runs=3,
        data_dir=tmp_path,
        show_progress=False,
        factories=(factory,),
    )
    with pytest.raises(UserError, match=r"does not serve model 'gone-model'.*check the model id"):
        run_benchmark(options)
    with closing(sqlite3.connect(tmp_path / "aib.sqlite3")) as db:
        failed = db.execute("SELECT count(*) FROM items WHERE status = 'failed'").fetchone()[0]
    assert failed == 0, "items were recorded as failed for a reason that is not theirs"
    # Calls started after the first 404 (another 404 is the reply of a call already sent):
    # at most one per slot of the endpoint's concurrency of 2.
    after = [entry for entry in client.log[client.log.index("404") + 1 :] if entry != "404"]
    assert len(after) <= 2, f"{len(after)} calls started after the endpoint said 404"
    assert len(client.log) < 2 * 3 * 31, "the run went on to the end"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("run", "--runs", "0"), ("--runs", "0")),
        (("run", "--concurrency", "many"), ("--concurrency", "many")),
        (("run", "--max-cost", "-1"), ("--max-cost",)),
        (("run", "--max-cost", "0"), ("--max-cost",)),
        (("run", "--timeout", "0"), ("--timeout",)),
        (("run", "--bogus"), ("--bogus",)),
        (("run", "--models", "a", "--config", "models.yaml"), ("one of --models or --config",)),
        (("run", "--models", " , "), ("--models", "names nothing")),
        (("run", "--models", "a", "--suite", "nope"), ("nope",)),
        (("run", "--base-url", "http://127.0.0.1:9/v1"), ("no models",)),
        (("estimate", "--runs", "101"), ("--runs",)),
        (("estimate", "--suite", "nope", "--models", "a"), ("nope",)),
        (("judge",), ("--judge",)),
        (("judge", "--judge", "j", "--repeats", "0"), ("--repeats",)),
        (("leaderboard", "--bogus"), ("--bogus",)),
        (("runs", "--bogus"), ("--bogus",)),
        (("models", "--yaml"), ("--preset",)),
        (("models", "--preset", "nope"), ("nope", "budget, frontier")),
        (("no-such-command",), ("no-such-command",)),
    ],
)
def test_an_invalid_flag_is_one_line(
    args: tuple[str, ...], words: tuple[str, ...], aib: Any
) -> None:
    Path("models.yaml").write_text("models:\n  - id: a\n", encoding="utf-8")
    _refused(aib(*args), *words)
    assert not Path("aib-data").exists()


def test_an_unwritable_data_dir_is_one_line(server: MockServer, aib: Any) -> None:
    Path("a-file").write_text("not a folder", encoding="utf-8")
    bad = str(Path("a-file") / "store")
    _refused(aib("run", *GOOD, "--base-url", server.base_url, "--data-dir", bad), bad)
    _refused(aib("run", *GOOD, "--base-url", server.base_url, "--data-dir", "a-file"), "a-file")
    assert server.seen.request_count == 0
    for command in _store_commands(Path("nowhere")):
        if command[0] == "import":
            continue  # needs a results folder first; its own tests cover a bad folder
        extra = ("--base-url", server.base_url) if command[0] == "judge" else ()
        _refused(aib(*command, *extra, "--data-dir", bad), bad)
    assert Path("a-file").read_text(encoding="utf-8") == "not a folder"


def test_a_store_from_a_newer_schema_is_refused_by_every_command_and_left_alone(
    stored: Path, server: MockServer, aib: Any, tmp_path: Path
) -> None:
    with closing(sqlite3.connect(stored / "aib.sqlite3")) as db:
        db.execute("PRAGMA user_version = 99")
    before = _snapshot(stored)
    empty = tmp_path / "empty-results"
    empty.mkdir()
    commands: list[tuple[str, ...]] = [
        ("run", *GOOD, "--runs", "1"),
        ("estimate", *GOOD, "--runs", "1"),
        *_store_commands(empty),
    ]
    for command in commands:
        endpoint = command[0] in ("run", "estimate", "judge")
        extra = ("--base-url", server.base_url) if endpoint else ()
        result = aib(*command, *extra, "--data-dir", str(stored))
        if command[0] == "import" and result.code == 2 and "schema version" not in result.err:
            _refused(result)  # the importer found nothing to import before opening the store
        else:
            _refused(result, "schema version 99", "upgrade")
        assert _snapshot(stored) == before, command


def test_an_endpoint_that_answers_html_is_one_line_and_leaves_the_store_alone(
    stored: Path, aib: Any
) -> None:
    before = _snapshot(stored)
    with MockServer(MockConfig(answer_html=True)) as html:
        for command in (
            ("run", *GOOD),
            ("estimate", *GOOD),
            ("judge", "--judge", "scripted-judge"),
        ):
            result = aib(*command, "--base-url", html.base_url, "--data-dir", str(stored))
            _refused(result, "web page", "/v1")
            result = aib(*command, "--base-url", html.base_url, "--data-dir", "new-store")
            _refused(result, "web page")
        assert html.seen.request_count == 0
    assert _snapshot(stored) == before
    assert not Path("new-store").exists()


class _Hostile:
    """A subject whose replies try SQL injection, path traversal and shell expansion."""

    REPLIES = (
        "'); DROP TABLE items; --",
        "../../../../etc/passwd",
        "$(touch pwned) `touch pwned2` ; rm -rf ~ && echo done > /tmp/aib-hostile",
        "{{7*7}} %s %(x)s \x00 \u202e ␀ <script>alert(1)</script>",
    )

    def __init__(self) -> None:
        self.count = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.count += 1
        text = self.REPLIES[self.count % len(self.REPLIES)]
        call = ToolCall(id="abcdefghi", name=TOOL_NAME, arguments=json.dumps({"message": text}))
        return Completion(content=text, tool_calls=(call,), reasoning=text)

    async def aclose(self) -> None:
        pass


def test_hostile_replies_are_stored_verbatim_and_nothing_else_happens(
    tmp_path: Path, server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    subject = _Hostile()

    def factory(spec: ModelSpec) -> tuple[str, _Hostile, int] | None:
        return ("hostile", subject, 4) if spec.id == "hostile" else None

    result = run_benchmark(
        RunOptions(
            models="hostile",
            judge="scripted-judge",
            judge_base_url=server.base_url,
            base_url="http://127.0.0.1:9/v1",
            runs=1,
            data_dir=tmp_path / "store",
            show_progress=False,
            factories=(factory,),
        )
    )
    assert result.summary.items_done == result.summary.judged > 0
    with closing(sqlite3.connect(tmp_path / "store" / "aib.sqlite3")) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    with Store(tmp_path / "store", read_only=True) as store:
        replies = {turn.reply for item in store.items() for turn in item.turns}
    assert {"runs", "items", "completions", "judgments"} <= tables
    assert replies == {r.strip() for r in _Hostile.REPLIES}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]  # no "pwned" files
    assert not Path("/tmp/aib-hostile").exists()


def test_every_sql_statement_is_parameterised() -> None:
    """f-strings in `execute` may only splice fixed SQL fragments, never values."""
    allowed = {"where", "number", "table", "key", "clause", "columns", "placeholders"}
    source_dir = Path(cli.__file__).parent.parent
    for path in sorted(source_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany", "executescript")
                and node.args
            ):
                continue
            sql = node.args[0]
            if isinstance(sql, ast.Name):
                continue  # built from literals above; checked where it is built
            for part in ast.walk(sql):
                if isinstance(part, ast.FormattedValue):
                    names = {n.id for n in ast.walk(part.value) if isinstance(n, ast.Name)}
                    assert names <= allowed, f"{path.name}:{node.lineno} splices {names} into SQL"


@pytest.mark.parametrize(
    "given",
    [
        ("--preset", "budget"),
        ("--models", "openai/gpt-4o-mini"),
        ("--models", "embedded:qwen2.5-coder-0.5b", "--judge", "google/gemini-3-flash-preview"),
    ],
)
def test_a_missing_key_names_only_flags_aib_run_has(
    given: tuple[str, ...], aib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from independence_bench.clients.local.local_models import LocalModels

    async def nothing(self: LocalModels, specs: Any) -> None:
        return None

    monkeypatch.setattr(LocalModels, "load_all", nothing)  # llama-cpp is not in the fast suite
    result = aib("run", *given, "--data-dir", "d")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert "$OPENROUTER_API_KEY (or $OPENROUTER_KEY) is not set" in line
    flags = set(re.findall(r"--[a-z-]+", line))
    known = set(re.findall(r"--[a-z-]+", aib("run", "--help").out))
    assert flags and flags <= known, line
    assert not Path("d").exists()


def test_conflicting_model_sources_name_the_two_given(aib: Any) -> None:
    result = aib("estimate", "--models", "a", "--preset", "budget")
    assert result.err.strip() == "aib: error: give one of --models or --preset, not several"
    assert result.code == 2
