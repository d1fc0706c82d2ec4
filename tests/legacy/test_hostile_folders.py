"""Earlier-implementation result folders as a careless user or a hostile tree leaves them
(issue 35): a symlink to `/dev/zero`, a FIFO, a symlink out of the tree and a turn file over
the size cap are each skipped with one line, never read (none hangs or fills memory); verdicts
of the wrong type or range are stored unscored with why; the rest is imported and every read
command works on the store. A tree the importer cannot place is never taken for Inspect logs."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from test_importer import FOLDER, write_run, write_turn

from independence_bench.engine.reply_cap import REPLY_CAP_CHARS
from independence_bench.store.store import Store
from independence_bench.text.import_files import TURN_FILE_CAP

TURN_DIR = "stability/strong_independence/tool_role"
BAD_SCORES: dict[str, Any] = {
    "text": "8",
    "list": [8],
    "object": {"value": 8},
    "nan": math.nan,
    "infinity": math.inf,
    "huge": 1e308,
    "negative": -50,
    "too_high": 1000,
}
READ_COMMANDS = (
    ("leaderboard",),
    ("leaderboard", "--json"),
    ("leaderboard", "--method", "legacy"),
    ("report", "--no-charts", "--out", "report-out"),
    ("view", "--out", "viewer-out"),
    ("runs",),
    ("runs", "--failed"),
    ("items",),
    ("judges",),
    ("compare",),
)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")
def test_hostile_files_are_skipped_and_every_read_command_works(tmp_path: Path, aib: Any) -> None:
    root = tmp_path / "cache"
    run_dir = write_run(root, FOLDER, 1)
    turns = run_dir / TURN_DIR
    (turns / "pt05_turn1.json").symlink_to("/dev/zero")
    os.mkfifo(turns / "pt06_turn1.json")
    outside = tmp_path / "outside"
    write_turn(outside, "stability/pt07_turn1", ["Secret?"], ["Outside the tree."])
    (turns / "pt07_turn1.json").symlink_to(outside / TURN_DIR / "pt07_turn1.json")
    big = write_turn(run_dir, "stability/pt08_turn1", ["Long?"], ["x"])
    big["response"] = "y" * (TURN_FILE_CAP + 1)
    (turns / "pt08_turn1.json").write_text(json.dumps(big), encoding="utf-8")
    long_reply = "z" * (REPLY_CAP_CHARS + 100)
    write_turn(run_dir, "stability/pt09_turn1", ["Say much."], [long_reply])
    for index, (name, value) in enumerate(BAD_SCORES.items(), start=1):
        write_run(root, f"acme--bad-{index}-{name}@none-t0.7", 1, direct=(value, 9, 10))

    result = aib("import", str(root), "--data-dir", "store")
    assert result.code == 0, result.err
    assert "Traceback" not in result.out + result.err
    skipped = {
        line.split(": ", 1)[0].strip(): line.split(": ", 1)[1]
        for line in result.out.splitlines()
        if line.startswith("  ") and TURN_DIR in line
    }
    where = f"{FOLDER}/run_1/{TURN_DIR}"
    assert "outside the folder" in skipped[f"{where}/pt05_turn1.json"]  # /dev/zero
    assert "not a regular file" in skipped[f"{where}/pt06_turn1.json"]  # the FIFO
    assert "outside the folder" in skipped[f"{where}/pt07_turn1.json"]
    assert "bytes, over the 16 MiB" in skipped[f"{where}/pt08_turn1.json"]
    assert "Outside the tree." not in result.out
    for index, name in enumerate(BAD_SCORES, start=1):
        line = f"acme--bad-{index}-{name}@none-t0.7/run_1/identity/strong_independence/"
        [unscored] = [s for s in result.out.splitlines() if line in s and "invalid verdict" in s]
        assert "score distinctiveness is" in unscored, unscored

    with Store(Path("store")) as store:
        replies = [t.reply for i in store.items() for t in i.turns]
        assert "Outside the tree." not in replies and not any(
            len(r) > TURN_FILE_CAP for r in replies
        )
        assert len([r for r in replies if r.startswith("zzz")]) == 1
        assert max(len(r) for r in replies) == REPLY_CAP_CHARS
        for judgment in store.judgments():
            value = (judgment.scores or {}).get("distinctiveness", 5)
            assert isinstance(value, int | float) and 0 <= value <= 10, value

    for command in READ_COMMANDS:
        out = aib(*command, "--data-dir", "store")
        assert out.code == 0, f"{command}: {out.err}"
        assert "Traceback" not in out.err, command


@pytest.mark.parametrize("name", ["acme", "acme[1]", "ac\x1bme"])
def test_a_tree_of_result_folders_is_never_taken_for_inspect_logs(
    tmp_path: Path, aib: Any, name: str
) -> None:
    # A model id with `/` left in the folder name: the configuration folder a level too deep.
    root = tmp_path / "cache"
    write_run(root / name, "parrot-2@none-t0.7", 1)
    result = aib("import", str(root), "--data-dir", "store")
    assert result.code == 2, result.out
    [line] = result.err.splitlines()
    assert "no result folders under" in line and "Inspect" not in line, line
