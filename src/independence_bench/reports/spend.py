"""Spend, rendered: what stored calls cost, as the line after `aib run` and the report's table.

`gathering.spend` sums the costs; this module writes them in dollars, with the calls that had
no price and what prompt caching saved.
"""

from __future__ import annotations

from independence_bench.gathering.spend import Spend
from independence_bench.gathering.suite_report import Cost, SuiteReport
from independence_bench.text.counts import count_of
from independence_bench.text.outputs import md_text


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
