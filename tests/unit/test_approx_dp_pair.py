"""ApproxDP(ε₀, δ₀), the (ε₀, δ₀)-randomized-response pair, against independent references: the
sympy export of proofs/approx_dp.py at 50 digits, direct mpmath sums over its four outcomes, and
the ε₀-randomized-response pair it equals when δ₀ = 0."""

import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from proofs import approx_dp as proof
from proofs._common import delta0, epsilon, epsilon0
from verifier import Direction, InvalidArgument, Measure, RandomizedResponse
from verifier.pairs import ApproxDP

#: Slack of 50-digit references against a rigorous bracket (far below any bracket width).
SLACK = 1e-300


@pytest.fixture(scope="module")
def export():
    return proof.derive()["delta"]


def _exact(expr, e0, d0, eps):
    point = {epsilon0: sp.Rational(e0), delta0: sp.Rational(d0), epsilon: sp.Rational(eps)}
    return float(sp.N(expr.subs(point), 50))


def _masses(e0: float, d0: float):
    with mp.workdps(50):
        e, d = mp.exp(mp.mpf(e0)), mp.mpf(d0)
        return [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mp.mpf(0)], [mp.mpf(0), (1 - d) / (1 + e), (1 - d) * e / (1 + e), d]


@pytest.mark.parametrize("e0, d0", [(0.5, 1e-6), (2.0, 0.25), (0.0, 0.125), (1.5, 0.0)])
@pytest.mark.parametrize("eps", [-3.0, -0.5, 0.0, 0.25, 0.5, 1.5, 4.0])
def test_delta_contains_the_derived_closed_form(export, e0, d0, eps):
    """Both directions (the pair is symmetric); catches a missing δ₀ atom or (1 − δ₀) factor."""
    exact = _exact(export, e0, d0, eps)
    for direction in Direction:
        got = ApproxDP(e0, d0).delta(eps, direction)
        assert got.lower - SLACK <= exact <= got.upper + SLACK
        assert got.upper - got.lower <= 1e-15 * max(exact, 1e-300) + 1e-300


def test_delta_zero_is_randomized_response():
    for eps in (-1.0, 0.0, 0.7):
        a, b = ApproxDP(1.2, 0.0).delta(eps, Direction.REMOVE), RandomizedResponse(1.2).delta(eps, Direction.REMOVE)
        assert a.lower <= b.upper and b.lower <= a.upper
    assert ApproxDP(1.2, 0.0).renyi(3.0, Direction.ADD).contains(RandomizedResponse(1.2).renyi(3.0, Direction.ADD).upper)


def test_infinite_loss_mass_renyi_and_epsilon():
    """δ₀ > 0: P has mass δ₀ where Q has none, so D_α = ∞ (Steinke 2022, footnote 10) and ε(δ) = ∞
    for δ < δ₀; for δ > δ₀, ε(δ) < ε₀ exactly where the RR part still exceeds δ − δ₀."""
    pair = ApproxDP(0.5, 1e-3)
    assert pair.renyi(2.0, Direction.REMOVE).lower == math.inf
    assert pair.epsilon(5e-4, Direction.ADD).lower == math.inf
    got = pair.epsilon(2e-3, Direction.REMOVE)
    # δ(ε) = δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)/(1 + e^{ε₀}) = 2e-3 solved for ε
    e = math.exp(0.5)
    exact = math.log(e - (2e-3 - 1e-3) * (1 + e) / (1 - 1e-3))
    assert got.lower <= exact <= got.upper and got.upper - got.lower < 1e-12


def test_moments_loss_law_and_sampling_match_direct_sums():
    pair = ApproxDP(0.8, 0.05)
    p, q = _masses(0.8, 0.05)
    with mp.workdps(50):
        moment = mp.fsum(qi * (pi / qi) ** mp.mpf(2.5) for pi, qi in zip(p, q) if qi > 0)
    assert pair.moment(2.5, Direction.REMOVE).contains(float(moment))
    # loss +∞ (P-mass δ₀), ε₀, −ε₀, −∞ (Q-mass δ₀): the law under P and under Q
    assert pair.loss_cdf_bracket(0.0, Direction.REMOVE, Measure.P).contains(float(p[2]))
    assert pair.loss_sf_bracket(0.0, Direction.REMOVE, Measure.P).contains(float(p[0] + p[1]))
    assert pair.loss_cdf_bracket(0.8, Direction.REMOVE, Measure.Q).contains(float(q[1] + q[2] + q[3]))
    assert pair.loss_quantile(0.01, Direction.REMOVE, Measure.Q)[0] == -math.inf
    draws = pair.sample_loss(200_000, Direction.REMOVE, Measure.P, rng=1)
    assert np.isposinf(draws).mean() == pytest.approx(0.05, abs=5 * math.sqrt(0.05 * 0.95 / 200_000))
    assert not np.isneginf(draws).any()


@pytest.mark.parametrize(
    "kwargs, name",
    [({"epsilon0": -0.1, "delta0": 0.0}, "epsilon0"), ({"epsilon0": math.inf, "delta0": 0.0}, "epsilon0"),
     ({"epsilon0": 1.0, "delta0": 1.0}, "delta0"), ({"epsilon0": 1.0, "delta0": -1e-9}, "delta0"),
     ({"epsilon0": 1.0, "delta0": math.nan}, "delta0")],
)
def test_bad_parameters_name_the_field(kwargs, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        ApproxDP(**kwargs)
