"""Dominating pairs against the trusted mpmath references (direct integration / exact sums).

The property: for Hypothesis-drawn parameters and ε, the reference value lies inside the returned
bracket, in both directions; likewise for ε(δ), Rényi divergences and moments.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier._types import Direction, Measure
from verifier.errors import InvalidArgument
from verifier.reference import pairs as ref

DIRECTIONS = st.sampled_from([Direction.ADD, Direction.REMOVE])
# The references integrate at 50 digits; agreement to 1e-12 relative is far below any bracket slack.
REF_RTOL = 1e-12
# A 50-digit reference is not exact either: where the truth is 0 it may return ~1e-60.
REF_ATOL = 1e-40


def inside(bracket, value, rtol=0.0):
    value = mpmath.mpf(value)
    slack = rtol * abs(value) + REF_ATOL
    return mpmath.mpf(bracket.lower) - slack <= value <= mpmath.mpf(bracket.upper) + slack


def discrete_pairs():
    """Random finite pairs, including asymmetric ones and ones with infinite loss (q = 0 < p)."""

    def build(seed, n, zeros):
        rng = np.random.default_rng(seed)
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        if zeros:
            q[0] = 0.0
            q /= q.sum()
        return DiscretePair(p.tolist(), q.tolist())

    return st.builds(build, st.integers(0, 2**32 - 1), st.integers(2, 6), st.booleans())


@given(sigma=st.floats(0.2, 20), sens=st.floats(0.1, 3), eps=st.floats(-3, 15), direction=DIRECTIONS)
def test_gaussian_delta_contains_reference(sigma, sens, eps, direction):
    b = Gaussian(sigma, sens).delta(eps, direction)
    assert inside(b, ref.gaussian_delta(sigma, eps, direction.value, sensitivity=sens), REF_RTOL)


@given(scale=st.floats(0.2, 5), sens=st.floats(0.1, 3), eps=st.floats(-4, 6), direction=DIRECTIONS)
def test_laplace_delta_contains_reference(scale, sens, eps, direction):
    b = Laplace(scale, sens).delta(eps, direction)
    assert inside(b, ref.laplace_delta(scale, eps, direction.value, sensitivity=sens), REF_RTOL)


@given(eps0=st.floats(0.01, 5), k=st.integers(2, 5), eps=st.floats(-3, 6), direction=DIRECTIONS)
def test_randomized_response_delta_contains_reference(eps0, k, eps, direction):
    b = RandomizedResponse(eps0, k).delta(eps, direction)
    assert inside(b, ref.rr_delta(eps0, eps, direction.value, k=k))


@given(pair=discrete_pairs(), eps=st.floats(-3, 5), direction=DIRECTIONS)
def test_discrete_delta_contains_exact_sum(pair, eps, direction):
    b = pair.delta(eps, direction)
    assert inside(b, ref.discrete_delta(list(pair.p), list(pair.q), eps, direction.value))


def test_asymmetric_discrete_pair_has_different_directions():
    pair = DiscretePair([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    add, remove = pair.delta(0.5, Direction.ADD), pair.delta(0.5, Direction.REMOVE)
    assert add.upper < remove.lower or remove.upper < add.lower
    for d in Direction:
        assert inside(pair.delta(0.5, d), ref.discrete_delta(list(pair.p), list(pair.q), 0.5, d.value))


def test_infinite_loss_counts_in_delta_and_makes_renyi_infinite():
    pair = DiscretePair([0.5, 0.3, 0.2], [0.5, 0.5, 0.0])
    for eps in (0.0, 1.0, 50.0):
        assert pair.delta(eps, Direction.REMOVE).lower >= 0.2
    assert pair.delta(50.0, Direction.REMOVE).contains(0.2)
    assert pair.renyi(2.0, Direction.REMOVE).lower == math.inf
    assert math.isfinite(pair.renyi(2.0, Direction.ADD).upper)
    assert pair.epsilon(0.1, Direction.REMOVE).lower == math.inf


@settings(max_examples=10)  # each reference ε(δ) is an mpmath root-find (~1 s)
@given(
    sigma=st.floats(0.3, 10),
    delta=st.floats(1e-12, 0.3),
    direction=DIRECTIONS,
)
def test_gaussian_epsilon_contains_reference(sigma, delta, direction):
    b = Gaussian(sigma).epsilon(delta, direction)
    r = ref.gaussian_epsilon(sigma, delta, direction.value)
    assert inside(b, r, 1e-12)
    assert b.upper - b.lower <= 1e-12 * max(1.0, abs(b.upper))


@given(pair=discrete_pairs(), delta=st.floats(1e-6, 0.5), direction=DIRECTIONS)
def test_discrete_epsilon_post_conditions(pair, delta, direction):
    b = pair.epsilon(delta, direction)
    if math.isfinite(b.upper):
        assert pair.delta(b.upper, direction).upper <= delta
    if math.isfinite(b.lower):
        # δ(ε) >= 1 − e^ε for every pair (the whole space as the event), evaluated here in mpmath
        floor = 1 - mpmath.exp(mpmath.mpf(b.lower)) if b.lower < 0 else 0
        assert max(pair.delta(b.lower, direction).lower, floor) > delta


@pytest.mark.parametrize(
    "pair, reference",
    [
        (Gaussian(1.3, 0.7), lambda a, d: ref.gaussian_renyi(1.3, a, d, sensitivity=0.7)),
        (Laplace(0.8), lambda a, d: ref.laplace_renyi(0.8, a, d)),
        (RandomizedResponse(1.2, 3), lambda a, d: ref.rr_renyi(1.2, a, d, k=3)),
        (
            DiscretePair([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]),
            lambda a, d: ref.discrete_renyi([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], a, d),
        ),
    ],
)
@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.25])
def test_renyi_contains_reference(pair, reference, alpha):
    for d in Direction:
        assert inside(pair.renyi(alpha, d), reference(alpha, d.value), 1e-12)


@pytest.mark.parametrize("a", [0.0, 0.5, 1.0, 2.0, 3.5])
def test_moments_contain_reference(a):
    assert inside(Gaussian(2.0).moment(a, Direction.REMOVE), ref.gaussian_moment(2.0, a, "remove"), 1e-12)
    assert inside(Laplace(1.5).moment(a, Direction.ADD), ref.laplace_moment(1.5, a, "add"), 1e-12)
    p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    assert inside(DiscretePair(p, q).moment(a, Direction.ADD), ref.discrete_moment(p, q, a, "add"), 1e-12)


@pytest.mark.parametrize(
    "pair, reference",
    [
        (Gaussian(0.9), lambda x, d, u: ref.gaussian_loss_cdf(0.9, x, d, u)),
        (Laplace(1.0), lambda x, d, u: ref.laplace_loss_cdf(1.0, x, d, u)),
    ],
)
def test_loss_cdf_and_quantile_under_p_and_q(pair, reference):
    xs = [-0.7, -0.1, 0.3, 0.9]
    for d in Direction:
        for under in Measure:
            ours = pair.loss_cdf(xs, d, under)
            for x, value in zip(xs, ours):
                assert float(reference(x, d.value, under.value)) == pytest.approx(value, rel=1e-9, abs=1e-12)
            q = pair.loss_cdf(xs, d, under)
            back = pair.loss_quantile(q, d, under)
            assert np.all(pair.loss_cdf(back, d, under) >= q - 1e-12)


def test_sampling_matches_the_loss_law():
    """Kolmogorov-Smirnov distance of 20 000 samples from the CDF: below the 1e-6 critical value."""
    pair = Gaussian(1.0)
    for d in Direction:
        for under in Measure:
            x = np.sort(pair.sample_loss(20_000, d, under, rng=7))
            cdf = pair.loss_cdf(x, d, under)
            ks = np.max(np.abs(cdf - np.arange(1, x.size + 1) / x.size))
            assert ks < 1.95 / math.sqrt(x.size) * 1.9  # P(KS > this) < 1e-6


def test_total_variation_equals_delta_at_zero_and_duality():
    """H_{e^ε}(P‖Q) = 1 − e^ε + e^ε H_{e^{−ε}}(Q‖P) (composition notes §13 D1)."""
    pair = DiscretePair([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    for eps in (-1.0, 0.0, 0.7):
        lhs = pair.delta(eps, Direction.REMOVE)
        rhs = pair.delta(-eps, Direction.ADD)
        assert lhs.lower <= 1 - math.exp(eps) + math.exp(eps) * rhs.upper + 1e-15
        assert lhs.upper >= 1 - math.exp(eps) + math.exp(eps) * rhs.lower - 1e-15


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: Gaussian(-1.0), "sigma"),
        (lambda: Gaussian(math.nan), "sigma"),
        (lambda: Gaussian(1.0, 0.0), "sensitivity"),
        (lambda: Laplace(0.0), "scale"),
        (lambda: RandomizedResponse(-0.1), "epsilon0"),
        (lambda: RandomizedResponse(1.0, 1), "k"),
        (lambda: DiscretePair([0.5, 0.5], [1.0]), "q"),
        (lambda: DiscretePair([0.5, 0.6], [0.5, 0.5]), "p"),
        (lambda: Gaussian(1.0).epsilon(1.5, Direction.ADD), "delta"),
        (lambda: Gaussian(1.0).renyi(1.0, Direction.ADD), "alpha"),
        (lambda: Gaussian(1.0).delta(math.nan, Direction.ADD), "epsilon"),
        (lambda: Gaussian(1.0).delta(1.0, "add"), "direction"),
    ],
)
def test_bad_input_names_the_parameter(build, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        build()
