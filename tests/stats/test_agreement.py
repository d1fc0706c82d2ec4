"""Worked values for Spearman's rho, Krippendorff's alpha and paired agreement with a reference."""

from __future__ import annotations

import pytest

from independence_bench.stats.agreement import (
    alpha_estimate,
    average_ranks,
    krippendorff_alpha,
    paired_agreement,
    spearman,
)
from independence_bench.stats.core import Resampling


def test_average_ranks_share_the_mean_of_tied_positions() -> None:
    # sorted: 1 (rank 1), 2 2 (ranks 2, 3 -> 2.5), 5 (rank 4), 7 7 7 (ranks 5, 6, 7 -> 6)
    assert average_ranks([7, 2, 5, 7, 1, 2, 7]).tolist() == [6, 2.5, 4, 6, 1, 2.5, 6]


def test_spearman_with_ties_hand_computed() -> None:
    # ranks x: 1, 2.5, 2.5, 4; ranks y: 1, 2, 3, 4 -> deviations x: -1.5, 0, 0, 1.5;
    # y: -1.5, -.5, .5, 1.5; sxy = 4.5, sxx = 4.5, syy = 5 -> rho = 4.5 / sqrt(22.5)
    assert spearman([1, 3, 3, 8], [10, 20, 30, 40]) == pytest.approx(4.5 / 22.5**0.5)
    assert spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [1, 4, 9]) == pytest.approx(1.0)  # ranks, not values


def test_spearman_is_undefined_for_a_constant_side_or_too_few_pairs() -> None:
    assert spearman([5, 5, 5], [1, 2, 3]) is None
    assert spearman([1, 2], [1, 2]) is None
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2, 3], [1, 2])


def test_perfect_agreement_is_one_with_a_degenerate_interval() -> None:
    values = [0.1, 0.4, 0.4, 0.9, 1.0]
    found = paired_agreement(values, values, resampling=Resampling(200))
    assert found.n_items == 5
    assert found.spearman is not None and found.spearman.value == pytest.approx(1.0)
    assert found.alpha is not None and found.alpha.value == pytest.approx(1.0)
    assert found.alpha.low == pytest.approx(1.0) and found.alpha.high == pytest.approx(1.0)
    assert found.mean_difference.value == 0.0
    assert (found.mean_difference.low, found.mean_difference.high) == (0.0, 0.0)


def test_paired_agreement_hand_computed() -> None:
    # judge 2, 3, 5, 6 against reference 1, 2, 4, 8 (one unit per item, two coders):
    # values 2 3 5 6 1 2 4 8: n = 8, sum = 31, sum of squares = 159; observed = 2·Σ(a − b)²
    # = 2·(1 + 1 + 1 + 4) = 14; expected = 2·(8·159 − 31²) = 622; alpha = 1 − 7·14/622.
    found = paired_agreement([2, 3, 5, 6], [1, 2, 4, 8], resampling=Resampling(500, 3))
    assert found.alpha is not None and found.alpha.value == pytest.approx(1 - 98 / 622)
    assert found.spearman is not None and found.spearman.value == pytest.approx(1.0)
    assert found.mean_difference.value == pytest.approx((1 + 1 + 1 - 2) / 4)
    low, high = found.mean_difference.low, found.mean_difference.high
    assert low is not None and high is not None
    assert -2.0 <= low < 0.25 < high <= 1.0  # resampled means of 1, 1, 1, −2
    assert found.alpha.low is not None and found.alpha.low < found.alpha.value


def test_a_constant_judge_has_no_rho_and_a_hand_computed_alpha() -> None:
    # judge 5 5 5 against 4 5 6: n = 6, sum = 30, squares = 152, expected = 2·(6·152 − 900)
    # = 24, observed = 2·(1 + 0 + 1) = 4 -> alpha = 1 − 5·4/24 = 1/6.
    found = paired_agreement([5, 5, 5], [4, 5, 6], resampling=Resampling(200))
    assert found.spearman is None
    assert found.alpha is not None and found.alpha.value == pytest.approx(1 / 6)
    both_constant = paired_agreement([5, 5, 5], [5, 5, 5], resampling=Resampling(200))
    assert both_constant.spearman is None and both_constant.alpha is None
    assert both_constant.mean_difference.value == 0.0


def test_paired_agreement_is_seeded_and_checks_its_input() -> None:
    judge, reference = [1, 4, 2, 8, 5, 7], [2, 3, 2, 9, 4, 4]
    first = paired_agreement(judge, reference, resampling=Resampling(300, 1))
    assert first == paired_agreement(judge, reference, resampling=Resampling(300, 1))
    assert first != paired_agreement(judge, reference, resampling=Resampling(300, 2))
    with pytest.raises(ValueError, match="one reference value"):
        paired_agreement([1, 2], [1])
    with pytest.raises(ValueError, match="no items"):
        paired_agreement([], [])


def test_alpha_with_one_unit_has_no_interval() -> None:
    # one unit of 1 and 3: n = 2, observed = 2·4 = 8, expected = 2·(2·10 − 16) = 8 -> 1 − 8/8;
    # the (2, None) unit is not pairable
    assert krippendorff_alpha([(1, 3)]) == pytest.approx(0.0)
    single = alpha_estimate([(1, 3), (2, None)])
    assert single is not None and single.value == pytest.approx(0.0)
    assert single.low is None and single.high is None
    assert krippendorff_alpha([(4, 4)]) is None
