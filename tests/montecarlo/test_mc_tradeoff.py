"""Monte Carlo TPR at FPR (verifier.montecarlo.tradeoff) against independent references: the
Gaussian-DP closed form Φ(Φ⁻¹(α) + μ) (mpmath) for composed Gaussians, and, for Poisson sampling,
the rigorous PLD bracket (a different computation: convolved PLDs, not simulated losses).

What a broken estimator would do here: thresholds taken from the draws *with* the record instead of
those without (``test_thresholds_come_from_the_law_without_the_record``) put the FPR on the wrong
measure, and an interval from the two-sided "≥"/">" mix-up shrinks below the truth at atoms; the
closed-form checks at four α in both directions catch a wrong measure or a swapped direction.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from verifier._types import Direction, Quantity
from verifier.certify.portfolio import collect_bounds
from verifier.errors import NotApplicable
from verifier.montecarlo import tradeoff as mc_tradeoff
from verifier.montecarlo.tradeoff import estimate_tpr
from verifier.pairs import Gaussian
from verifier.schemes import Composed, Poisson, Single


def _gdp_tpr(alpha: float, mu: float) -> float:
    with mp.workdps(40):
        return float(mp.ncdf(-mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha)) + mu))


@pytest.mark.parametrize("direction", list(Direction))
def test_interval_contains_the_gaussian_closed_form(direction):
    scheme = Composed(Single(Gaussian(2.0)), 4)  # μ = 1
    for k, alpha in enumerate((1e-3, 1e-2, 0.1, 0.5)):
        got = estimate_tpr(scheme, alpha, direction, 100_000, seed=11 + k)
        assert got.quantity is Quantity.TPR and got.at == alpha
        assert got.lower <= _gdp_tpr(alpha, 1.0) <= got.upper, (alpha, got)
        assert got.upper - got.lower < 0.05


def test_poisson_interval_meets_the_rigorous_bracket():
    scheme = Poisson(Gaussian(1.0), 0.05, 20)
    for direction in Direction:
        bracket = collect_bounds(scheme, Quantity.TPR, 0.01, (direction,), only=["pld"]).brackets[direction]
        got = estimate_tpr(scheme, 0.01, direction, 40_000, seed=5)
        assert got.lower <= bracket.upper and bracket.lower <= got.upper, (direction, got, bracket)


def test_too_few_samples_for_the_fpr_decline():
    with pytest.raises(NotApplicable, match="too few"):
        estimate_tpr(Single(Gaussian(1.0)), 1e-4, Direction.REMOVE, 1000)


def test_thresholds_come_from_the_law_without_the_record(monkeypatch):
    """The mutant draws both samples under W (the opposite direction's draws negated are the law
    without the record): its interval misses the closed form."""
    real = mc_tradeoff.sample_loss

    def same_measure(scheme, size, direction, rng):
        return real(scheme, size, Direction.REMOVE, rng) * (1 if direction is Direction.REMOVE else -1)

    monkeypatch.setattr(mc_tradeoff, "sample_loss", same_measure)
    got = estimate_tpr(Single(Gaussian(1.0)), 0.01, Direction.REMOVE, 100_000, seed=3)
    assert not (got.lower <= _gdp_tpr(0.01, 1.0) <= got.upper)
