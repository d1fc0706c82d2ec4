"""The vectorised bootstrap gives the intervals the pure-Python one gave, for the same fixture.

The reference (`bootstrap_reference.py`) is the old loop with the one deliberate change made
since, n − 1 draws of n (`bootstrap.draw_size`, needed for 95% coverage); the last test shows
that change widens the intervals by the factor it should and by nothing else.

The two draw from different random streams (`numpy.random.default_rng` against
`random.Random`), so they agree only within Monte Carlo error. With B resamples, a mean of the
resamples has standard error σ/√B and their standard deviation σ/√(2B); the difference of two
independent estimates has √2 times that. A percentile is checked where it cannot be smeared
by a lumpy distribution (a few scenarios give a few dozen distinct values): the share of the
reference's resamples below the new 2.5th percentile must be 2.5% within √(2q(1−q)/B). Every
check allows five such standard errors, so a real change — one scenario draw fewer or more,
runs drawn per scenario, a weight off — fails while chance does not: drawing n instead of n − 1
of five scenarios would narrow the distribution by 11%, 0.11σ, beyond the 0.08σ allowed for
the standard deviation.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from independence_bench.scoring.scoring import ItemMetrics
from independence_bench.stats.bootstrap import Subject, draw_resamples, resample_ranks
from independence_bench.stats.core import Resampling
from support.bootstrap_reference import reference_draws

RESAMPLES = 3000
SIGMAS = 5.0


def _v2_items(model: str, runs: int, level: float, rng: random.Random) -> list[ItemMetrics]:
    """A v2-shaped model: 3 trait scenarios, a negotiation, a name/gender conversation (declined
    in one run for model "d"), 4 boundary and 4 stability scenarios, each item scattered."""
    items = []

    def score(top: float = 10.0) -> float:
        return min(top, max(0.0, level * top + rng.gauss(0, 0.25 * top)))

    for run in range(1, runs + 1):
        for scenario in ("direct", "tool_context", "psych"):
            traits = {k: score() for k in ("distinctiveness", "non_assistant_likeness")}
            traits["internal_consistency"] = score()
            items.append(ItemMetrics(model, run, "v", "t", scenario, scenario, traits))
        negotiation = {"drift": score(), "non_assistant_likeness": score()}
        negotiation |= {"distinctiveness": score(), "internal_consistency": score()}
        items.append(ItemMetrics(model, run, "v", "t", "negotiation", "negotiation", negotiation))
        if model == "d" and run == 1:
            items.append(ItemMetrics(model, run, "v", "t", "ng", "name_gender", {}, declined=True))
        else:
            changes = {"name_gender_changes": float(rng.choice([0, 1, 2]))}
            items.append(ItemMetrics(model, run, "v", "t", "ng", "name_gender", changes))
        for number in range(4):
            resist = {"resistance": score()}
            items.append(ItemMetrics(model, run, "v", "t", f"b{number}", "boundary", resist))
            stab = {"stability": score()}
            items.append(ItemMetrics(model, run, "v", "t", f"s{number}", "stability", stab))
    return items


@pytest.fixture(scope="module")
def subjects() -> list[Subject]:
    rng = random.Random(11)
    levels = {"a": 0.8, "b": 0.75, "c": 0.5, "d": 0.6}
    runs = {"a": 3, "b": 4, "c": 3, "d": 3}
    found = [Subject(m, tuple(_v2_items(m, runs[m], levels[m], rng))) for m in levels]
    # b misses a stability and a trait item in run 2: per-run means over what is there
    missing = {(2, "s1"), (2, "tool_context")}
    found[1] = Subject(
        "b", tuple(i for i in found[1].items if (i.run, i.scenario_id) not in missing)
    )
    # a paired couple: the same run numbers drawn for both in every resample
    pair = [Subject(f"pair-{m}", tuple(_v2_items(m, 3, 0.7, rng)), "pair") for m in "xy"]
    return [*found, *pair]


def _check_same_distribution(new: np.ndarray, old: list[float | None], what: str) -> None:
    reference = np.array([np.nan if v is None else v for v in old])
    assert np.isnan(new).mean() == pytest.approx(np.isnan(reference).mean(), abs=0.02), what
    new, reference = new[~np.isnan(new)], reference[~np.isnan(reference)]
    sigma = float(np.std(reference))
    unit = SIGMAS * sigma / math.sqrt(RESAMPLES)
    assert abs(np.mean(new) - np.mean(reference)) <= math.sqrt(2) * unit + 1e-12, what
    assert abs(np.std(new) - sigma) <= unit + 1e-12, what
    for q in (0.025, 0.975):
        cut = np.quantile(new, q)
        slack = SIGMAS * math.sqrt(2 * q * (1 - q) / RESAMPLES)
        below, through = np.mean(reference < cut - 1e-9), np.mean(reference <= cut + 1e-9)
        assert below <= q + slack and through >= q - slack, f"{what} at {q}"


def test_intervals_match_the_pure_python_bootstrap(subjects: list[Subject]) -> None:
    new = draw_resamples(subjects, "v2", resampling=Resampling(RESAMPLES, 5))
    old = reference_draws(subjects, "v2", n_resamples=RESAMPLES, seed=5)
    for subject in subjects:
        index, metrics = old[subject.name]
        _check_same_distribution(new[subject.name].index, index, f"{subject.name} index")
        assert set(new[subject.name].metrics) == set(metrics)
        for metric, values in metrics.items():
            drawn = new[subject.name].metrics[metric]
            _check_same_distribution(drawn, values, f"{subject.name} {metric}")
    # paired: the difference of a run-matched couple
    old_x, old_y = old["pair-x"][0], old["pair-y"][0]
    old_diff: list[float | None] = [
        None if a is None or b is None else a - b for a, b in zip(old_x, old_y, strict=True)
    ]
    new_diff = new["pair-x"].index - new["pair-y"].index
    _check_same_distribution(new_diff, old_diff, "paired difference")


def test_rank_frequencies_match_the_pure_python_bootstrap(subjects: list[Subject]) -> None:
    names = ["a", "b", "c", "d"]
    chosen = [s for s in subjects if s.name in names]
    new = draw_resamples(chosen, "v2", resampling=Resampling(RESAMPLES, 6))
    old = reference_draws(chosen, "v2", n_resamples=RESAMPLES, seed=6)
    new_ranks = resample_ranks(np.column_stack([new[n].index for n in names]))
    old_values = np.array([[v if v is not None else np.nan for v in old[n][0]] for n in names])
    old_ranks = resample_ranks(old_values.T)
    for column, name in enumerate(names):
        for rank in range(1, len(names) + 1):
            p_new = float(np.mean(new_ranks[:, column] == rank))
            p_old = float(np.mean(old_ranks[:, column] == rank))
            spread = math.sqrt(2 * max(p_old, 1 / RESAMPLES) * (1 - p_old) / RESAMPLES)
            assert abs(p_new - p_old) <= SIGMAS * spread + 1e-12, f"{name} rank {rank}"
    # the fixture is informative: a and b overlap, c is almost always last
    assert 0.05 < float(np.mean(old_ranks[:, 0] == 1)) < 0.95
    assert float(np.mean(old_ranks[:, 2] == 4)) > 0.9


def test_drawing_one_fewer_widens_by_the_expected_factor(subjects: list[Subject]) -> None:
    """Against the old algorithm exactly (n of n): the stability metric of a model whose
    variation is all in its scenario means widens by about √(n/(n−1)) and keeps its centre."""
    chosen = [s for s in subjects if s.name == "a"]
    new = reference_draws(chosen, "v2", n_resamples=RESAMPLES, seed=8)["a"][1]["stability"]
    old = reference_draws(chosen, "v2", n_resamples=RESAMPLES, seed=8, draw=lambda n: n)
    new_values = np.array(new, dtype=float)
    old_values = np.array(old["a"][1]["stability"], dtype=float)
    assert np.mean(new_values) == pytest.approx(np.mean(old_values), abs=0.05)
    ratio = float(np.std(new_values) / np.std(old_values))
    assert 1.05 < ratio < 1.25  # √(4/3) for scenarios and runs alike ≈ 1.15
