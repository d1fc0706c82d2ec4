"""What a run still has to do, read from the store before any endpoint is touched.

Running the same command again is how a run resumes, and once everything is stored it is how a
user prints the leaderboard again. Such a re-run should cost nothing: no chat call (the engine
finds every call in the store) and no `GET /models` either, which a survey of every endpoint
would send, and which fails when a server is no longer up or a key no longer set. So before the
endpoints are surveyed, `pending_work` reads from the store which models still have a
conversation to run and whether any judgment is missing; only their endpoints are surveyed,
priced and loaded. It reads the same item ids and judgment keys the engine writes and writes
nothing, so the store is left as it was even when the run stops at the survey.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from independence_bench.clients.config import ModelSpec
from independence_bench.engine.request_keys import item_id, user_model_identity
from independence_bench.judging.forms import JudgeForm, judge_form_of, judge_label_of
from independence_bench.judging.rubric import load_rubric
from independence_bench.store.store import ItemRecord, Store
from independence_bench.suites.kinds import KINDS
from independence_bench.suites.suite import Scenario, Suite


@dataclass(frozen=True)
class PendingWork:
    """The model labels with a conversation not yet done, and whether a judgment is missing."""

    models: frozenset[str]
    judge: bool

    def specs(
        self,
        models: tuple[ModelSpec, ...],
        judge: ModelSpec | None,
        user_model: ModelSpec | None = None,
    ) -> tuple[ModelSpec, ...]:
        """The specs whose endpoints the run will call: models with work, the judge if needed,
        and the user model while any conversation is to run."""
        working = tuple(spec for spec in models if spec.display_label in self.models)
        user = (user_model,) if user_model is not None and working else ()
        return working + user + ((judge,) if judge is not None and self.judge else ())


def everything(models: tuple[ModelSpec, ...], judge: ModelSpec | None) -> PendingWork:
    """All of it: nothing is stored yet (or the store cannot be read before the run)."""
    return PendingWork(frozenset(spec.display_label for spec in models), judge is not None)


def pending_work(
    store: Store,
    suite: Suite,
    models: tuple[ModelSpec, ...],
    judge: ModelSpec | None,
    runs: range,
    *,
    judge_repeats: int = 1,
    rubric_hash: Callable[[str, JudgeForm], str] | None = None,
    user_model: ModelSpec | None = None,
) -> PendingWork:
    """What runs `runs` of `suite` for `models`, judged by `judge`, still need.

    A conversation that is missing or failed is work for its model, and for the judge, which
    will judge it once it is done; a done conversation without this judge's judgment under its
    rubric is work for the judge.
    """
    hashes: dict[str, str] = {}

    def hash_of(rubric_id: str) -> str:
        if rubric_id not in hashes:
            form = judge_form_of(judge) if judge is not None else "holistic"
            hashes[rubric_id] = (rubric_hash or _loaded_rubric_hash)(rubric_id, form)
        return hashes[rubric_id]

    working: set[str] = set()
    judging = False
    for spec in models:
        label = spec.display_label
        for iid, scenario in _items(suite, label, runs, user_model_identity(user_model)):
            if store.item_status(iid) != "done":
                working.add(label)
                judging = judge is not None
                break
            if judge is not None and not judging:
                rubric = hash_of(scenario.rubric)
                judging = not all(
                    store.has_judgment(iid, judge_label_of(judge), rubric, repeat)
                    for repeat in range(judge_repeats)
                )
    return PendingWork(frozenset(working), judging)


def all_scored(store: Store, item_id: str, judge: str, rubric_hash: str, repeats: int) -> bool:
    """Whether `judge` scored the item under this rubric hash in each of `repeats` repeats
    (an *unscored* judgment is work: it is judged again)."""
    return all(
        store.judgment_status(item_id, judge, rubric_hash, repeat) == "scored"
        for repeat in range(repeats)
    )


@dataclass(frozen=True)
class Rejudged:
    """A stored judgment this judge made under an earlier version of its rubric: the run will
    judge the item again (and pay for it)."""

    item: ItemRecord
    rubric_id: str
    repeat: int


def rejudged_work(
    store: Store,
    suite: Suite,
    models: tuple[ModelSpec, ...],
    judge: ModelSpec,
    runs: range,
    *,
    judge_repeats: int = 1,
    user_model: ModelSpec | None = None,
) -> list[Rejudged]:
    """The done conversations of `runs` that `judge` judged under another hash of the same
    rubric (the rubric's text or the judge form's wording changed, as an upgrade does) and not
    under the current one: what the run will judge again."""
    form = judge_form_of(judge)
    # One load per rubric, not per scenario: a stored re-run surveys every item (issue 39).
    current = {r: _loaded_rubric_hash(r, form) for r in {s.rubric for s in suite.scenarios}}
    judged = store.judged_hashes(judge_label_of(judge))
    redo: list[Rejudged] = []
    for spec in models:
        for iid, scenario in _items(
            suite, spec.display_label, runs, user_model_identity(user_model)
        ):
            for repeat in range(judge_repeats):
                hashes = judged.get((iid, repeat), set())
                if not hashes or current[scenario.rubric] in hashes:
                    continue
                item = store.get_item(iid)
                if item is not None and item.status == "done":
                    redo.append(Rejudged(item, scenario.rubric, repeat))
    return redo


def _items(
    suite: Suite, label: str, runs: range, user: str | None
) -> Iterator[tuple[str, Scenario]]:
    """Every item id of `label`'s runs, with its scenario, in the engine's order."""
    for run_index in runs:
        for variant in suite.variants:
            for mode in suite.delivery_modes:
                for scenario in suite.scenarios:
                    written = user if KINDS[scenario.kind].adaptive else None
                    place = (run_index, variant.id, mode, scenario.id, written)
                    yield item_id(suite, label, *place), scenario


def _loaded_rubric_hash(rubric_id: str, judge_form: JudgeForm) -> str:
    return load_rubric(rubric_id).asked(judge_form).hash
