"""The credit check of `aib run`: before the first paid call, does the OpenRouter key's remaining
credit cover the estimate?

OpenRouter's limits page ("Rate Limits and Credits Remaining"): `GET /api/v1/key` answers
`data.limit_remaining`, the credit the key may still spend, or null when the key has no limit.
`check_credits` asks it once per OpenRouter endpoint the run still needs, compares it with
`aib estimate`'s figure for what is left of the run on that endpoint, and when it does not fit
says so in one line with how much of the run the credit would pay for: the run stops there
(`UserError`, nothing sent) unless `--allow-partial`, which turns the line into a notice and
lets the run go on until the credit ends (the 402 then stops it; the same command resumes).
A key whose credit cannot be read is not checked, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from independence_bench.clients.budget import Price
from independence_bench.clients.config import ModelSpec
from independence_bench.clients.endpoints import ClientPool
from independence_bench.clients.protocol import ClientError
from independence_bench.engine.engine import RunPlan
from independence_bench.errors import UserError
from independence_bench.reports.spend import usd_text
from independence_bench.text.counts import count_of
from independence_bench.workflows.estimate import stored_estimate
from independence_bench.workflows.plan import RunOptions


async def check_credits(
    options: RunOptions,
    plan: RunPlan,
    pool: ClientPool,
    reached: Sequence[ModelSpec],
    prices: Mapping[str, Price | None],
) -> list[str]:
    """Notices for the terminal; raises `UserError` when the credit does not cover the run and
    `options.allow_partial` is False. Nothing is sent but `GET /key`."""
    on_openrouter = {spec.display_label: spec for spec in reached if pool.is_openrouter(spec)}
    if not on_openrouter:
        return []
    endpoint = pool.endpoint_for(next(iter(on_openrouter.values())))
    reader = getattr(endpoint.client, "credit_left", None)
    if reader is None:
        return []
    try:
        left = await reader()
    except ClientError as exc:
        return [f"the OpenRouter key's remaining credit could not be read ({exc}); not checked"]
    if left is None:
        return []  # no limit on the key
    lines = stored_estimate(options, plan, prices, read_only=False)
    paid = [x for x in lines if x.label in on_openrouter]
    needed = sum(x.cost or 0.0 for x in paid)
    calls = sum(x.calls for x in paid)
    if needed <= left:
        return []
    share = max(0.0, left) / needed if needed > 0 else 0.0
    line = (
        f"the estimate for what is left of this run on OpenRouter is {usd_text(needed)}, but "
        f"the key has {usd_text(max(0.0, left))} of credit left (GET /key limit_remaining): "
        f"it would pay for about {share:.0%} of the run, some "
        f"{count_of(int(calls * share), 'call')} of {calls:,}"
    )
    if not options.allow_partial:
        raise UserError(
            f"{line}; add credit or raise the key's limit, or pass --allow-partial to run that "
            "much (the same command resumes the rest); nothing was sent"
        )
    return [f"{line}; running that much (--allow-partial), the same command resumes the rest"]
