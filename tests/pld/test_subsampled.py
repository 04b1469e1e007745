"""PoissonSubsampled against the mixture pair built directly on a finite space (exact sums), both
directions, every ε (including κ <= 1 − λ and κ >= 1/(1 − λ)), and its loss laws and moments."""

from __future__ import annotations

import numpy as np
import pytest

from verifier._types import Direction, Measure
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import DiscretePair, Gaussian, PoissonSubsampled
from verifier.reference import discrete_delta

P = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
Q = np.array([0.1, 0.2, 0.3, 0.2, 0.2])

#: Both sides are exact sums in ball arithmetic / mpmath: agreement to float accuracy.
EXACT_ATOL = 1e-14
#: Float loss laws (numpy sums): a few ulps.
LAW_ATOL = 1e-12


def _mixture(rate: float) -> DiscretePair:
    return DiscretePair(rate * P + (1 - rate) * Q, Q)


@pytest.mark.parametrize("rate", [0.01, 0.3, 0.9, 1.0])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_profile_matches_the_mixture_pair(rate: float, direction: Direction) -> None:
    sub = PoissonSubsampled(DiscretePair(P, Q), rate)
    eps = np.array([-3.0, -0.5, np.log1p(-rate) if rate < 1 else -1.0, -1e-3, 0.0, 0.2, 1.0, 2.5, 6.0])
    got = sub.delta(eps, direction)
    mix = _mixture(rate)
    name = direction.value
    for e, lo, hi in zip(eps, got.lower, got.upper):
        ref = float(discrete_delta(mix.p, mix.q, float(e), name))
        assert lo - EXACT_ATOL <= ref <= hi + EXACT_ATOL


def test_swapped_is_the_add_pair() -> None:
    sub = PoissonSubsampled(Gaussian(1.0), 0.2)
    assert sub.swapped().add_orientation and not sub.add_orientation
    eps = np.array([0.0, 0.5, 1.5])
    a = sub.delta(eps, Direction.ADD)
    b = sub.swapped().delta(eps, Direction.REMOVE)
    assert np.allclose(a.upper, b.upper, rtol=0, atol=0)


def test_steinke_identity_d3() -> None:
    """Composition notes §13 D3: δ_{λP+(1−λ)Q‖Q}(ln(1 + λ(e^ε − 1))) = λ·δ_{P‖Q}(ε)."""
    base, rate = Gaussian(0.7), 0.05
    sub = PoissonSubsampled(base, rate)
    for eps in (0.3, 1.0, 3.0):
        left = sub.delta(float(np.log1p(rate * np.expm1(eps))), Direction.REMOVE)
        right = base.delta(eps, Direction.REMOVE)
        assert abs(left.upper - rate * right.upper) <= 1e-15 + 1e-12 * left.upper


@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
@pytest.mark.parametrize("under", [Measure.P, Measure.Q])
def test_loss_laws_match_the_mixture_pair(direction: Direction, under: Measure) -> None:
    rate = 0.3
    sub, mix = PoissonSubsampled(DiscretePair(P, Q), rate), _mixture(rate)
    xs = np.array([-5.0, -1.0, -0.2, np.log1p(-rate), 0.0, 0.1, 0.5, 1.0, 5.0])
    assert np.allclose(sub.loss_cdf(xs, direction, under), mix.loss_cdf(xs, direction, under), atol=LAW_ATOL)
    assert np.allclose(sub.loss_sf(xs, direction, under), mix.loss_sf(xs, direction, under), atol=LAW_ATOL)


def test_quantile_inverts_the_cdf() -> None:
    sub = PoissonSubsampled(Gaussian(1.0), 0.1)
    qs = np.array([1e-9, 0.1, 0.5, 0.9, 1 - 1e-9])
    xs = sub.loss_quantile(qs, Direction.REMOVE, Measure.P)
    assert np.allclose(sub.loss_cdf(xs, Direction.REMOVE, Measure.P), qs, rtol=1e-6, atol=1e-12)


def test_sampling_matches_the_cdf() -> None:
    sub = PoissonSubsampled(Gaussian(1.0), 0.3)
    draws = sub.sample_loss(200_000, Direction.ADD, Measure.Q, rng=3)
    for x in (-0.5, 0.0, 0.2):
        # 5 standard errors of a proportion of 2e5 draws.
        assert abs(np.mean(draws <= x) - sub.loss_cdf(x, Direction.ADD, Measure.Q)[0]) < 5 * 0.5 / np.sqrt(2e5)


def test_integer_moments_and_renyi() -> None:
    rate = 0.3
    p, q = P[:4] / P[:4].sum(), Q[:4] / Q[:4].sum()
    sub = PoissonSubsampled(DiscretePair(p, q), rate)
    mix = DiscretePair(rate * p + (1 - rate) * q, q)
    for a in (2, 3, 5):
        assert np.isclose(sub.moment(a, Direction.REMOVE).upper, mix.moment(a, Direction.REMOVE).upper, rtol=1e-13)
        assert np.isclose(sub.renyi(a, Direction.REMOVE).upper, mix.renyi(a, Direction.REMOVE).upper, rtol=1e-12)
    with pytest.raises(NotApplicable):
        sub.renyi(2.5, Direction.REMOVE)
    with pytest.raises(NotApplicable):
        sub.renyi(2, Direction.ADD)


def test_invalid_rate_is_named() -> None:
    with pytest.raises(InvalidArgument, match="rate"):
        PoissonSubsampled(Gaussian(1.0), 0.0)
    with pytest.raises(InvalidArgument, match="rate"):
        PoissonSubsampled(Gaussian(1.0), 1.5)
    with pytest.raises(InvalidArgument, match="pair"):
        PoissonSubsampled("gaussian", 0.1)
