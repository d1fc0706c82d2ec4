"""What prompt caching saves: the billed cost of one v3 model-run, with and without caching,
and what `aib estimate` said beforehand, on the OpenRouter emulator that bills as documented.

The emulator (`tests/support/emulate_billing.py`, every rule beside its documentation page)
bills each model family as OpenRouter's prompt-caching page says: Anthropic caches only at
`cache_control` breakpoints (writes 1.25x the input price, reads 0.1x, prefixes of 1,024
tokens or more), OpenAI automatically (writes free, reads 0.5x, 1,024 tokens or more), DeepSeek
automatically (writes at the input price, reads 0.1x, 64 tokens or more). Prices are the
emulator's ($1 per million input tokens, $2 output, $100 per million calls); the share saved
is what carries over to real prices of the same shape. Replies are lengthened to the
estimate's assumption (250 tokens; a judge's billed as 400), so estimate and bill differ only
by the pricing model, not by reply lengths.

For each family it runs one model-run of suite v3 twice into fresh stores — `--no-prompt-cache`
and the default — with the judge of the same family, and prints per side (subject, judge):
billed, what the calls would have cost uncached (billed + `cache_discount`), and the estimate.

    python benchmarks/prompt_cache.py [--suite v3] [--families anthropic,openai,deepseek]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from independence_bench.clients.openrouter import BASE_URL_ENV, FREE_RPM_ENV, KEY_ENV
from independence_bench.gathering.spend import run_spend
from independence_bench.store.store import Store
from independence_bench.workflows.estimate import estimate_benchmark_async
from independence_bench.workflows.plan import RunOptions, planned_suite
from independence_bench.workflows.run import run_benchmark_async
from support.mock_openrouter import MockOpenRouter, OpenRouterScript

SUBJECT = "scripted-firm"
JUDGE = "scripted-judge"


@dataclass(frozen=True)
class Billed:
    family: str
    cached: bool
    model_usd: float
    model_uncached_usd: float
    judge_usd: float
    judge_uncached_usd: float
    estimate_model_usd: float
    estimate_judge_usd: float


def _estimate_cells(text: str, labels: Sequence[str]) -> list[float]:
    """The estimate column of `aib estimate`'s rows for these labels."""
    found = []
    for label in labels:
        row = next(line for line in text.splitlines() if line.startswith(label + " "))
        money = [x for x in row.split() if x.startswith("$")]
        found.append(float(money[0].strip("$").replace(",", "")))
    return found


async def measure(family: str, *, cached: bool, suite: str, data_dir: Path) -> Billed:
    script = OpenRouterScript(bill=True, reply_tokens=250, judge_reply_tokens=400)
    with MockOpenRouter(script) as server:
        env = {BASE_URL_ENV: server.base_url, KEY_ENV: "sk-or-emulated", FREE_RPM_ENV: "60000"}
        options = RunOptions(
            models=f"{family}/{SUBJECT}",
            judge=f"{family}/{JUDGE}",
            suite_id=suite,
            runs=1,
            data_dir=data_dir,
            env=env,
            show_progress=False,
            prompt_cache=cached,
        )
        estimate = await estimate_benchmark_async(options)
        est_model, est_judge = _estimate_cells(
            estimate, [f"{family}/{SUBJECT}", f"judge {family}/{JUDGE}"]
        )
        await run_benchmark_async(options)
    spec_suite = planned_suite(options)
    with Store(data_dir, read_only=True) as store:
        spend = run_spend(
            store,
            suite_id=spec_suite.id,
            suite_hash=spec_suite.content_hash,
            labels=[f"{family}/{SUBJECT}"],
            judge=f"{family}/{JUDGE}",
        )
    return Billed(
        family,
        cached,
        spend.models.known_usd,
        spend.models.known_usd + spend.models.saved_usd,
        spend.judge.known_usd,
        spend.judge.known_usd + spend.judge.saved_usd,
        est_model,
        est_judge,
    )


def render(rows: Sequence[Billed]) -> str:
    head = (
        f"{'family':<10} {'cache':<6} {'subject billed':>14} {'uncached':>10} {'estimate':>10} "
        f"{'judge billed':>13} {'uncached':>10} {'estimate':>10}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r.family:<10} {'on' if r.cached else 'off':<6} ${r.model_usd:>13.4f} "
            f"${r.model_uncached_usd:>9.4f} ${r.estimate_model_usd:>9.4f} ${r.judge_usd:>12.4f} "
            f"${r.judge_uncached_usd:>9.4f} ${r.estimate_judge_usd:>9.4f}"
        )
    by_family: dict[str, dict[bool, Billed]] = {}
    for r in rows:
        by_family.setdefault(r.family, {})[r.cached] = r
    for family, pair in by_family.items():
        if True in pair and False in pair:
            off, on = pair[False], pair[True]
            before = off.model_usd + off.judge_usd
            after = on.model_usd + on.judge_usd
            lines.append(
                f"{family}: one model-run with its judging ${before:.4f} without breakpoints, "
                f"${after:.4f} with: {1 - after / before:.0%} saved"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--suite", default="v3")
    parser.add_argument("--families", default="anthropic,openai,deepseek")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families.split(","):
            for cached in (False, True):
                where = Path(tmp) / f"{family}-{'on' if cached else 'off'}"
                rows.append(asyncio.run(measure(family, cached=cached, suite=args.suite,
                                                data_dir=where)))  # fmt: skip
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
