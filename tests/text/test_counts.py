"""Counts in words: the noun agrees with the number wherever a count is printed.

`count_of` is checked on worked values, then through the lines users read (the runs table,
the spend line, the leaders note, the viewer's `countOf`), and the source is searched for the
patterns that printed "1 runs" and "model(s)" before.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from independence_bench.gathering.spend import Spend
from independence_bench.gathering.suite_report import Cost
from independence_bench.reports.leaderboard._rows import leaders_note
from independence_bench.reports.spend import spend_line
from independence_bench.store.run_status import RunState, render_run_states
from independence_bench.text.counts import count_of, plural_of

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "independence_bench"
PRINTING = (SRC, ROOT / "benchmarks", ROOT / "scripts")
"""Where printed text is written: the package, and the benchmarks and scripts CI's log shows."""


def test_the_noun_agrees_with_the_number() -> None:
    assert count_of(1, "run") == "1 run"
    assert count_of(0, "run") == "0 runs"
    assert count_of(2, "reply") == "2 replies"
    assert count_of(2, "day") == "2 days"
    assert count_of(3, "pass") == "3 passes"
    assert count_of(2, "API call") == "2 API calls"
    assert count_of(1, "stored call") == "1 stored call"
    assert count_of(4, "person", "people") == "4 people"
    assert count_of(2, "Inspect log") == "2 Inspect logs" and plural_of("batch") == "batches"


def _state(**counts: int) -> RunState:
    return RunState(
        model="m", suite_id="v2", run_index=1, source="run", expected=15, done=15, failed=0,
        scored=15, unscored=0, **counts,
    )  # fmt: skip


def test_one_run_and_one_cut_reply_are_singular_in_the_runs_table() -> None:
    text = render_run_states([_state(cut=1)])
    assert "1 reply cut" in text
    assert text.splitlines()[-1].startswith("1 run: 1 complete, 0 partial")
    assert "1 reply longer than the reply cap was stored" in text
    two = render_run_states([_state(cut=1), _state(cut=1)])
    assert two.splitlines()[-1].startswith("2 runs:") and "2 replies longer" in two


def test_one_stored_call_without_a_cost_is_singular_in_the_spend_line() -> None:
    one = Cost(usd=None, known_usd=0.0, calls=1, unpriced=1)
    none = Cost(usd=0.0, known_usd=0.0, calls=0, unpriced=0)
    line = spend_line(Spend(models=one, judge=none))
    assert "over 1 stored call;" in line and "1 call has no cost" in line


def test_a_lone_leader_is_one_model_that_has_a_rank_interval() -> None:
    class Row:
        rank_low = 1
        could_lead = True

    assert leaders_note([Row()]) == "1 model has a rank interval that includes 1."  # type: ignore[list-item]


_PRINTED = ("*.py", "*.js")
_VERB = re.compile(r"\} runs (from|\{)")
"""`runs` as a verb ("…index runs from −1 to 1", "x runs 0–10"), not a count."""
_NOUNS = "runs|turns|items|models|calls|judgments|conversations|replies|attempts|files|logs"


def test_no_printed_text_writes_a_plural_with_parentheses_or_adds_a_bare_s() -> None:
    """`model(s)`, `f"{n} runs"` and `n + " models"` are how "1 runs" got printed."""
    offenders = []
    for pattern in _PRINTED:
        for path in (p for root in PRINTING for p in root.rglob(pattern)):
            if path.name == "counts.py":
                continue  # says what never to print
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                code = line.split("#", 1)[0] if path.suffix == ".py" else line
                if re.search(r"[a-z]\(s\)(?! for)", code) and "http(s)" not in code:
                    offenders.append(f"{path.name}:{number}: {line.strip()}")
                counted = re.search(r"\{[^{}:]+\} (" + _NOUNS + r")\b", code)
                if counted and 'f"' in code and not _VERB.search(code):
                    offenders.append(f"{path.name}:{number}: {line.strip()}")
                if re.search(r"\+ \" (" + _NOUNS + r")\b", code):
                    offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the viewer's script")
def test_the_viewer_counts_one_model_in_the_singular() -> None:
    script = (SRC / "data" / "viewer" / "app.js").read_text("utf-8")
    body = re.search(r"function countOf\(n, noun\) \{.*?\n  \}", script, re.S)
    assert body is not None
    probe = body.group(0) + '\nconsole.log(countOf(1, "model") + "|" + countOf(3, "attempt"));'
    shown = subprocess.run(["node", "-e", probe], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "1 model|3 attempts"
