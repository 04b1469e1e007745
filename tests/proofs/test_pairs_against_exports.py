"""The numeric pairs (verifier.pairs) against the expressions the sympy derivations verified and exported.

Each export is evaluated with sympy at 50 digits at exact rational parameter points and must lie
inside the bracket the numeric code returns (both directions, where the derivation exports both).
"""

from fractions import Fraction
from functools import lru_cache

import mpmath
import pytest
import sympy as sp

from proofs import gaussian_hockey_stick, gaussian_renyi, laplace_hockey_stick, laplace_renyi, randomized_response
from proofs._common import Delta, alpha, b, epsilon, epsilon0, k, sigma
from verifier import Direction, Gaussian, Laplace, RandomizedResponse

#: Evaluation precision of the exports; far below every bracket width.
DIGITS = 50
SLACK = mpmath.mpf(10) ** -40


@lru_cache(maxsize=None)
def exports(module):
    return module.derive()


def value(expr, **subs):
    symbols = {"sigma": sigma, "Delta": Delta, "epsilon": epsilon, "alpha": alpha, "b": b, "epsilon0": epsilon0, "k": k}
    return mpmath.mpf(str(sp.N(expr.subs({symbols[n]: sp.Rational(Fraction(v)) for n, v in subs.items()}), DIGITS)))


def assert_inside(bracket, exact):
    assert mpmath.mpf(bracket.lower) - SLACK <= exact <= mpmath.mpf(bracket.upper) + SLACK


GAUSS_POINTS = [(1.0, 1.0, 1.0), (0.5, 1.0, -0.75), (3.0, 2.0, 0.25), (1.0, 0.5, 6.0)]


@pytest.mark.parametrize("s, d, e", GAUSS_POINTS)
def test_gaussian_delta_matches_export(s, d, e):
    ex = exports(gaussian_hockey_stick)
    pair = Gaussian(s, d)
    assert_inside(pair.delta(e, Direction.REMOVE), value(ex["delta"], sigma=s, Delta=d, epsilon=e))
    assert_inside(pair.delta(e, Direction.ADD), value(ex["delta_QP"], sigma=s, Delta=d, epsilon=e))


@pytest.mark.parametrize("a", [1.5, 2.0, 9.0])
def test_gaussian_renyi_matches_export(a):
    ex = exports(gaussian_renyi)
    assert_inside(Gaussian(1.5, 0.5).renyi(a, Direction.REMOVE), value(ex["renyi"], sigma=1.5, Delta=0.5, alpha=a))
    assert_inside(Gaussian(1.5, 0.5).renyi(a, Direction.ADD), value(ex["renyi_QP"], sigma=1.5, Delta=0.5, alpha=a))


@pytest.mark.parametrize("e", [-2.0, -0.5, 0.0, 0.25, 0.5, 2.0])
def test_laplace_delta_matches_export(e):
    ex = exports(laplace_hockey_stick)
    pair = Laplace(2.0, 1.0)  # ε0 = 0.5
    assert_inside(pair.delta(e, Direction.REMOVE), value(ex["delta"], epsilon0=0.5, epsilon=e))
    assert_inside(pair.delta(e, Direction.ADD), value(ex["delta_QP"], epsilon0=0.5, epsilon=e))


@pytest.mark.parametrize("a", [1.25, 2.0, 6.0])
def test_laplace_renyi_matches_export(a):
    ex = exports(laplace_renyi)
    assert_inside(Laplace(0.5).renyi(a, Direction.REMOVE), value(ex["renyi"], epsilon0=2.0, alpha=a))
    assert_inside(Laplace(0.5).renyi(a, Direction.ADD), value(ex["renyi_QP"], epsilon0=2.0, alpha=a))


@pytest.mark.parametrize("kk", [2, 3, 5])
@pytest.mark.parametrize("e", [-1.5, -0.25, 0.0, 0.5, 1.5])
def test_randomized_response_matches_export(kk, e):
    ex = exports(randomized_response)
    pair = RandomizedResponse(1.0, kk)
    for direction, name in ((Direction.REMOVE, "delta_k"), (Direction.ADD, "delta_k_QP")):
        assert_inside(pair.delta(e, direction), value(ex[name], epsilon0=1.0, epsilon=e, k=kk))
    assert_inside(pair.renyi(2.5, Direction.REMOVE), value(ex["renyi_k"], epsilon0=1.0, alpha=2.5, k=kk))
