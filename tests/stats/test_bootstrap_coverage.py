"""The bootstrap's intervals cover the truth: simulated benchmarks with known true scores.

`bootstrap_simulation` draws benchmarks of the `v2` suite's shape for ten models whose true
indexes are evenly spaced (so neighbours are hard to tell apart) with scenario effects shared
by all models, model × scenario effects and run noise; see its docstring for what "true" means
(the decision documented in `stats/bootstrap/_draws.py`). 200 simulated benchmarks × 10 models give
2,000 intervals of each kind: a coverage of 95% is then estimated to within about ±1.5 points
(two standard errors, allowing for the models of one benchmark sharing its scenarios), so
asserting at least 93% is a real check. Each benchmark uses 400 resamples instead of 10,000,
which makes each interval a little noisier, not biased. `benchmarks/bootstrap_coverage.py`
prints the full figures with more benchmarks and resamples.
"""

from __future__ import annotations

from support.bootstrap_simulation import Coverage, simulate, width


def test_index_and_rank_intervals_cover_the_true_values() -> None:
    tally = simulate(benchmarks=200, models=10, runs=5, resamples=400, seed=0)
    assert len(tally.index_hits) == len(tally.rank_hits) == 2000
    assert Coverage.share(tally.index_hits) >= 0.93
    assert Coverage.share(tally.rank_hits) >= 0.93
    # informative, not trivially wide: ten models rank within a few places, not 1–10
    assert width(tally.rank_widths) < 4


def test_shared_scenario_draws_give_narrower_rank_intervals_than_per_model_draws() -> None:
    tally = simulate(benchmarks=40, models=10, runs=5, resamples=400, seed=1, per_model=True)
    shared, apart = width(tally.rank_widths), width(tally.per_model_rank_widths)
    # an easy scenario is easy for every model: drawn per model it would move models apart
    assert shared < 0.9 * apart
    assert Coverage.share(tally.rank_hits) >= 0.93
