"""Spend: what the stored calls behind some results cost, as one line.

`aib run` prints `run_spend` of the runs it asked for (cached calls included: the line is what
those results cost, not what this invocation added), and LEADERBOARD.md prints `report_spend`
for each suite. Costs add up as `_gather.sum_costs` does: a call without a cost makes the total
*unknown*, shown with the part that is known, never as $0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from independence_bench.reports.report._gather import Cost, SuiteReport, stored_cost
from independence_bench.store.store import Store
from independence_bench.text.counts import count_of
from independence_bench.text.outputs import md_text


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


def usd_text(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def spend_line(spend: Spend) -> str:
    """`total spend: $0.0123 (models $0.0100, judge $0.0023) over 120 stored calls`."""
    total = spend.total
    amount = usd_text(total.known_usd) if total.usd is not None else "unknown"
    user = f", user model {usd_text(spend.user_model.known_usd)}" if spend.user_model.calls else ""
    line = (
        f"total spend: {amount} (models {usd_text(spend.models.known_usd)}, judge "
        f"{usd_text(spend.judge.known_usd)}{user}) over {count_of(total.calls, 'stored call')}"
    )
    if total.unpriced:
        line += (
            f"; {count_of(total.unpriced, 'call')} {'has' if total.unpriced == 1 else 'have'} "
            "no cost (none reported, no price set), so it is "
            f"at least {usd_text(total.known_usd)}"
        )
    if total.cached_tokens or total.cache_write_tokens:
        line += f"; {cache_text(total)}"
    return line


def cache_text(cost: Cost) -> str:
    """`prompt cache: 90,000 tokens read, 10,000 written, saved $0.0400 of $0.0900 uncached`."""
    uncached = cost.known_usd + cost.saved_usd
    return (
        f"prompt cache: {cost.cached_tokens:,} tokens read, {cost.cache_write_tokens:,} "
        f"written, saved {_signed_usd(cost.saved_usd)} of {usd_text(uncached)} uncached"
    )


def cost_table(report: SuiteReport) -> list[str]:
    """The report's cost table in Markdown: per model and for the judge, what was billed, what
    it would have cost with no prompt cache, what caching saved, and the tokens it read and
    wrote (all from the stored calls' usage)."""
    head = "| Calls of | Billed | Uncached | Saved | Cached tokens read | Written |"
    lines = [head, "|---|---:|---:|---:|---:|---:|"]
    rows = [(m.model, m.cost) for m in report.models]
    if report.judge is not None:
        rows.append((f"judge {report.judge}", report.judge_cost))
    for name, cost in rows:
        billed = usd_text(cost.known_usd) if cost.usd is not None else "unknown"
        uncached = usd_text(cost.known_usd + cost.saved_usd) if cost.usd is not None else "unknown"
        lines.append(
            f"| {md_text(name)} | {billed} | {uncached} | {_signed_usd(cost.saved_usd)} | "
            f"{cost.cached_tokens:,} | {cost.cache_write_tokens:,} |"
        )
    return lines


def _signed_usd(value: float) -> str:
    return usd_text(value) if value >= 0 else "-" + usd_text(-value)
