"""The "adaptive" method for fixed-size batches (verifier.certify.methods.adaptive_batches): its
LOWER side is the recursion over the remove and add orientations, realised by one adaptive run.

References: at T = 1 the best adaptive choice is the larger of the two orientations' hockey sticks,
computed here by mpmath quadrature of the Gaussian mixture (independent of the PLD engine); for more
steps the value must not fall below the fixed orientation (the ``pld`` method's attained pair, an
adversary the recursion also contains) and must lie below the rigorous UPPER end of the ``pld``
method (the symmetrised profile). A family that lost the add member gains nothing over the fixed
orientation and fails the second test; one that read the wrong grid point or mixed up the sides
fails the first or the second."""

from __future__ import annotations

import math

import mpmath
import pytest

from verifier._types import Direction, Quantity, Side
from verifier.certify.methods import adaptive_batches
from verifier.certify.methods.adaptive_batches import AdaptiveBatches, AdaptiveCover
from verifier.certify.methods.pld import PLDMethod
from verifier.certify.registry import methods_for
from verifier.pairs import Gaussian, Laplace
from verifier.schemes import WithoutReplacement

SIGMA, N, B = 1.1, 100, 10  # q = 0.1, shift 2 (records clipped at 1)


def _orientation_delta(epsilon: float, remove: bool) -> mpmath.mpf:
    """H_{e^ε}(M‖N(0)) (remove) or H_{e^ε}(N(0)‖M) (add), M = 0.9 N(0) + 0.1 N(2), by quadrature of
    (p − e^ε q)_+ split at the one crossing (the likelihood ratio is monotone)."""
    with mpmath.workdps(30):
        s, q, k = mpmath.mpf(SIGMA), mpmath.mpf(B) / N, mpmath.exp(epsilon)

        def phi(y, mean):
            return mpmath.exp(-((y - mean) ** 2) / (2 * s**2)) / (s * mpmath.sqrt(2 * mpmath.pi))

        def mixture(y):
            return (1 - q) * phi(y, 0) + q * phi(y, 2)

        p, r = (mixture, lambda y: phi(y, 0)) if remove else ((lambda y: phi(y, 0)), mixture)
        f = lambda y: p(y) - k * r(y)  # noqa: E731
        try:
            cross = mpmath.findroot(f, (mpmath.mpf(-30), mpmath.mpf(40)), solver="bisect")
        except ValueError:
            return mpmath.quad(lambda y: max(f(y), 0), [-40, 0, 2, 40])
        ends = [cross, 40] if remove else [-40, cross]
        return mpmath.quad(f, ends)


def test_one_step_is_the_larger_orientation():
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 1)
    for epsilon in (0.5, 1.0, 2.0):
        truth = float(max(_orientation_delta(epsilon, True), _orientation_delta(epsilon, False)))
        (bound,) = AdaptiveBatches().delta_bounds(scheme, epsilon, Direction.REMOVE)
        assert bound.side is Side.LOWER and bound.method == "adaptive"
        assert bound.value <= truth
        assert bound.value >= truth * (1 - 2e-3)


def test_several_steps_lie_between_the_fixed_orientation_and_the_upper_end():
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 20)
    delta = 1e-3
    (adaptive,) = AdaptiveBatches().epsilon_bounds(scheme, delta, Direction.ADD)
    pld = PLDMethod().epsilon_bounds(scheme, delta, Direction.REMOVE)
    fixed = max(b.value for b in pld if b.side is Side.LOWER)
    upper = min(b.value for b in pld if b.side is Side.UPPER)
    assert fixed + 0.05 < adaptive.value < upper  # 8.005 < 8.084 < 8.467: the add member is used
    assert adaptive.quantity is Quantity.EPSILON


def test_registered_for_gaussian_fixed_batches_only():
    gaussian = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 3)
    laplace = WithoutReplacement(Laplace(1.0, 2.0), N, B, 3)
    assert any(m.name == "adaptive" for m in methods_for(gaussian))
    assert not any(m.name == "adaptive" for m in methods_for(laplace))
    cost = AdaptiveBatches().estimate_cost(WithoutReplacement(Gaussian(SIGMA, 2.0), 60000, 256, 2344))
    assert cost is not None and 1.0 < cost.seconds < math.inf


@pytest.fixture
def coarse_members(monkeypatch):
    """Members' PLDs on 128 cells per axis (the method's bound stays rigorous, only looser), so the
    UPPER tests run in seconds; the caches are emptied before and after."""
    monkeypatch.setattr(adaptive_batches, "_CELLS", 128)
    adaptive_batches.upper_family.cache_clear()
    adaptive_batches._recursion.cache_clear()
    yield
    adaptive_batches.upper_family.cache_clear()
    adaptive_batches._recursion.cache_clear()


def test_cover_upper_is_above_every_orientation_at_one_step(coarse_members):
    """T = 1: the worst realisable step is at least as bad as either orientation (mpmath)."""
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 1)
    for epsilon in (0.5, 1.0, 2.0):
        truth = float(max(_orientation_delta(epsilon, True), _orientation_delta(epsilon, False)))
        (bound,) = AdaptiveCover().delta_bounds(scheme, epsilon, Direction.ADD)
        assert bound.side is Side.UPPER and bound.method == "adaptive-cover"
        assert truth <= bound.value <= truth * 1.05


def test_cover_upper_closes_most_of_the_gap(coarse_members):
    """T = 20, δ = 1e-3: pld gives [8.005, 8.467]; the two adaptive ends [8.084, 8.183]. The UPPER
    end must lie above the attained LOWER end and well below the symmetrised profile's."""
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 20)
    (upper,) = AdaptiveCover().epsilon_bounds(scheme, 1e-3, Direction.REMOVE)
    (lower,) = AdaptiveBatches().epsilon_bounds(scheme, 1e-3, Direction.REMOVE)
    symmetrised = min(b.value for b in PLDMethod().epsilon_bounds(scheme, 1e-3, Direction.REMOVE) if b.side is Side.UPPER)
    assert lower.value <= upper.value <= symmetrised - 0.2
    assert upper.value - lower.value < 0.15


def test_cover_declines_batches_above_half_the_data():
    assert not AdaptiveCover().supports(WithoutReplacement(Gaussian(SIGMA, 2.0), N, 60, 3))
    assert AdaptiveBatches().supports(WithoutReplacement(Gaussian(SIGMA, 2.0), N, 60, 3))
