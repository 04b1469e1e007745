"""The Laplace antipodal pair (issue 33, item 4: the exact attained pair for Laplace under Poisson
replace-one), held against scipy quadrature of its densities; and the LOWER side it gives certify.

Would catch: a wrong threshold z* (δ would miss the maximum of P̃(Z > t) − κQ̃(Z > t)), a sign slip on
one of the four pieces of the likelihood ratio, and a lower side that stays 0 where the attained
pair already has δ > 0 (the add/remove mixture's largest loss is ln(1 − λ + λe^u), below the
antipodal pair's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from verifier._types import Direction, Quantity, Side
from verifier.certify.portfolio import collect_bounds
from verifier.pairs import Laplace, LaplaceAntipodal
from verifier.schemes import PoissonReplaceOne

#: scipy quad's own error: the kink of (p − κq)_+ where it changes sign is not a break point, so the
#: reference is good to ~1e-10 relative, not to the ball's 1e-16.
QUAD_ATOL = 1e-12
QUAD_RTOL = 1e-9


def _density(y, mean, scale):
    return math.exp(-abs(y - mean) / scale) / (2 * scale)


def _reference(epsilon: float, rate: float, scale: float, first: float, second: float, c: float = 1.0) -> float:
    """∫ (p − e^ε q)_+ for p = (1−λ)L(0) + λL(first·C), q = (1−λ)L(0) + λL(second·C)."""
    kappa = math.exp(epsilon)

    def gap(y):
        p = (1 - rate) * _density(y, 0, scale) + rate * _density(y, first * c, scale)
        q = (1 - rate) * _density(y, 0, scale) + rate * _density(y, second * c, scale)
        return max(p - kappa * q, 0.0)

    return integrate.quad(gap, -80 * scale, 80 * scale, points=sorted({-c, 0.0, c}), limit=500, epsabs=1e-15)[0]


@pytest.mark.parametrize(("rate", "scale"), [(0.1, 1.0), (0.5, 0.5), (0.01, 2.0)])
def test_delta_equals_quadrature(rate, scale):
    pair = LaplaceAntipodal(scale, 1.0, rate)
    top = pair.max_loss()
    for epsilon in np.array([-1.3, -0.5, -0.01, 0.0, 0.05, 0.5, 0.99, 1.2]) * top:
        truth = _reference(float(epsilon), rate, scale, 1.0, -1.0)
        for direction in Direction:  # symmetric pair
            got = pair.delta(float(epsilon), direction)
            slack = QUAD_ATOL + QUAD_RTOL * truth
            assert got.lower - slack <= truth <= got.upper + slack


def test_replace_one_lower_side_is_the_antipodal_pair():
    """q = 0.1, T = 1, ε = 0.2: above the add/remove mixture's largest loss ln(0.9 + 0.1e) = 0.157, so
    +C against 0 gives 0; the antipodal pair gives δ ≈ 5.2e-3 and certify's LOWER bound is near it."""
    epsilon = 0.2
    assert _reference(epsilon, 0.1, 1.0, 1.0, 0.0) == 0.0
    truth = _reference(epsilon, 0.1, 1.0, 1.0, -1.0)
    got = collect_bounds(PoissonReplaceOne(Laplace(1.0), 0.1, 1), Quantity.DELTA, epsilon, [Direction.ADD], only=["pld"])
    lower = max(b.value for b in got.bounds if b.side is Side.LOWER)
    assert 0.8 * truth <= lower <= truth + QUAD_ATOL
