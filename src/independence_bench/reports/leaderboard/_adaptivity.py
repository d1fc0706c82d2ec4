"""Suite `adaptive` beside the ranking, rendered: each model's adaptivity gap and each user
model's standing as terminal lines, Markdown and JSON. `gathering.adaptivity` says how both are
measured and reads them from the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from independence_bench.gathering.adaptivity import Adaptivity
from independence_bench.reports.format import estimate_json, interval_text
from independence_bench.stats.bootstrap import AdaptivityGap
from independence_bench.text.counts import count_of
from independence_bench.text.outputs import md_text

GAP_METHOD = (
    "adaptivity gap: mean over shared topics of (rounds held / 5 under adaptive pressure) − "
    "(the same under v3's script); 95% interval from a paired bootstrap of topics (n − 1 of n)"
)


def gap_text(gap: AdaptivityGap) -> str:
    """`−0.80 (95% −1.00 to −0.60)` or why there is none."""
    if gap.gap is None:
        return "no shared topic"
    value = f"{gap.gap.value:+.2f}"
    if gap.gap.low is None:
        return f"{value} (no interval: {count_of(gap.topics, 'shared topic')})"
    return f"{value} (95% {interval_text(gap.gap, 2)})"


def adaptivity_lines(adaptivity: Adaptivity, models: Sequence[str]) -> list[str]:
    """The gap per model, in ranking order, and every user model's standing."""
    lines = [standing.caption(adaptivity.judge) for standing in adaptivity.standings]
    if adaptivity.scripted_missing is not None:
        return [*lines, f"Adaptivity gap: {adaptivity.scripted_missing}"]
    lines.append(
        "Adaptivity gap (share of rounds held under adaptive pressure minus under v3's script, "
        "same topics, same judge; below 0: firmer against the script than against new words):"
    )
    width = max([len(m) for m in models] or [0])
    for model in models:
        gap = adaptivity.gaps.get(model)
        if gap is None:
            lines.append(f"  {model:<{width}}  no v3 results under this judge")
            continue
        held = ""
        if gap.adaptive is not None and gap.scripted is not None:
            held = f"  held {gap.adaptive:.2f} adaptive vs {gap.scripted:.2f} scripted"
        lines.append(f"  {model:<{width}}  {gap_text(gap)}{held}, {count_of(gap.topics, 'topic')}")
    lines.append(f"Gap: {GAP_METHOD}.")
    return lines


def adaptivity_markdown(adaptivity: Adaptivity, models: Sequence[str]) -> list[str]:
    """LEADERBOARD.md's section for suite adaptive: the user models, then the gap table."""
    lines = ["### Adaptive pressure", ""]
    lines += [f"- {md_text(s.caption(adaptivity.judge))}" for s in adaptivity.standings]
    lines.append("")
    if adaptivity.scripted_missing is not None:
        return [*lines, f"Adaptivity gap: {md_text(adaptivity.scripted_missing)}", ""]
    lines += [
        "Adaptivity gap: the share of rounds held under adaptive pressure minus under v3's "
        "script, on the same topics under the same judge. Below 0, part of the model's firmness "
        "was firmness against words it may have seen; an interval that excludes 0 says so "
        "beyond the topics' noise.",
        "",
        "| Model | Gap (95% CI) | Held, adaptive | Held, scripted | Topics |",
        "|---|---:|---:|---:|---:|",
    ]
    for model in models:
        gap = adaptivity.gaps.get(model)
        if gap is None:
            continue
        held = [f"{v:.2f}" if v is not None else "–" for v in (gap.adaptive, gap.scripted)]
        lines.append(
            f"| {md_text(model)} | {md_text(gap_text(gap))} | {held[0]} | {held[1]} | "
            f"{gap.topics} |"
        )
    return [*lines, "", f"{md_text(GAP_METHOD)}.", ""]


def adaptivity_json(adaptivity: Adaptivity, model: str) -> dict[str, Any]:
    """What one row of the leaderboard's JSON (and results.json) carries for suite adaptive."""
    gap = adaptivity.gaps.get(model)
    return {
        "adaptivity_gap": None
        if gap is None or gap.gap is None
        else {
            **(estimate_json(gap.gap) or {}),
            "adaptive_holding": gap.adaptive,
            "scripted_holding": gap.scripted,
            "topics": gap.topics,
            "excludes_zero": gap.excludes_zero,
            "method": GAP_METHOD,
        },
        "user_models": [
            {
                "user_model": s.user_model,
                "rounds": s.rounds,
                "valid_rounds": s.valid,
                "valid_share": s.share,
                "new_fact_rounds": s.new_fact,
                "not_pressed_rounds": s.not_pressed,
                "conversations_left_out": s.conversations_left_out,
                "judge": adaptivity.judge,
                "standing": s.standing,
            }
            for s in adaptivity.standings
        ],
    }
