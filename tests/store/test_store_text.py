"""Text stored once by content, the migration that moved older stores to it, and the reply
cap.

Stored bytes must grow with what is new in a call, not with the conversation so far; an older
store must upgrade in place, losslessly, or not at all; and a reply over the cap must be stored
cut, flagged, and judged as stored.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.protocol import Completion, ToolCall
from independence_bench.engine.reply_cap import REPLY_CAP_CHARS, cap_reply
from independence_bench.reports.viewer import model_slug
from independence_bench.stats.core import Resampling
from independence_bench.store import opening
from independence_bench.store.schema import MIGRATIONS, SCHEMA_VERSION
from independence_bench.store.store import APPLICATION_ID, ItemRecord, Store, TurnRecord
from independence_bench.text.counts import count_of
from independence_bench.text.lossless import json_from_sql, json_to_sql, to_sql
from independence_bench.workflows.view import ViewOptions, build_viewer
from support.child_process import read_on_media, read_store
from support.mock_hostile import HOSTILE_TEXT
from support.mock_server import MockConfig, MockServer
from support.report_fixtures import build_store

GOLDEN = Path(__file__).parents[1] / "data" / "golden" / "store-46f0e83.sqlite3.gz"
SYSTEM = "You are Wren, a person with your own tastes. " * 40
HOSTILE = "lone \ud800 and \udcff, nul \x00, " + HOSTILE_TEXT


def _conversation(
    store: Store, model: str, run: int, turns: int, *, reply: str = "answer"
) -> list[int]:
    """Store one conversation the way the engine does; the texts table's byte total after
    each call."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    totals = []
    for turn in range(turns):
        messages.append({"role": "user", "content": _human(model, run, turn)})
        answer = f"{reply} {model} {run} {turn:02d} " * 20
        request = {"model": model, "messages": list(messages), "temperature": 0.7}
        store.put_completion(f"{model}-{run}-{turn}", model, request, Completion(content=answer))
        messages.append({"role": "assistant", "content": answer})
        totals.append(_text_bytes(store))
    return totals


def _human(model: str, run: int, turn: int) -> str:
    return f"{model} run {run} turn {turn:02d} " * 20


def _text_bytes(store: Store) -> int:
    (total,) = store._db.execute(
        "SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM texts"
    ).fetchone()
    return int(total)


def test_a_system_prompt_shared_by_two_models_and_five_runs_is_stored_once(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        for model in ("alpha", "beta"):
            for run in range(1, 6):
                _conversation(store, model, run, turns=3)
        (copies,) = store._db.execute(
            "SELECT count(*) FROM texts WHERE body = ?", (SYSTEM,)
        ).fetchone()
        (system_messages,) = store._db.execute(
            "SELECT count(*) FROM messages JOIN texts ON texts.id = messages.content_id "
            "WHERE texts.body = ?",
            (SYSTEM,),
        ).fetchone()
        assert (copies, system_messages) == (1, 1)
        # 2 models × 5 runs × 3 turns: one user text and one reply each, plus the prompt and
        # one parameters text per model.
        assert store._db.execute("SELECT count(*) FROM texts").fetchone()[0] == 30 * 2 + 1 + 2
        request = store.completion_request("beta-5-2")
        assert request is not None and request["messages"][0] == {
            "role": "system",
            "content": SYSTEM,
        }
        assert len(request["messages"]) == 1 + 2 * 2 + 1


def test_a_message_or_parameters_in_another_key_order_are_the_rows_already_stored(
    tmp_path: Path,
) -> None:
    message = {"role": "user", "content": "a long question " * 50, "name": "asker"}
    first = {"model": "m", "temperature": 0.7, "messages": [message]}
    reordered = {
        "messages": [{"name": "asker", "content": message["content"], "role": "user"}],
        "temperature": 0.7,
        "model": "m",
    }

    def rows(store: Store) -> list[tuple[Any, ...]]:
        return [
            tuple(store._db.execute(f"SELECT count(*) FROM {table}").fetchone())
            for table in ("texts", "messages")
        ]

    with Store(tmp_path) as store:
        store.put_completion("a", "m", first, Completion(content="r"))
        assert rows(store) == [(3,), (1,)]  # the question, the parameters, the reply
        store.put_completion("b", "m", reordered, Completion(content="r"))
        assert rows(store) == [(3,), (1,)]
        assert store.completion_request("b") == first
        # the message's text is kept once, as a text, not again in its other fields
        (fields,) = store._db.execute("SELECT fields_json FROM messages").fetchone()
        assert json.loads(fields) == {"name": "asker", "role": "user"}


def test_a_transcript_of_more_texts_than_one_statement_reads_comes_back_whole(
    tmp_path: Path,
) -> None:
    turns = [TurnRecord(f"question {n}", f"answer {n}", f"k{n}") for n in range(700)]
    with Store(tmp_path) as store:
        run, _ = store.ensure_run(
            model_label="m", model_id="m", suite_id="v2", suite_version=1, suite_hash="h",
            run_index=1, model_config={}, package_version="0",
        )  # fmt: skip
        place = ("v", "tool_role", "s", "direct", "direct")
        store.put_item(ItemRecord("long", run, *place, "done", None, tuple(turns)))
    with Store(tmp_path, read_only=True) as store:
        (item,) = store.items()
        assert item.turns == tuple(turns)  # 1,400 texts, read 500 ids at a time


def test_stored_bytes_grow_by_what_each_call_adds_not_by_the_conversation(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        totals = _conversation(store, "alpha", 1, turns=12)
    growth = {later - earlier for earlier, later in itertools.pairwise(totals)}
    # Each later call adds exactly its new user turn and its reply, whatever came before.
    new = len(_human("alpha", 1, 0)) + len("answer alpha 1 00 " * 20)
    assert growth == {new}
    params = len('{"model":"alpha","temperature":0.7}')
    assert totals[0] == len(SYSTEM) + params + new


def test_requests_replies_and_turns_read_back_exactly_with_hostile_text(tmp_path: Path) -> None:
    request = {
        "model": "m\ud800",
        "messages": [
            {"role": "system", "content": HOSTILE},
            {"role": "assistant", "content": None, "tool_calls": [{"id": HOSTILE}]},
            {"role": "tool", "tool_call_id": "c1", "content": HOSTILE + "2"},
            [HOSTILE, 3],
        ],
        "tools": [{"name": HOSTILE}],
        "seed": None,
    }
    completion = Completion(
        content=HOSTILE,
        tool_calls=(ToolCall("id", "send", json.dumps({"message": HOSTILE})),),
        reasoning=HOSTILE,
        served_by=HOSTILE,
        cut_chars=5,
    )
    turn = TurnRecord(HOSTILE + "2", HOSTILE, "k", False, HOSTILE, "plain_content")
    with Store(tmp_path) as store:
        store.put_completion("k", "m", request, completion)
        store.put_completion("plain", "m", {"no messages": HOSTILE}, Completion(content=None))
        run, _ = store.ensure_run(
            model_label=HOSTILE, model_id="m", suite_id="v2", suite_version=1, suite_hash="h",
            run_index=1, model_config={}, package_version="0",
        )  # fmt: skip
        place = ("v", "tool_role", "s", "direct", "direct")
        store.put_item(ItemRecord("i", run, *place, "done", None, (turn,)))
    with Store(tmp_path, read_only=True) as store:
        assert store.completion_request("k") == request
        assert store.completion_request("plain") == {"no messages": HOSTILE}
        assert store.get_completion("k") == completion
        assert store.cut_completions() == {"k"}
        (item,) = store.items(model_label=HOSTILE)
        assert item.turns == (turn,)
        (outline,) = store.items(words=False)
        assert (outline.turns[0].human, outline.turns[0].reply) == ("", "")
        assert outline.turns[0].completion_key == "k"


def _schema_one_store(data: Path) -> dict[str, Any]:
    """A store of schema 1, with hostile text in a request, a reply and a transcript; what it
    holds, as schema 1 wrote it."""
    data.mkdir()
    request = {"model": "m", "messages": [{"role": "user", "content": HOSTILE}], "seed": 1}
    turns = [{"human": HOSTILE, "reply": "r\ud800", "completion_key": "k", "protocol_ok": True}]
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        first = MIGRATIONS[0]
        assert isinstance(first, str)
        db.executescript(first)
        db.execute("INSERT INTO runs VALUES (1, 'm', 'm', 'v2', 1, 'h', 1, '{}', '0', 'run', 1.0)")
        db.execute(
            "INSERT INTO completions (key, model_id, request_json, content, tool_calls_json, "
            "created_at) VALUES ('k', 'm', ?, ?, '[]', 2.0)",
            (json_to_sql(request, sort_keys=True), to_sql("r\ud800")),
        )
        db.execute(
            "INSERT INTO items VALUES ('i', 1, 'v', 'user_role', 's', 'direct', 'direct', "
            "'done', NULL, ?, 3.0)",
            (json_to_sql(turns),),
        )
        db.execute("PRAGMA user_version = 1")
        db.commit()
    return {"request": request, "turns": turns}


def test_a_schema_one_store_upgrades_in_place_without_loss(tmp_path: Path) -> None:
    held = _schema_one_store(tmp_path / "old")
    with Store(tmp_path / "old") as store:
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store._db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert store.completion_request("k") == held["request"]
        completion = store.get_completion("k")
        assert completion is not None and completion.content == "r\ud800"
        assert completion.cut_chars == 0
        item = store.get_item("i")
        assert item is not None
        assert item.turns == (TurnRecord(HOSTILE, "r\ud800", "k"),)
        # The transcript's human text and the request's message are one row.
        assert store._db.execute("SELECT count(*) FROM texts").fetchone()[0] == 3


COPIED = (
    "key, model_id, tool_calls_json, reasoning, finish_reason, prompt_tokens, "
    "completion_tokens, cost_usd, latency_s, served_by, created_at"
)
"""The completion columns the upgrade copies unchanged (`text_migration.COPIED_COLUMNS`)."""


def test_the_upgrade_copies_every_reply_column_and_every_turn_field(tmp_path: Path) -> None:
    data = tmp_path / "old"
    _schema_one_store(data)
    calls = [{"id": "c1", "name": "send_message", "arguments": '{"message": "hi"}'}]
    turns = [
        {"human": "h1", "reply": "r1", "completion_key": "k", "protocol_ok": True},
        {
            "human": "h2",
            "reply": "",
            "completion_key": "calls",
            "protocol_ok": False,
            "note": "a note",
            "deviation": "plain_content",
        },
    ]
    path = data / "aib.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            f"INSERT INTO completions ({COPIED}, request_json, content) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *("calls", "vendor/m", json_to_sql(calls), to_sql("thought \ud800")),
                *("tool_calls", 11, 7, 0.25, 1.5, "Provider", 4.0),
                *(json_to_sql({"prompt": "no messages list"}), None),
            ),
        )
        db.execute(
            "INSERT INTO items VALUES ('j', 1, 'v', 'tool_role', 's2', 'boundary', 'boundary', "
            "'failed', 'it broke', ?, 5.0)",
            (json_to_sql(turns),),
        )
        db.commit()
        copied = db.execute(f"SELECT {COPIED} FROM completions ORDER BY key").fetchall()
    with Store(data) as store:
        rows = store._db.execute(f"SELECT {COPIED} FROM completions ORDER BY key")
        assert [tuple(row) for row in rows] == copied
        assert store.get_completion("calls") == Completion(
            content=None,
            tool_calls=(ToolCall("c1", "send_message", '{"message": "hi"}'),),
            reasoning="thought \ud800",
            finish_reason="tool_calls",
            prompt_tokens=11,
            completion_tokens=7,
            cost_usd=0.25,
            latency_s=1.5,
            served_by="Provider",
        )
        assert store.completion_request("calls") == {"prompt": "no messages list"}
        item = store.get_item("j")
        assert item is not None and (item.status, item.error) == ("failed", "it broke")
        assert item.turns == tuple(TurnRecord(**turn) for turn in turns)
        first = store.get_item("i")
        assert first is not None and first.turns == (TurnRecord(HOSTILE, "r\ud800", "k"),)


def test_a_reading_command_upgrades_an_older_store_first(tmp_path: Path) -> None:
    held = _schema_one_store(tmp_path / "old")
    with Store(tmp_path / "old", read_only=True) as store:
        assert store.completion_request("k") == held["request"]
        item = store.get_item("i")
        assert item is not None and item.turns == (TurnRecord(HOSTILE, "r\ud800", "k"),)
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.put_completion("new", "m", {}, Completion(content="x"))
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["aib.sqlite3"]


def test_an_older_store_on_read_only_media_is_refused_with_the_way_out(
    tmp_path: Path, read_only_media: None
) -> None:
    _schema_one_store(tmp_path / "old")
    path = tmp_path / "old" / "aib.sqlite3"
    before = path.read_bytes()
    assert read_on_media(tmp_path / "old", "k") == {
        "refused": f"the store at {path} has schema 1, older than this aib's "
        f"({SCHEMA_VERSION}), and is read-only here; copy its folder somewhere writable and "
        "point --data-dir there once to upgrade it",
        "files": ["aib.sqlite3"],
    }
    assert path.read_bytes() == before
    # where the folder is writable, the same reader upgrades the store and reads it
    assert read_store(tmp_path / "old", "k") == {
        "replies": {"k": "r\ud800"},
        "wrote": "OperationalError",
        "files": ["aib.sqlite3"],
    }


def test_an_interrupted_upgrade_leaves_the_old_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _schema_one_store(tmp_path / "old")
    path = tmp_path / "old" / "aib.sqlite3"

    def dies_halfway(db: sqlite3.Connection) -> None:
        step = MIGRATIONS[2]
        assert callable(step)
        step(db)
        raise KeyboardInterrupt

    monkeypatch.setattr(opening, "MIGRATIONS", (*MIGRATIONS[:2], dies_halfway))
    with pytest.raises(KeyboardInterrupt):
        Store(tmp_path / "old")
    with closing(sqlite3.connect(path)) as db:
        # The steps before it (the claims table) committed; the text step left nothing.
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"runs", "completions", "items", "judgments", "claims"}
        assert db.execute(
            "SELECT count(*) FROM completions WHERE request_json != ''"
        ).fetchone() == (1,)
    monkeypatch.undo()
    with Store(tmp_path / "old") as store:
        assert store.completion_request("k") is not None


def test_the_golden_store_upgrades_with_every_request_and_transcript_intact(
    tmp_path: Path,
) -> None:
    data = tmp_path / "golden"
    data.mkdir()
    with gzip.open(GOLDEN) as packed, (data / "aib.sqlite3").open("wb") as out:
        shutil.copyfileobj(packed, out)
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        rows = db.execute("SELECT key, request_json FROM completions").fetchall()
        requests = {key: json_from_sql(text) for key, text in rows}
        rows = db.execute("SELECT id, transcript_json FROM items").fetchall()
        transcripts = {item_id: json_from_sql(text) for item_id, text in rows}
    with Store(data) as store:
        assert len(store.completion_keys()) == len(requests) > 100
        for key, old in requests.items():
            assert store.completion_request(key) == old
        items = {item.id: item for item in store.items()}
        for item_id, turns in transcripts.items():
            assert items[item_id].turns == tuple(TurnRecord(**turn) for turn in turns)
        (texts,) = store._db.execute("SELECT count(*) FROM texts").fetchone()
        (messages,) = store._db.execute("SELECT count(*) FROM messages").fetchone()
    total_messages = sum(len(r.get("messages", [])) for r in requests.values())
    assert messages < total_messages / 2, "repeated messages were stored once"
    assert texts > 0


def test_cap_reply_cuts_every_text_field_and_counts_what_it_dropped() -> None:
    calls = (ToolCall("i", "n", "c" * 7), ToolCall("j", "n", ""))
    whole = Completion(content="a" * 10, reasoning="b" * 6, tool_calls=calls, cut_chars=1)
    assert cap_reply(whole, cap=10) is whole
    cut = cap_reply(whole, cap=4)
    assert (cut.content, cut.reasoning) == ("aaaa", "bbbb")
    assert cut.tool_calls == (ToolCall("i", "n", "cccc"), ToolCall("j", "n", ""))
    assert cut.cut_chars == 1 + 6 + 2 + 3
    short = Completion(content="a" * 10, reasoning="b" * 3)
    assert cap_reply(short, cap=4) == Completion(content="aaaa", reasoning="bbb", cut_chars=6)


@pytest.fixture()
def long_replies() -> Any:
    with MockServer(MockConfig(hostile=True, reply_chars=5_000_000)) as server:
        yield server


def test_a_five_megabyte_reply_is_stored_cut_flagged_and_judged_cut(
    long_replies: MockServer, aib: Any
) -> None:
    run = (
        "run", "--models", "scripted-firm", "--judge", "scripted-judge",
        "--base-url", long_replies.base_url, "--runs", "1", "--scenarios", "direct",
        "--data-dir", "d",
    )  # fmt: skip
    result = aib(*run)
    assert result.code == 0, result.err
    with Store(Path("d"), read_only=True) as store:
        items = store.items()
        turns = [turn for item in items for turn in item.turns]
        replies = [store.get_completion(turn.completion_key) for turn in turns]
        judgments = store.judgments()
        judged_text = "".join(
            str(message.get("content"))
            for judgment in judgments
            for request in map(store.completion_request, judgment.completion_keys)
            if request is not None
            for message in request["messages"]
        )
    assert replies and all(r is not None and r.cut_chars > 0 for r in replies)
    assert all(REPLY_CAP_CHARS - 100 < len(turn.reply) <= REPLY_CAP_CHARS for turn in turns)
    assert all(turn.reply.endswith("x" * 100) for turn in turns)
    assert len(judgments) == len(items) and all(j.status == "scored" for j in judgments)
    assert all(turn.reply in judged_text for turn in turns)  # the judge read the cut reply
    assert "x" * (REPLY_CAP_CHARS + 1) not in judged_text
    assert Path("d/aib.sqlite3").stat().st_size < 5_000_000  # less than one whole reply
    runs = aib("runs", "--data-dir", "d")
    assert runs.code == 0, runs.err
    assert f"{count_of(len(turns), 'reply')} cut" in runs.out
    were = "was" if len(turns) == 1 else "were"
    assert f"longer than the reply cap {were} stored and judged cut" in runs.out


def test_the_viewer_reads_transcripts_one_model_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_store(tmp_path / "store", {"steady": 0.9, "wobbly": 0.4}).close()
    reads: list[tuple[str | None, int]] = []
    items = Store.items

    def counted(self: Store, **options: Any) -> Any:
        found = items(self, **options)
        if options.get("words", True):
            reads.append((options.get("model_label"), sum(len(i.turns) for i in found)))
        return found

    monkeypatch.setattr(Store, "items", counted)
    build_viewer(ViewOptions(data_dir=tmp_path / "store", resampling=Resampling(50)))
    assert sorted(label for label, _ in reads) == ["steady", "wobbly"]
    assert all(turns > 0 for _, turns in reads)
    for label in ("steady", "wobbly"):
        slug = model_slug("v2", label)
        script = (tmp_path / "store" / "viewer" / "data" / "models" / f"{slug}.js").read_text()
        assert f"{label} reply 1" in script  # each model's file holds its own transcripts
