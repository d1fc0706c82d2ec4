"""Reading results back out of the store: which suite and judge to score, as `ScoredItem`s.

This is the one bridge between stored rows and the pure scoring and statistics code, so every
number downstream carries the ids of the transcript and judgment it came from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from independence_bench.errors import UserError
from independence_bench.scoring.scoring import ScoredItem, ScoredSet
from independence_bench.store.store import ItemRecord, JudgmentRecord, Store
from independence_bench.suites.selection import EVERYTHING, Selection
from independence_bench.suites.suite import available_suites, suite_formula

LEGACY_FORMULAS = {"legacy-v1": "v1", "legacy-lite": "lite", "legacy-v2": "v2"}


def formula_of_suite(suite_id: str) -> str:
    """The default index formula of a suite id (shipped or imported)."""
    if suite_id in LEGACY_FORMULAS:
        return LEGACY_FORMULAS[suite_id]
    if suite_id in available_suites():
        return suite_formula(suite_id)
    raise UserError(f"unknown suite {suite_id!r} in the store; upgrade aib to read it")


def choose_suite(store: Store, suite_id: str | None) -> str:
    """The suite to report: the one asked for, or the only one in the store."""
    suites = store.run_suites()
    if suite_id is not None:
        if suite_id not in suites:
            raise UserError(f"the store has no runs of suite {suite_id!r}; it has: {suites}")
        return suite_id
    if len(suites) > 1:
        raise UserError(f"the store holds several suites {suites}; pick one with --suite")
    return suites[0]


def choose_scoring_judge(judgments: list[JudgmentRecord], judge: str | None) -> str | None:
    """The judge to score with: the one asked for, or the one with the most scored items.

    The one rule of every command that reads results (`aib run` asks for its own judge, the
    one `workflows/plan.py`'s `choose_judge` picks before any call is sent); each
    output names the judge and lists the others with `--judge` (`judge_counts`).
    Only first judgments count: repeats for test-retest must not make a judge the default.
    Among equals, the judge that judged first (the run's judge) wins.
    """
    judges = Counter(j.judge_model for j in judgments if j.status == "scored" and not j.repeat)
    if judge is not None:
        if judge not in {j.judge_model for j in judgments}:
            known = sorted({j.judge_model for j in judgments})
            raise UserError(f"no judgments by {judge!r} in the store; judges present: {known}")
        return judge
    if not judges:
        return None
    return judges.most_common(1)[0][0]


def judge_counts(judgments: Sequence[JudgmentRecord]) -> dict[str, int]:
    """Scored first judgments per judge, most first (then by name)."""
    counts = Counter(j.judge_model for j in judgments if j.status == "scored" and not j.repeat)
    return dict(sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])))


@dataclass(frozen=True)
class SuiteResults:
    """Everything scoring needs for one suite: its items, judgments and chosen judge."""

    suite_id: str
    formula: str
    judge: str | None
    judges: tuple[str, ...]
    """The judge, or every judge of a panel, whose scores are in `scored`."""
    items: tuple[ItemRecord, ...]
    judgments: tuple[JudgmentRecord, ...]
    scored: tuple[ScoredItem, ...]
    """Scored items of the chosen judges (repeat 0 only)."""
    selection: Selection = EVERYTHING
    left_out: tuple[str, ...] = ()
    """Experiments of the suite that `selection` excludes: with any, there is no index."""

    @property
    def scored_set(self) -> ScoredSet:
        """`scored` under the suite's formula and its judge (or panel), as the analyses take it."""
        return ScoredSet(self.scored, self.formula, self.judges)


def scored_item(item: ItemRecord, judgment: JudgmentRecord) -> ScoredItem:
    """One judgment of one stored item as scoring reads it (an unscored judgment: no scores)."""
    return ScoredItem(
        model=item.run.model_label,
        run=item.run.run_index,
        variant=item.variant,
        mode=item.mode,
        scenario_id=item.scenario_id,
        kind=item.kind,
        judge=judgment.judge_model,
        scores=judgment.scores or {},
        item_id=item.id,
        repeat=judgment.repeat,
    )


def scored_items(
    items: list[ItemRecord], judgments: list[JudgmentRecord], judges: set[str] | None = None
) -> list[ScoredItem]:
    """Every scored judgment (of `judges`, when given) as a `ScoredItem`, repeats included.

    When a judge judged an item more than once under different rubric versions (a rubric was
    edited, or an imported item was re-judged under the imported judge's name), only its
    newest judgment counts — scored or not — so one item never counts twice.
    """
    by_id = {item.id: item for item in items}
    newest: dict[tuple[str, str, int], JudgmentRecord] = {}
    for judgment in judgments:
        key = (judgment.item_id, judgment.judge_model, judgment.repeat)
        if key not in newest or judgment.id > newest[key].id:
            newest[key] = judgment
    out = []
    for judgment in sorted(newest.values(), key=lambda j: j.id):
        item = by_id.get(judgment.item_id)
        if item is None or judgment.status != "scored" or judgment.scores is None:
            continue
        if judges is not None and judgment.judge_model not in judges:
            continue
        out.append(scored_item(item, judgment))
    return out


def choose_hash(store: Store, suite_id: str, only_hash: str | None) -> str:
    """The suite content to score: `only_hash`, else the newest one run under this id.

    A suite whose text changed has a new hash; its answers are never pooled with the old.
    """
    runs = [r for r in store.runs(suite_id) if only_hash is None or r.suite_hash == only_hash]
    if not runs:
        raise UserError(f"the store has no runs of suite {suite_id!r} with that content")
    return max(runs, key=lambda r: (r.id, r.suite_hash)).suite_hash


def of_models(items: Sequence[ItemRecord], models: Sequence[str], suite: str) -> list[ItemRecord]:
    """The items of the model configurations `models` names (by label or model id); a name
    that matches none is a `UserError` listing the configurations the suite has."""
    known = {i.run.model_label for i in items} | {i.run.model_id for i in items}
    missing = [m for m in models if m not in known]
    if missing:
        labels = sorted({i.run.model_label for i in items})
        raise UserError(
            f"--models: suite {suite} in the store has no runs of {', '.join(missing)}; "
            f"it has {', '.join(labels) or 'none'}"
        )
    wanted = set(models)
    return [i for i in items if i.run.model_label in wanted or i.run.model_id in wanted]


def load_results(
    store: Store,
    *,
    suite_id: str | None,
    judge: str | None,
    judges: Sequence[str] = (),
    only_hash: str | None = None,
    selection: Selection = EVERYTHING,
    models: Sequence[str] = (),
) -> SuiteResults:
    """Items, judgments and the scored items of one judge (or a panel) for one suite.

    Only the suite's newest content (or `only_hash`) is read, so edited prompts never mix.
    A panel (`judges`) names each judge once, however often it was asked for.
    A `selection` keeps the items of some experiments, variants or modes (`selection.py`);
    `models` keeps those of these model configurations (label or model id).
    """
    suite = choose_suite(store, suite_id)
    suite_hash = choose_hash(store, suite, only_hash)
    items = [i for i in store.items(suite_id=suite, words=False) if i.run.suite_hash == suite_hash]
    selection.check_against(
        (i.experiment for i in items),
        (i.variant for i in items),
        (i.mode for i in items),
        f"suite {suite} in the store",
    )
    left_out = selection.left_out(i.experiment for i in items)
    items = [i for i in items if selection.matches(i.experiment, i.variant, i.mode)]
    if models:
        items = of_models(items, models, suite)
    ids = {item.id for item in items}
    judgments = [j for j in store.judgments() if j.item_id in ids]
    if judges:
        # A judge named twice in a panel counts once.
        named = (choose_scoring_judge(judgments, j) or j for j in judges)
        chosen_judges = tuple(dict.fromkeys(named))
        chosen: str | None = chosen_judges[0]
    else:
        chosen = choose_scoring_judge(judgments, judge)
        chosen_judges = (chosen,) if chosen else ()
    scored = [s for s in scored_items(items, judgments, set(chosen_judges)) if not s.repeat]
    return SuiteResults(
        suite_id=suite,
        formula=formula_of_suite(suite),
        judge=chosen,
        judges=chosen_judges,
        items=tuple(items),
        judgments=tuple(judgments),
        scored=tuple(scored),
        selection=selection,
        left_out=left_out,
    )
