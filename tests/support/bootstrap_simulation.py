"""Simulated benchmarks with known true scores, to check the bootstrap's coverage.

Every simulated benchmark asks M models the `v2` suite's shape of scenarios for R runs. A
model's item value for metric k is

    true mean (model, k) + scenario effect (scenario, k) + model × scenario effect + run noise,

all effects zero-mean and bounded, so no value leaves its scale. What is true follows the
decision in `stats/bootstrap/_draws.py`'s docstring: the scenarios of a multi-scenario stratum
(three trait prompts, five boundary tactics, five stability topics) are a fresh sample from
their population in every simulated benchmark, while the negotiation and the name/gender
conversation — one scenario each — are the experiments' fixed protocol: their effects are drawn
once per simulation and are part of each model's true index. The true index is then the formula
applied to each metric's expectation over runs and sampled scenarios, and the true rank is the
place by true index.

`simulate` runs the leaderboard bootstrap (shared scenario draws) on each simulated benchmark,
and optionally the same bootstrap with every model drawing its own scenarios, and counts how
often the intervals cover the truth and how wide they are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from statistics import fmean

import numpy as np

from independence_bench.scoring.scoring import ItemMetrics, linear_index
from independence_bench.stats.bootstrap import Subject, draw_resamples, interval_of, rank_intervals
from independence_bench.stats.core import Resampling

TRAITS = ("distinctiveness", "non_assistant_likeness", "internal_consistency")
SAMPLED = (  # (scenario kind, number of scenarios drawn from its population, metrics)
    ("direct", 3, TRAITS),
    ("boundary", 5, ("resistance",)),
    ("stability", 5, ("stability",)),
)
FIXED = (  # one-scenario experiments: their scenario is part of the truth
    ("negotiation", (*TRAITS, "drift")),
    ("name_gender", ("name_gender_changes",)),
)
SCALE = {"name_gender_changes": 0.2}
"""Effects are given on a 0–10 scale; name/gender changes run 0–2."""
SCENARIO, INTERACTION, NOISE = 1.0, 0.7, 1.2
"""Half-widths of the uniform scenario, model × scenario and run-noise effects (0–10 scale)."""


@dataclass(frozen=True)
class World:
    """The fixed part of a simulation: models' true metric means and the fixed scenarios."""

    means: dict[str, dict[str, float]]
    fixed: dict[tuple[str, str, str], float]
    """(kind, model, metric) -> that fixed scenario's effect for the model (scenario + model ×
    scenario), part of the model's truth."""

    def true_metrics(self, model: str) -> dict[str, float]:
        """Each metric's expectation for `model`: items of a sampled stratum average to the
        true mean; a fixed scenario adds its own effect, weighted by its share of the items."""
        out = {}
        for metric, mean in self.means[model].items():
            feeds = [n for _, n, metrics in SAMPLED if metric in metrics]
            fixed = [k for k, metrics in FIXED if metric in metrics]
            total = sum(feeds) + len(fixed)
            shift = sum(self.fixed[(k, model, metric)] for k in fixed)
            out[metric] = mean + shift / total
        return out

    def true_index(self, model: str) -> float:
        constant, coefficients = linear_index("v2")
        metrics = self.true_metrics(model)
        return constant + sum(w * metrics[k] for k, w in coefficients.items())


def make_world(models: int, rng: random.Random) -> World:
    """Models whose true levels are spread evenly, so neighbours are hard to tell apart."""
    means: dict[str, dict[str, float]] = {}
    for number in range(models):
        level = 3.5 + 3.0 * number / max(1, models - 1)
        name = f"m{number:02d}"
        means[name] = {}
        for _, _, metrics in (*SAMPLED, *((k, 1, m) for k, m in FIXED)):
            for metric in metrics:
                means[name][metric] = (level + rng.uniform(-0.5, 0.5)) * SCALE.get(metric, 1.0)
    fixed = {}
    for kind, metrics in FIXED:
        for metric in metrics:
            shared = rng.uniform(-SCENARIO, SCENARIO)
            for model in means:
                own = rng.uniform(-INTERACTION, INTERACTION)
                fixed[(kind, model, metric)] = (shared + own) * SCALE.get(metric, 1.0)
    return World(means, fixed)


def simulate_benchmark(world: World, runs: int, rng: random.Random) -> list[ItemMetrics]:
    """One benchmark: fresh sampled scenarios, fresh model × scenario effects, fresh noise."""
    effects: dict[tuple[str, str], float] = {}
    scenarios = []
    for kind, count, metrics in SAMPLED:
        for number in range(count):
            scenario = f"{kind}-{number}"
            scenarios.append((kind, scenario, metrics))
            for metric in metrics:
                effects[(scenario, metric)] = rng.uniform(-SCENARIO, SCENARIO)
    items = []
    for model, means in world.means.items():
        interaction = {
            (scenario, metric): rng.uniform(-INTERACTION, INTERACTION)
            for _, scenario, metrics in scenarios
            for metric in metrics
        }
        for run in range(1, runs + 1):
            for kind, scenario, metrics in scenarios:
                values = {
                    m: means[m]
                    + (effects[(scenario, m)] + interaction[(scenario, m)]) * SCALE.get(m, 1.0)
                    + rng.uniform(-NOISE, NOISE) * SCALE.get(m, 1.0)
                    for m in metrics
                }
                items.append(ItemMetrics(model, run, "v", "tool_role", scenario, kind, values))
            for kind, metrics in FIXED:
                values = {
                    m: means[m]
                    + world.fixed[(kind, model, m)]
                    + rng.uniform(-NOISE, NOISE) * SCALE.get(m, 1.0)
                    for m in metrics
                }
                items.append(ItemMetrics(model, run, "v", "tool_role", kind, kind, values))
    return items


@dataclass
class Coverage:
    """Tallies over simulated benchmarks: how often intervals covered the truth, and widths."""

    index_hits: list[bool] = field(default_factory=list)
    index_widths: list[float] = field(default_factory=list)
    rank_hits: list[bool] = field(default_factory=list)
    rank_widths: list[int] = field(default_factory=list)
    per_model_rank_hits: list[bool] = field(default_factory=list)
    per_model_rank_widths: list[int] = field(default_factory=list)

    @staticmethod
    def share(hits: list[bool]) -> float:
        return fmean(hits) if hits else float("nan")


def simulate(
    *,
    benchmarks: int,
    models: int = 10,
    runs: int = 5,
    resamples: int = 400,
    seed: int = 0,
    per_model: bool = False,
) -> Coverage:
    """Coverage and width of index and rank intervals over `benchmarks` simulated benchmarks."""
    rng = random.Random(seed)
    world = make_world(models, rng)
    truth = {model: world.true_index(model) for model in world.means}
    ordered = sorted(truth.values(), reverse=True)
    true_rank = {model: 1 + ordered.index(value) for model, value in truth.items()}
    tally = Coverage()
    for number in range(benchmarks):
        items = simulate_benchmark(world, runs, rng)
        subjects = [
            Subject(model, tuple(i for i in items if i.model == model)) for model in world.means
        ]
        draws = draw_resamples(subjects, "v2", resampling=Resampling(resamples, number))
        indexes = {name: found.index for name, found in draws.items()}
        for model, ranks in rank_intervals(indexes).items():
            tally.rank_hits.append(ranks[0] <= true_rank[model] <= ranks[1])
            tally.rank_widths.append(ranks[1] - ranks[0])
        for model, found in indexes.items():
            interval = interval_of(0.0, found)
            assert interval.low is not None and interval.high is not None
            tally.index_hits.append(interval.low <= truth[model] <= interval.high)
            tally.index_widths.append(interval.high - interval.low)
        if per_model:
            apart = {
                s.name: draw_resamples(
                    [s], "v2", resampling=Resampling(resamples, number * 997 + i)
                )[s.name].index
                for i, s in enumerate(subjects)
            }
            for model, ranks in rank_intervals(apart).items():
                tally.per_model_rank_hits.append(ranks[0] <= true_rank[model] <= ranks[1])
                tally.per_model_rank_widths.append(ranks[1] - ranks[0])
    return tally


def width(values: list[int] | list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")
