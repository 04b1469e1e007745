"""Chua et al.'s importance sampling for the Gaussian allocation: the region derivation (the
statistic vanishes outside), the conditional law of the region's samples, and the estimates."""

import math

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy.stats import norm

from verifier._types import Direction
from verifier.montecarlo import estimate_delta
from verifier.montecarlo.importance import _coordinates, region_probability, region_threshold, sample_importance
from verifier.pairs import Gaussian
from verifier.reference.montecarlo import allocation_losses_from_normals
from verifier.schemes import Allocation

#: Rounding in the log-sum-exp of the loss (a few ulps of its magnitude).
LOSS_ATOL = 1e-12
CONFIDENCE = 0.9999


@pytest.mark.parametrize("sigma, sensitivity, t, eps", [(1.0, 1.0, 2, 0.5), (0.6, 1.0, 10, 1.0), (2.0, 1.5, 100, 0.1), (1.0, 1.0, 1000, 2.0)])
@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE], ids=lambda d: d.value)
def test_statistic_vanishes_outside_the_region(sigma, sensitivity, t, eps, direction):
    """The notes' [DERIVED] check, numerically: draws with max Z on the excluded side of c have L <= ε."""
    pair = Gaussian(sigma, sensitivity)
    a = sensitivity / sigma
    c = region_threshold(pair, t, direction, eps)
    rng = np.random.default_rng(9)
    z = rng.standard_normal((20_000, t)) * 2.0
    if direction is Direction.REMOVE:
        z = np.minimum(z, c)  # max Z <= c, i.e. the complement of {M >= c} (up to a null set)
        z[::7, 0] = c  # the boundary: the largest the first coordinate may be
    else:
        z = z + (c - z.max(axis=1))[:, None] + rng.exponential(0.5, size=(20_000, 1))  # max Z > c
    losses = allocation_losses_from_normals(z, a, direction.value)
    assert losses.max() <= eps + LOSS_ATOL
    # and the bound is attained on the boundary (the region is not larger than necessary) for remove
    if direction is Direction.REMOVE:
        edge = np.full((1, t), c)
        assert allocation_losses_from_normals(edge, a, "remove")[0] == pytest.approx(eps, abs=1e-9)


@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE], ids=lambda d: d.value)
def test_region_samples_follow_the_conditional_law(direction):
    """P(M > x | region) from the samples against (Φ^T laws): the max of t normals has CDF Φ(x)^t."""
    pair, t, eps = Gaussian(1.0), 5, 1.0
    c = region_threshold(pair, t, direction, eps)
    rng = np.random.default_rng(12)
    scale = region_probability(pair, t, direction, eps)
    z = _coordinates(pair, t, 100_000, direction, c, scale, rng)
    top = z.max(axis=1)
    for x in (c - 1.0, c + 0.3, c + 1.0):
        law = np.exp(t * log_ndtr(x))  # P(M <= x)
        if direction is Direction.REMOVE:
            expected = 0.0 if x <= c else (law - np.exp(t * log_ndtr(c))) / scale
        else:
            expected = min(law, scale) / scale
        got = np.mean(top <= x)
        assert abs(got - expected) < 6 * math.sqrt(max(expected * (1 - expected), 1e-6) / 100_000) + 1e-12
    # each coordinate is standard normal before conditioning: the ones below the max are N(0,1)|<=M
    assert (z <= top[:, None]).all()


def test_region_probability_closed_form():
    pair = Gaussian(1.0)
    c = region_threshold(pair, 2, Direction.REMOVE, 1.0)
    assert c == pytest.approx(0.5 + 1.0 - math.log1p(math.expm1(1.0) / 2), rel=1e-15)  # notes §3.9
    assert region_probability(pair, 2, Direction.REMOVE, 1.0) == pytest.approx(1 - norm.cdf(c) ** 2, rel=1e-12)
    c_add = region_threshold(pair, 2, Direction.ADD, 1.0)
    assert c_add == pytest.approx(0.5 + math.log(2) - 1.0, rel=1e-15)
    assert region_probability(pair, 2, Direction.ADD, 1.0) == pytest.approx(norm.cdf(c_add) ** 2, rel=1e-12)


def test_underflowing_region_gives_zero():
    losses, scale = sample_importance(Gaussian(0.1), 10, Direction.ADD, 1e4, 10, np.random.default_rng(0))
    assert scale == 0.0 and np.all(losses == -np.inf)


@pytest.mark.parametrize("direction, exact", [(Direction.REMOVE, 1.67702771e-04), (Direction.ADD, 1.59026508e-05)], ids=["remove", "add"])
def test_importance_sampling_tightens_small_delta(direction, exact):
    """At ε = 3 (t = 2, σ = 1; notes §7.5) both intervals contain the exact value, and importance
    sampling's is several times narrower for the same number of samples."""
    scheme = Allocation(Gaussian(1.0), 2)
    runs = {
        mode: estimate_delta(scheme, [3.0], [direction], 200_000, seed=8, confidence=CONFIDENCE, importance=mode, interval="kl+bernstein").at(direction)
        for mode in ("on", "off")
    }
    for est in runs.values():
        assert est.lower <= exact <= est.upper
    assert (runs["on"].upper - runs["on"].lower) * 3 < runs["off"].upper - runs["off"].lower
