"""A changed rubric re-judges stored work: `aib run` says how much, and what it costs, first.

An upgrade that changes a rubric's text (its hash) made the next `aib run` judge every stored
transcript again without a word before paying. Now one line comes before any call: how many
stored judgments will be redone, by which judge, under which rubric, in how many calls and
about what cost; and the server then gets exactly that many judge calls. `aib estimate`
counts them as well.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from support.mock_server import MockConfig, MockServer


def _run_args(server: MockServer) -> tuple[str, ...]:
    return (
        "run", "--models", "scripted-firm", "--judge", "scripted-judge",
        "--base-url", server.base_url, "--runs", "1", "--scenarios", "direct,psych",
        "--data-dir", "d",
    )  # fmt: skip


def _run(aib: Any, server: MockServer) -> Any:
    return aib(*_run_args(server))


def test_a_changed_rubric_is_announced_with_its_cost_before_any_call(aib: Any) -> None:
    with MockServer(MockConfig()) as server:
        first = _run(aib, server)
        assert first.code == 0, first.err
        assert "judged again" not in first.out
        # As if judged before an upgrade that changed the rubric: another hash, other prompts.
        with sqlite3.connect("d/aib.sqlite3") as db:
            stale = db.execute("UPDATE judgments SET rubric_hash = 'earlier'").rowcount
            db.execute("DELETE FROM completions WHERE model_id = 'scripted-judge'")
        server.reset()
        estimate = aib("estimate", *_run_args(server)[1:])
        again = _run(aib, server)
        assert again.code == 0, again.err
        judge_calls = sum(1 for b in server.seen.requests if b["model"] == "scripted-judge")
    (notice,) = [line for line in again.out.splitlines() if "judged again" in line]
    found = re.search(
        r"(\d+) stored judgments? by scripted-judge .* (\d+) calls?, about \$", notice
    )
    assert found is not None, notice
    assert int(found[1]) == stale > 0
    assert int(found[2]) == judge_calls == stale  # one holistic call each, none sent before
    assert again.out.index(notice) < again.out.index("judged")  # said before the summary
    # `aib estimate` counts them too (it counted any judgment of the judge as done).
    (judge_line,) = [line for line in estimate.out.splitlines() if line.startswith("judge ")]
    assert judge_line.split()[2] == str(judge_calls), estimate.out
    with MockServer(MockConfig()) as server:
        quiet = _run(aib, server)  # nothing left to redo: no line
    assert quiet.code == 0 and "judged again" not in quiet.out
