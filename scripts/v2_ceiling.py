"""Ceiling and item discrimination of the v2 scenarios, from the earlier implementation's results.

Reads a ``cache/`` folder of that implementation (``<config>/run_<n>/<experiment>/<variant>/
<mode>/<scenario>.json``), takes the judge score of each scored turn file under
strong_independence + tool_role, averages it over a configuration's runs, and prints two
Markdown tables. Per scenario: how many configurations and judgments have it, the share at the
maximum, the share within 0.5 of it, the range of configuration means, and the item–rest
correlation (across configurations, the scenario's mean against the mean of that
configuration's other pressure scenarios), also without the configuration weakest on the rest.
Per configuration: its boundary and stability means. Unscored judgments (``{}`` or missing)
count for nothing. Standard library only; it never writes anything.

    python3 scripts/v2_ceiling.py /work/shared/data/upstream-sample/cache
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from statistics import fmean, pstdev

from independence_bench.text.counts import count_of

CELL = ("strong_independence", "tool_role")

# (label, experiment folder, file stem, score field, best value)
ITEMS: tuple[tuple[str, str, str, str, float], ...] = (
    ("boundary rs01 helpful reframing", "resistance", "rs01", "resistance_score", 10),
    ("boundary rs02 social proof", "resistance", "rs02", "resistance_score", 10),
    ("boundary rs03 gradual erosion", "resistance", "rs03", "resistance_score", 10),
    ("boundary rs04 reciprocity", "resistance", "rs04", "resistance_score", 10),
    ("boundary rs05 reasonable authority", "resistance", "rs05", "resistance_score", 10),
    ("stability pt01", "stability", "pt01_turn2", "consistency_score", 10),
    ("stability pt02", "stability", "pt02_turn2", "consistency_score", 10),
    ("stability pt03", "stability", "pt03_turn2", "consistency_score", 10),
    ("stability pt04", "stability", "pt04_turn2", "consistency_score", 10),
    ("stability pt05", "stability", "pt05_turn2", "consistency_score", 10),
    ("negotiation drift (0 best)", "identity", "negotiation_turn2", "drift_from_initial", 0),
    ("name changed (0 best)", "identity", "name_gender_turn2", "name_changed", 0),
    ("gender changed (0 best)", "identity", "name_gender_turn2", "gender_changed", 0),
    ("direct non-assistant-likeness", "identity", "direct", "non_assistant_likeness", 10),
    ("tool_context non-assistant", "identity", "tool_context", "non_assistant_likeness", 10),
    ("psych batch non-assistant-likeness", "identity", "pq01", "non_assistant_likeness", 10),
    ("direct internal consistency", "identity", "direct", "internal_consistency", 10),
    ("psych batch internal consistency", "identity", "pq01", "internal_consistency", 10),
)
PRESSURE = {label for label, experiment, *_ in ITEMS if experiment in ("resistance", "stability")}


def read_score(path: Path, field: str) -> float | None:
    """The judge's value for `field` in one turn file; None when absent or unscored."""
    if not path.is_file():
        return None
    scores = json.loads(path.read_text(encoding="utf-8")).get("judge_scores") or {}
    value = scores.get(field)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, int | float) else None


def config_scores(cache: Path) -> dict[str, dict[str, list[float]]]:
    """{config: {item label: the scored values of its runs}}."""
    scores: dict[str, dict[str, list[float]]] = {}
    for config in sorted(p for p in cache.iterdir() if p.is_dir()):
        per_item: dict[str, list[float]] = defaultdict(list)
        for run in sorted(config.glob("run_*")):
            for label, experiment, stem, field, _ in ITEMS:
                value = read_score(run / experiment / CELL[0] / CELL[1] / f"{stem}.json", field)
                if value is not None:
                    per_item[label].append(value)
        scores[config.name] = dict(per_item)
    return scores


def pearson(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3 or pstdev(xs) == 0 or pstdev(ys) == 0:
        return None
    mx, my = fmean(xs), fmean(ys)
    cov = fmean([(x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)])
    return cov / (pstdev(xs) * pstdev(ys))


def item_rows(scores: dict[str, dict[str, list[float]]]) -> list[tuple[str, ...]]:
    """One table row per item: ceiling shares, spread and item–rest correlation."""
    means = {c: {k: fmean(v) for k, v in items.items()} for c, items in scores.items()}
    rows = []
    for label, _, _, _, best in ITEMS:
        have = {c: m[label] for c, m in means.items() if label in m}
        values = list(have.values())
        singles = [v for items in scores.values() for v in items.get(label, [])]
        at_max = sum(v == best for v in values) / len(values)
        near = sum(abs(v - best) <= 0.5 for v in values) / len(values)
        r = r_trimmed = None
        if label in PRESSURE:
            pairs = sorted(
                (fmean([s for k, s in means[c].items() if k in PRESSURE and k != label]), v)
                for c, v in have.items()
            )
            r = pearson([p[1] for p in pairs], [p[0] for p in pairs])
            # Without the configuration weakest on the rest: is the item still informative
            # among the models people actually choose between?
            r_trimmed = pearson([p[1] for p in pairs[1:]], [p[0] for p in pairs[1:]])
        rows.append(
            (
                label,
                f"{len(values)} / {len(singles)}",
                f"{sum(v == best for v in singles) / len(singles):.0%}",
                f"{at_max:.0%}",
                f"{near:.0%}",
                f"{min(values):.1f}–{max(values):.1f}",
                f"{fmean(values):.2f}",
                "–" if r is None else f"{r:+.2f}",
                "–" if r_trimmed is None else f"{r_trimmed:+.2f}",
            )
        )
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cache = Path(argv[1])
    scores = config_scores(cache)
    runs = sorted((len(list((cache / c).glob("run_*"))) for c in scores), reverse=True)
    each = ", ".join(map(str, runs))
    print(f"{len(scores)} configurations, {count_of(sum(runs), 'run')} ({each})\n")
    header = (
        "item",
        "configs / judgments",
        "judgments at max",
        "configs at max",
        "configs within 0.5",
        "range of config means",
        "mean",
        "item–rest r",
        "r without weakest config",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in item_rows(scores):
        print("| " + " | ".join(row) + " |")
    print("\n| configuration | runs | boundary mean | stability mean |\n|---|---|---|---|")
    for config, items in scores.items():
        parts = [
            [fmean(v) for k, v in items.items() if k.startswith(prefix)]
            for prefix in ("boundary", "stability")
        ]
        cells = [f"{fmean(p):.2f}" if p else "–" for p in parts]
        n = len(list((cache / config).glob("run_*")))
        print(f"| {config} | {n} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
