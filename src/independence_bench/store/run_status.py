"""Where each stored run stands — complete, or partial with what is missing — and run numbers.

A run (model configuration × suite × run number) is *complete* when every conversation its
suite defines is stored as done and every done conversation has a judgment; a run of a suite
this version does not ship (an import) has no known size, and is complete when it holds
conversations, every one done and judged. Anything else is *partial*: conversations failed
(retried by the next `aib run`), missing (never finished — a killed process, a cost cap), or
not yet judged. `aib runs` prints this; `aib run --fresh` takes its run numbers from
`reserve_fresh_runs`, after the runs a model already has, and writes their rows in the same
write transaction, so two `--fresh` runs started together get different numbers (`aib
estimate --fresh` only reads them, `next_run_numbers`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.model_identity import answered_by_other
from independence_bench.store.store import RunRecord, Store
from independence_bench.suites.suite import Suite, available_suites, load_suite
from independence_bench.text.counts import count_of
from independence_bench.text.outputs import one_line_label
from independence_bench.version import __version__


@dataclass(frozen=True)
class RunState:
    """One stored run's counts of conversations and judgments."""

    model: str
    suite_id: str
    run_index: int
    source: str
    expected: int | None
    """Conversations the suite defines; None when this version does not ship the suite."""
    done: int
    failed: int
    scored: int
    """Done conversations with at least one scored judgment."""
    unscored: int
    """Done conversations whose judgments are all unscored (the judge's reply never validated)."""
    cut: int = 0
    """Replies in its conversations that the reply cap cut (`engine/reply_cap.py`)."""
    other_model: int = 0
    """Replies whose `model` names another model than the one asked (`model_identity.py`)."""
    other_example: str = ""
    """One such reply's model, `asked → answered`, for the line that counts them."""

    @property
    def missing(self) -> int | None:
        if self.expected is None:
            return None
        return max(0, self.expected - self.done - self.failed)

    @property
    def unjudged(self) -> int:
        return self.done - self.scored - self.unscored

    @property
    def state(self) -> str:
        # Of a suite this version does not ship the size is unknown: such a run (an import)
        # counts as complete only when it holds something, all of it done and judged.
        whole = self.missing == 0 if self.expected is not None else self.done > 0
        complete = whole and not self.failed and not self.unjudged
        return "complete" if complete else "partial"


def _expected_items(suite_id: str, suite_hash: str, cache: dict[str, Suite | None]) -> int | None:
    if suite_id not in cache:
        cache[suite_id] = load_suite(suite_id) if suite_id in available_suites() else None
    suite = cache[suite_id]
    if suite is None or suite.content_hash != suite_hash:
        return None
    return len(suite.variants) * len(suite.delivery_modes) * len(suite.scenarios)


def run_states(store: Store, *, suite_id: str | None = None) -> list[RunState]:
    """Every run in the store (of one suite, if given) with its counts, by model and run."""
    judged: dict[str, set[str]] = defaultdict(set)
    for judgment in store.judgments():
        judged[judgment.item_id].add(judgment.status)
    counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cut = store.cut_completions()
    other = {
        key: f"{asked} → {answered}"
        for key, (asked, answered) in store.answered_models().items()
        if answered_by_other(asked, answered)
    }
    examples: dict[int, str] = {}
    for item in store.items(suite_id=suite_id, words=False):
        tally = counts[item.run.id]
        tally[item.status] += 1
        tally["cut"] += sum(turn.completion_key in cut for turn in item.turns)
        for turn in item.turns:
            if turn.completion_key in other:
                tally["other"] += 1
                examples.setdefault(item.run.id, other[turn.completion_key])
        if item.status == "done":
            statuses = judged.get(item.id, set())
            if "scored" in statuses:
                tally["scored"] += 1
            elif statuses:
                tally["unscored"] += 1
    suites: dict[str, Suite | None] = {}
    states = []
    for run in store.runs(suite_id):
        tally = counts[run.id]
        states.append(
            RunState(
                model=run.model_label,
                suite_id=run.suite_id,
                run_index=run.run_index,
                source=run.source,
                expected=_expected_items(run.suite_id, run.suite_hash, suites),
                done=tally["done"],
                failed=tally["failed"],
                scored=tally["scored"],
                unscored=tally["unscored"],
                cut=tally["cut"],
                other_model=tally["other"],
                other_example=examples.get(run.id, ""),
            )
        )
    return states


def render_run_states(states: Sequence[RunState], width: int = 10_000) -> str:
    """`aib runs`: one line per run, then a one-line summary; where a line would be wider than
    `width`, each run's conversations and judgments go on indented lines of their own."""
    if not states:
        return "the store holds no runs yet; 'aib run' starts one"
    rows = [("model", "suite", "run", "state", "conversations", "judgments")]
    for s in states:
        missing = "?" if s.missing is None else str(s.missing)
        source = "" if s.source == "run" else f" ({s.source})"
        cut = f", {count_of(s.cut, 'reply')} cut" if s.cut else ""
        if s.other_model:
            cut += f", {count_of(s.other_model, 'reply')} by another model"
        rows.append(
            (
                one_line_label(s.model),
                s.suite_id,
                str(s.run_index),
                s.state + source,
                f"{s.done} done, {s.failed} failed, {missing} missing{cut}",
                f"{s.scored} scored, {s.unscored} unscored, {s.unjudged} to judge",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    if max(map(len, lines)) > width:
        head = [row[:4] for row in rows]
        narrow = [max(len(row[i]) for row in head) for i in range(4)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(head[0], narrow, strict=True)).rstrip()]
        for row in rows[1:]:
            lines.append("  ".join(c.ljust(w) for c, w in zip(row[:4], narrow, strict=True)))
            lines[-1] = lines[-1].rstrip()
            lines += [f"  conversations: {row[4]}", f"  judgments: {row[5]}"]
    partial = sum(1 for s in states if s.state == "partial")
    summary = f"{count_of(len(states), 'run')}: {len(states) - partial} complete, {partial} partial"
    if partial:
        summary += "; the same 'aib run' command completes the partial ones"
    cut_replies = sum(s.cut for s in states)
    if cut_replies:
        longer = f"{count_of(cut_replies, 'reply')} longer than the reply cap"
        summary += f"; {longer} {'was' if cut_replies == 1 else 'were'} stored and judged cut"
    others = [s for s in states if s.other_model]
    if others:
        total = sum(s.other_model for s in others)
        summary += (
            f"; {count_of(total, 'reply')} named another model than the one asked (e.g. "
            f"{one_line_label(others[0].other_example)}): 'aib view' flags each on its turn"
        )
    lines.append(summary)
    return "\n".join(lines)


def next_run_numbers(store: Store, suite: Suite, specs: Sequence[ModelSpec]) -> dict[str, int]:
    """Per model label, the run number after the highest one stored for this suite."""
    highest: dict[str, int] = {}
    for run in store.runs(suite.id):
        if run.suite_hash == suite.content_hash:
            highest[run.model_label] = max(highest.get(run.model_label, 0), run.run_index)
    return {spec.display_label: highest.get(spec.display_label, 0) + 1 for spec in specs}


def ensure_model_run(
    store: Store, spec: ModelSpec, suite: Suite, run_index: int
) -> tuple[RunRecord, bool]:
    """`Store.ensure_run` for run `run_index` of configuration `spec` on `suite`, recording
    the configuration and this package's version."""
    return store.ensure_run(
        model_label=spec.display_label,
        model_id=spec.id,
        suite_id=suite.id,
        suite_version=suite.version,
        suite_hash=suite.content_hash,
        run_index=run_index,
        model_config=spec.stored_config(),
        package_version=__version__,
    )


def reserve_fresh_runs(
    store: Store, suite: Suite, specs: Sequence[ModelSpec], runs: int
) -> dict[str, int]:
    """`next_run_numbers`, with the rows of runs first..first+runs-1 written for each model.

    The numbers are read and the rows written in one `BEGIN IMMEDIATE` transaction: another
    process doing the same waits for the write lock and then sees these rows, so it starts
    after them. The engine finds the rows (`Store.ensure_run` keeps an existing row).
    """
    with store.transaction():
        first = next_run_numbers(store, suite, specs)
        for spec in specs:
            start = first[spec.display_label]
            for run_index in range(start, start + runs):
                ensure_model_run(store, spec, suite, run_index)
    return first
