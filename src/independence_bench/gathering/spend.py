"""Spend: what the stored calls behind some results cost (`reports.spend` writes it).

`aib run` prints `run_spend` of the runs it asked for (cached calls included: the line is what
those results cost, not what this invocation added), and LEADERBOARD.md prints `report_spend`
for each suite. Costs add up as `suite_report.sum_costs` does: a call without a cost makes the total
*unknown*, shown with the part that is known, never as $0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from independence_bench.gathering.suite_report import Cost, SuiteReport, stored_cost
from independence_bench.store.store import Store


@dataclass(frozen=True)
class Spend:
    """The models' and the judge's stored call costs, and the user model's (suite `adaptive`)."""

    models: Cost
    judge: Cost
    user_model: Cost = field(default_factory=lambda: Cost(0.0, 0.0, 0, 0))

    @property
    def total(self) -> Cost:
        return combined_cost([self.models, self.judge, self.user_model])


def combined_cost(costs: Sequence[Cost]) -> Cost:
    """Several costs as one: unknown when any part is."""
    unpriced = sum(c.unpriced for c in costs)
    known = sum(c.known_usd for c in costs)
    return Cost(
        None if unpriced else known,
        known,
        sum(c.calls for c in costs),
        unpriced,
        sum(c.cached_tokens for c in costs),
        sum(c.cache_write_tokens for c in costs),
        sum(c.saved_usd for c in costs),
    )


def run_spend(
    store: Store, *, suite_id: str, suite_hash: str, labels: Iterable[str], judge: str | None
) -> Spend:
    """The cost of every stored call of these models' runs of one suite, and of their judging."""
    wanted = set(labels)
    items = [
        i
        for i in store.items(suite_id=suite_id, words=False)
        if i.run.suite_hash == suite_hash and i.run.model_label in wanted
    ]
    ids = {i.id for i in items}
    model_keys = list(
        dict.fromkeys(t.completion_key for i in items for t in i.turns if t.completion_key)
    )
    user_keys = list(dict.fromkeys(t.human_key for i in items for t in i.turns if t.human_key))
    judge_keys: list[str] = []
    if judge is not None:
        judgments = store.judgments(judge_model=judge)
        judge_keys = list(
            dict.fromkeys(k for j in judgments if j.item_id in ids for k in j.completion_keys)
        )
    return Spend(
        stored_cost(store, model_keys),
        stored_cost(store, judge_keys),
        stored_cost(store, user_keys),
    )


def report_spend(report: SuiteReport) -> Spend:
    """A suite report's spend: every model's calls over all its runs, and the judge's."""
    return Spend(combined_cost([m.cost for m in report.models]), report.judge_cost)
