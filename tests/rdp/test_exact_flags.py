"""Every code path that flags an RDP value "exact" against an mpmath reference (issue 30): a
flagged value lies on its side of the 50-digit divergence and within EXACT_RTOL of it. (The matrix
mechanism's table has its own property test in tests/matrix/test_renyi.py.)

Catches: a flag set because the formula is an equality while its float evaluation is looser than
EXACT_RTOL (before issue 30: the shuffle lower bound at n = 10⁹ flagged at 1e-5 relative, the
check-in lower bound at 9e-6), a closed form evaluated with cancellation, a bound on the wrong side."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier._directed import EXACT_RTOL
from verifier._types import Direction, Side
from verifier.pairs import Gaussian
from verifier.rdp.allocation import allocation_curve
from verifier.rdp.checkin import checkin_curve
from verifier.rdp.poisson import poisson_curve
from verifier.rdp.shuffle import shuffle_curve
from verifier.rdp.without_replacement import without_replacement_curve
from verifier.reference.rdp import allocation_remove_renyi, gaussian_moment_function


def _check(curve, reference) -> int:
    """Assert the side of every value and EXACT_RTOL for the flagged ones; return how many were flagged."""
    for alpha, value, exact in zip(curve.orders, curve.values, curve.exact):
        truth = reference(float(alpha))
        if curve.side is Side.UPPER:
            assert value >= truth * (1 - 1e-15)  # the reference is rounded to nearest
        else:
            assert value <= truth * (1 + 1e-15)
        if exact:
            assert abs(value - truth) <= EXACT_RTOL * truth
    return int(np.sum(curve.exact))


def _poisson_reference(sigma: float, rate: float, alpha: float):
    """E_Q[(1 − λ + λX)^α]: the binomial sum at integer α (50 digits), the integral otherwise (25)."""
    lam, s, a = mpmath.mpf(rate), mpmath.mpf(sigma), mpmath.mpf(alpha)
    if float(alpha).is_integer():
        with mpmath.workdps(50):
            k = int(alpha)
            total = mpmath.fsum(mpmath.binomial(k, j) * (1 - lam) ** (k - j) * lam**j * mpmath.exp(j * (j - 1) / (2 * s * s)) for j in range(k + 1))
            return mpmath.log(total) / (a - 1)
    with mpmath.workdps(25):
        def integrand(y):
            return (1 - lam + lam * mpmath.exp(y / s - 1 / (2 * s * s))) ** a * mpmath.npdf(y)

        total = mpmath.quad(integrand, [-mpmath.inf, -10, 0, a / s, a / s + 10, mpmath.inf])
        return mpmath.log(total) / (a - 1)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([0.6, 1.0, 2.5, 8.0]), st.sampled_from([1e-4, 1e-3, 0.02, 0.5, 1.0]))
def test_poisson_remove_flags_at_integer_orders(sigma, rate):
    """Thm 34 at integer orders, all flagged."""
    curve = poisson_curve(Gaussian(sigma), rate, [2, 3, 8, 32, 128], Direction.REMOVE)
    assert _check(curve, lambda a: _poisson_reference(sigma, rate, a)) == 5


@pytest.mark.parametrize("sigma, rate, alpha", [(0.6, 1e-3, 2.5), (1.0, 0.02, 7.5), (8.0, 0.5, 1.5)])
def test_poisson_remove_flags_at_fractional_orders(sigma, rate, alpha):
    """Certified integration (Gaussian remove), flagged exact."""
    curve = poisson_curve(Gaussian(sigma), rate, [alpha], Direction.REMOVE)
    assert _check(curve, lambda a: _poisson_reference(sigma, rate, a)) == 1


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([0.7, 1.0, 3.0]), st.sampled_from([2, 7, 1000, 10**6, 10**9]))
def test_allocation_and_shuffle_flags(sigma, steps):
    """1-out-of-t allocation remove (UPPER) and the n-user shuffle pair (LOWER), the same divergence
    (Feldman & Shenfeld Thm 4.8 = Liew et al. Eq. (8)), against the partition sum in mpmath."""
    moment = gaussian_moment_function(sigma)
    orders = [2, 3, 4, 6]

    def reference(a):
        return allocation_remove_renyi(moment, steps, int(a))

    flagged = _check(allocation_curve(Gaussian(sigma), steps, orders, Direction.REMOVE), reference)
    flagged += _check(shuffle_curve(Gaussian(sigma), steps, orders, Direction.REMOVE), reference)
    assert flagged >= 4  # α = 2, 3 have closed forms, exact on both sides at every t


@pytest.mark.parametrize("sigma", [0.7, 2.0])
def test_fixed_batches_at_rate_one_flags(sigma):
    """Rate 1: every step sees the record, the Gaussian's own D_α = α/(2σ²)."""
    curve = without_replacement_curve(Gaussian(sigma), 1.0, [2, 3, 7], Direction.REMOVE)
    assert _check(curve, lambda a: mpmath.mpf(a) / (2 * mpmath.mpf(sigma) ** 2)) == 3


def test_checkin_lower_is_never_flagged():
    """The check-in LOWER values drop k terms and sit FLOAT_MARGIN below the pair's divergence
    (9e-6 relative at n = 1000, γ = 0.01 before issue 30, and flagged exact)."""
    for side in Side:
        curve = checkin_curve(Gaussian(3.0), 1000, 0.01, 1, "sum", [2, 4, 7], Direction.REMOVE, side)
        assert not curve.exact.any()
    assert math.isfinite(float(curve.values[0]))
