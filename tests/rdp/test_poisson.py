"""Poisson-subsampled RDP against Thm 34 in mpmath, quadrature of the mixture (both directions,
fractional orders), and the chapter's reference values (notes/composition-and-subsampling.md §10)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verifier._types import Direction
from verifier.pairs import Gaussian, Laplace, RandomizedResponse
from verifier.rdp import gaussian_remove_fractional, poisson_curve, poisson_remove_integer
from verifier.reference.rdp import gaussian_moment_function, poisson_remove_renyi

#: Rounded-up log-domain sums: a few ulps of the largest log over the final 1/(α−1).
THM34_RTOL = 1e-12
#: mpmath quadrature of the mixture at 30 digits.
QUAD_RTOL = 1e-12


def _quad_mixture(sigma: float, rate: float, alpha: float, direction: Direction) -> mpmath.mpf:
    """D_α of the subsampled Gaussian by direct quadrature (remove: mix‖Q; add: Q‖mix)."""
    with mpmath.workdps(30):
        s, p, a = mpmath.mpf(sigma), mpmath.mpf(rate), mpmath.mpf(alpha)

        def q(y):
            return mpmath.npdf(y, 0, s)

        def mix(y):
            return (1 - p) * q(y) + p * mpmath.npdf(y, 1, s)

        first, second = (mix, q) if direction is Direction.REMOVE else (q, mix)
        # ∫ second·((first/second)^α − 1), so that ln(1 + ·) keeps its relative accuracy when tiny
        f = lambda y: second(y) * ((first(y) / second(y)) ** a - 1)  # noqa: E731
        excess = mpmath.quad(f, [-mpmath.inf, -10, 0, 0.5, 1, 10 + alpha, mpmath.inf])
        return mpmath.log1p(excess) / (a - 1)


@pytest.mark.parametrize("rate, sigma", [(0.01, 1.0), (0.001, 0.8), (0.05, 1.0), (0.5, 2.0)])
def test_remove_integer_orders_equal_thm34(rate, sigma):
    orders = np.array([2, 3, 4, 8, 10, 12, 32, 64, 256])
    values = poisson_remove_integer(Gaussian(sigma), rate, orders)
    for alpha, value in zip(orders, values):
        exact = poisson_remove_renyi(gaussian_moment_function(sigma), rate, int(alpha))
        assert exact <= value <= exact * (1 + THM34_RTOL)


@pytest.mark.parametrize("pair", [Laplace(0.7), RandomizedResponse(2.0, 3)])
def test_remove_integer_orders_other_pairs(pair):
    values = poisson_remove_integer(pair, 0.1, np.arange(2, 11))
    moment = lambda k: mpmath.exp((k - 1) * mpmath.mpf(pair.renyi(float(k), Direction.REMOVE).upper))  # noqa: E731
    for alpha, value in zip(range(2, 11), values):
        exact = poisson_remove_renyi(moment, 0.1, alpha)
        assert exact * (1 - 1e-13) <= value <= exact * (1 + THM34_RTOL)


def test_chapter_reference_values():
    """§10.3 (dp_accounting agrees to 3e-14) and §10.2 (p = 0.05, σ = 1)."""
    got = poisson_remove_integer(Gaussian(1.0), 0.01, np.array([2, 3, 8, 10, 12, 32, 256]))
    printed = [0.000171813422075, 0.000264637574585, 0.000893643907606, 0.0382704188949, 0.978011718025, 11.246275937, 123.376770323]
    np.testing.assert_allclose(got, printed, rtol=1e-10)
    got = poisson_remove_integer(Gaussian(1.0), 0.05, np.array([2, 5, 20, 100]))
    np.testing.assert_allclose(got, [0.00428650437, 0.01858923541, 6.846597719, 46.9740078], rtol=1e-9)


def test_add_direction_dominates_the_exact_add_divergence():
    """Thm 35: the add curve is an upper bound; §10.2 quadrature values of the add direction."""
    curve = poisson_curve(Gaussian(1.0), 0.05, [2, 3, 5, 10, 20], Direction.ADD)
    printed_add = [0.003329030321, 0.004682713525, 0.006982454813, 0.01125560662, 0.01671066609]
    assert np.all(curve.values >= printed_add) and not curve.exact.any()


@pytest.mark.parametrize("alpha", [1.5, 2.5, 7.8, 12.3])
def test_fractional_remove_is_certified_quadrature(alpha):
    value = gaussian_remove_fractional(Gaussian(1.0), 0.01, alpha)
    exact = _quad_mixture(1.0, 0.01, alpha, Direction.REMOVE)
    assert exact <= value <= exact * (1 + QUAD_RTOL)


def test_fractional_orders_of_other_pairs_use_the_chord():
    """Laplace: the chord between D_3 and D_4 is an upper bound on the exact D_3.5 (quadrature)."""
    pair = Laplace(1.0)
    curve = poisson_curve(pair, 0.2, [3, 3.5, 4], Direction.REMOVE)
    with mpmath.workdps(30):
        p, a = mpmath.mpf("0.2"), mpmath.mpf("3.5")
        q = lambda y: mpmath.exp(-abs(y)) / 2  # noqa: E731
        mix = lambda y: (1 - p) * q(y) + p * mpmath.exp(-abs(y - 1)) / 2  # noqa: E731
        exact = mpmath.log(mpmath.quad(lambda y: mix(y) ** a * q(y) ** (1 - a), [-mpmath.inf, 0, 1, mpmath.inf])) / (a - 1)
    assert exact <= curve.values[1] <= max(curve.values[0], curve.values[2])
    assert list(curve.exact) == [True, False, True]


def test_rate_one_is_the_pair():
    values = poisson_remove_integer(Gaussian(2.0), 1.0, np.array([2, 9]))
    np.testing.assert_allclose(values, [2 / 8, 9 / 8], rtol=1e-14)
