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

import functools
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


def _clear_caches() -> None:
    for cached in (adaptive_batches._cover, adaptive_batches.upper_family, adaptive_batches._recursion):
        cached.cache_clear()


def test_claim_refines_the_upper_side_until_it_decides(coarse_members, monkeypatch):
    """q = 0.1, T = 20, δ = 1e-3: the UPPER end of ε is 8.1563 on the coarsest grid (2^-8) and 8.1523
    on the next; the claim ε = 8.154 lies between, so it is CERTIFIED only after one refinement.
    Mutant: a refinement that stops at the coarsest level (one cover) leaves it undecided. Both answers must
    stay above the ``pld`` method's attained LOWER end of ε (8.005; an independent construction)."""
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 20)
    attained = max(b.value for b in PLDMethod().epsilon_bounds(scheme, 1e-3, Direction.REMOVE) if b.side is Side.LOWER)
    (at_epsilon,), (at_delta,) = AdaptiveCover().claim_bounds(scheme, 8.154, 1e-3, Direction.REMOVE)
    assert at_epsilon.side is Side.UPPER and at_epsilon.quantity is Quantity.DELTA
    assert at_epsilon.value <= 1e-3 and attained < at_delta.value <= 8.154
    monkeypatch.setattr(adaptive_batches, "LEVELS", 1)
    monkeypatch.setattr(adaptive_batches, "COVERS", adaptive_batches.COVERS[:1])
    (mutant,), (mutant_epsilon,) = AdaptiveCover().claim_bounds(scheme, 8.154, 1e-3, Direction.REMOVE)
    assert mutant.value > 1e-3 and mutant_epsilon.value > 8.154


def test_claim_refines_the_lower_side_until_it_decides(monkeypatch):
    """n = 1000, B = 10, T = 200, δ = 1e-5: the LOWER end of ε is 5.8301, 5.8311 and 5.8320 on grids
    2^-9, 2^-10, 2^-11; the claim ε = 5.8315 is VIOLATED only on the third. Mutant: two levels
    leave it undecided. The LOWER end must stay below the ``pld`` method's UPPER end (the
    symmetrised profile, an independent construction)."""
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), 1000, 10, 200)
    symmetrised = min(b.value for b in PLDMethod().epsilon_bounds(scheme, 1e-5, Direction.REMOVE) if b.side is Side.UPPER)
    (at_epsilon,), (at_delta,) = AdaptiveBatches().claim_bounds(scheme, 5.8315, 1e-5, Direction.ADD)
    assert at_epsilon.side is Side.LOWER and at_epsilon.value > 1e-5
    assert 5.8315 < at_delta.value < symmetrised
    monkeypatch.setattr(adaptive_batches, "LEVELS", 2)
    (mutant,), _ = AdaptiveBatches().claim_bounds(scheme, 5.8315, 1e-5, Direction.ADD)
    assert mutant.value <= 1e-5


def test_a_cover_that_fails_its_check_is_never_used(coarse_members, monkeypatch):
    """A cover whose members were raised by 1/2 in C no longer dominates its cells: the method must
    decline (NotApplicable) on the coarsest level already, before any member's PLD is built. Mutant:
    with the check skipped the same cover gives a number, which this test would reject."""
    from verifier.errors import NotApplicable
    from verifier.pld import gram_cover as cover_module

    real = functools.cache(cover_module.gram_cover)  # planned once for both runs

    def weakened(sigma: float, *, excess: float = 0.01):
        cover = real(sigma, excess=excess)
        members = tuple(cover_module.Member(m.a_sq, m.b_sq, m.c + 0.5) for m in cover.members)
        return cover_module.GramCover(cover.sigma, cover.excess, members, cover.cells)

    monkeypatch.setattr(cover_module, "gram_cover", weakened)
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), N, B, 2)
    _clear_caches()
    try:
        with pytest.raises(NotApplicable, match="no finite cover"):
            AdaptiveCover().claim_bounds(scheme, 3.0, 1e-3, Direction.REMOVE)
        monkeypatch.setattr(cover_module, "check_cover", lambda cover: None)
        _clear_caches()
        (mutant,), _ = AdaptiveCover().claim_bounds(scheme, 3.0, 1e-3, Direction.REMOVE)
        assert math.isfinite(mutant.value)
    finally:
        _clear_caches()


@pytest.mark.slow
def test_dp_sgd_row_claims_are_decided_on_coarse_levels():
    """The DP-SGD row (σ = 1.1, n = 60000, B = 256, T = 2344, δ = 1e-5), [6.7573, 6.8008] when refined:
    ε = 6.85 is CERTIFIED by the UPPER side's coarsest level (2^-8), ε = 6.74 VIOLATED by the LOWER
    side's second (2^-10); both must agree with the ``pld`` bracket [6.7211, 7.4802] (independent)."""
    scheme = WithoutReplacement(Gaussian(SIGMA, 2.0), 60000, 256, 2344)
    (upper,), (upper_epsilon,) = AdaptiveCover().claim_bounds(scheme, 6.85, 1e-5, Direction.REMOVE)
    assert upper.value <= 1e-5 and 6.7211 < upper_epsilon.value <= 6.85
    (lower,), (lower_epsilon,) = AdaptiveBatches().claim_bounds(scheme, 6.74, 1e-5, Direction.REMOVE)
    assert lower.value > 1e-5 and 6.74 < lower_epsilon.value < upper_epsilon.value
