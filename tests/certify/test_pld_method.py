"""The `pld` certification method on the two DP-SGD reference cases: its ε bounds contain the value
dp_accounting and prv_accountant agree on and are informative on both sides."""

from __future__ import annotations

import pytest

from verifier._types import Direction, Side
from verifier.certify.methods.pld import METHODS, REL_ACCURACY
from verifier.pairs import Gaussian
from verifier.schemes import Poisson


@pytest.fixture
def built_grids(monkeypatch):
    """(step, sides) of every grid the PLD method builds while the test runs (cache cleared around)."""
    import verifier.certify.methods.pld as pld_method

    built = []
    real = pld_method.scheme_pld

    def counting(scheme, direction, **kwargs):
        built.append((kwargs["step"], kwargs["sides"]))
        return real(scheme, direction, **kwargs)

    monkeypatch.setattr(pld_method, "scheme_pld", counting)
    pld_method._cached_build.cache_clear()
    yield built
    pld_method._cached_build.cache_clear()


@pytest.mark.parametrize(
    ("sigma", "rate", "steps", "delta", "reference"),
    [
        (1.0, 0.01, 1000, 1e-5, 1.8282),  # dp_accounting (PLD) and prv_accountant agree on 1.8282
        # λ = 0.001: the profile bends on the scale λ, so the refinement must start below it; from
        # step 2^-7 the dominated side stayed trivial (lower end 0) until the refinement gave up.
        (0.8, 0.001, 10_000, 1e-6, 0.9472),  # both peers: 0.9472
    ],
)
def test_pld_method_brackets_the_dpsgd_cases(sigma, rate, steps, delta, reference) -> None:
    (method,) = METHODS
    bounds = method.epsilon_bounds(Poisson(Gaussian(sigma), rate, steps), delta, Direction.REMOVE)
    lower = next(b.value for b in bounds if b.side is Side.LOWER)
    upper = next(b.value for b in bounds if b.side is Side.UPPER)
    assert lower <= reference <= upper * (1 + 1e-4)  # the peers print 4-5 digits
    assert upper - lower <= 2 * REL_ACCURACY * upper
    assert all(b.rigorous for b in bounds)


def test_pld_method_delta_bounds_contain_the_peer_crossing() -> None:
    """δ(1.82824) for σ=1, λ=0.01, 1000 steps is 1e-5 by dp_accounting 0.6.0 and prv_accountant 0.2.0
    (both print ε(1e-5) = 1.82824; the 5-digit rounding moves δ by ~3e-10). The δ refinement thins
    the tails for the certified lower end of the first grid; the bracket must still hold 1e-5."""
    (method,) = METHODS
    bounds = method.delta_bounds(Poisson(Gaussian(1.0), 0.01, 1000), 1.82824, Direction.REMOVE)
    lower = next(b.value for b in bounds if b.side is Side.LOWER)
    upper = next(b.value for b in bounds if b.side is Side.UPPER)
    assert lower - 3e-10 <= 1e-5 <= upper + 3e-10
    assert upper - lower <= 2 * REL_ACCURACY * upper


def test_refinement_jumps_to_the_predicted_grid(built_grids):
    """Adaptive refinement (issue 17): from the coarse grid (step 2^-9 for λ = 256/50000) the second
    order width model predicts the step that meets REL_ACCURACY, so each direction builds 2 grids where
    halving through every step built 5 (measured widths per halving: 3.5–5× narrower), and the
    bracket still meets the accuracy. Catches refinement that halves through every grid."""
    import verifier.certify.methods.pld as pld_method

    built = built_grids
    scheme = Poisson(Gaussian(1.1), 256 / 50000, 1955)
    for direction in Direction:
        lower, upper = sorted(b.value for b in pld_method.PLDMethod().epsilon_bounds(scheme, 1e-5, direction))
        assert upper - lower <= pld_method.REL_ACCURACY * upper
    # per direction: the start grid and one refined grid (no probe: the start step is λ-scaled)
    assert len(built) <= 4, built


def _gaussian_epsilon(mu: float, delta: float):
    """ε(δ) of the Gaussian pair N(μ, 1) vs N(0, 1) at 40 digits (Balle & Wang 2018, Thm 8:
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)), by mpmath bisection: an independent reference."""
    import mpmath

    phi = mpmath.ncdf
    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(0), mpmath.mpf(20)
        for _ in range(120):  # δ(ε) decreases in ε
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if phi(mu / 2 - mid / mu) - mpmath.exp(mid) * phi(-mu / 2 - mid / mu) > delta else (lo, mid)
        return float(lo)


def test_refinement_refines_only_the_wide_side(monkeypatch, built_grids):
    """Adaptive refinement (issue 17): 100 compositions of N(0, 10²) are the Gaussian pair with μ = 1.
    At a tight target (REL_ACCURACY 1e-5) the dominating side is already within a quarter of the
    target after two grids (its Richardson estimate), the dominated side is not, so only the dominated
    side is rebuilt on the finer grid; the note says so, each side keeps its own step, and the bracket
    still holds the exact ε. Catches a one-sided refinement that mixes the sides' bounds up (the kept
    side must stay the coarse one) or that refines the side that is already narrow."""
    import verifier.certify.methods.pld as pld_method
    from verifier.schemes import Composed, Single

    built = built_grids
    monkeypatch.setattr(pld_method, "REL_ACCURACY", 1e-5)
    bounds = pld_method.PLDMethod().epsilon_bounds(Composed(Single(Gaussian(10.0)), 100), 1e-6, Direction.REMOVE)
    lower, upper = sorted(b.value for b in bounds)
    exact = _gaussian_epsilon(1.0, 1e-6)
    assert lower <= exact <= upper
    assert upper - lower <= 1e-5 * upper
    from verifier._types import Dominance

    assert built[-1][1] == (Dominance.DOMINATED,), built
    assert built[-1][0] < min(step for step, sides in built if Dominance.DOMINATING in sides)
    assert "only the wide side refined" in bounds[0].note and "dominating side kept from grid step" in bounds[0].note


def test_one_sided_refinement_at_the_default_accuracy(built_grids):
    """20 compositions of Laplace(1): the dominating side is already narrow on the start grid (it
    barely moves from the probe at twice the step), so the one refinement rebuilds only the dominated
    side. The bracket holds dp_accounting 0.6.0's ε(1e-6) from both its pessimistic (19.67092017,
    connect-the-dots) and optimistic (19.67084473, privacy buckets) PLDs at value interval 1e-4.
    Catches a probe or estimate that calls the wide side narrow (the bracket then misses
    REL_ACCURACY) and a merge that keeps the wrong side."""
    import verifier.certify.methods.pld as pld_method
    from verifier._types import Dominance
    from verifier.pairs import Laplace
    from verifier.schemes import Composed, Single

    built = built_grids
    bounds = pld_method.PLDMethod().epsilon_bounds(Composed(Single(Laplace(1.0)), 20), 1e-6, Direction.REMOVE)
    lower, upper = sorted(b.value for b in bounds)
    assert lower <= 19.67084473 and 19.67092017 <= upper
    assert upper - lower <= REL_ACCURACY * upper
    assert built[-1][1] == (Dominance.DOMINATED,), built


def test_a_direction_below_the_other_is_not_refined(built_grids):
    """ε for add-or-remove is the maximum over both directions (issue 30): at σ = 0.6, λ = 1e-3,
    1000 steps, δ = 1e-6 ADD's upper end on its first grid (0.31) lies below REMOVE's lower end on
    its first grid (2.1), so ADD is built once and not refined (REMOVE meets the target on its first grid), and the maximum's bracket is exactly
    the one both fully refined directions give (reference: each direction asked alone). ADD's own
    bracket stays rigorous: it meets the refined one, and its note says why it is wider."""
    import verifier.certify.methods.pld as pld_method
    from verifier._types import Quantity
    from verifier.certify.portfolio import collect_bounds

    scheme = Poisson(Gaussian(0.6), 1e-3, 1000)
    alone = {d: sorted(b.value for b in pld_method.PLDMethod().epsilon_bounds(scheme, 1e-6, d)) for d in Direction}
    pld_method._cached_build.cache_clear()
    built_grids.clear()
    got = collect_bounds(scheme, Quantity.EPSILON, 1e-6, (Direction.ADD, Direction.REMOVE), only=["pld"])
    assert (got.combined.lower, got.combined.upper) == (
        max(alone[d][0] for d in Direction), max(alone[d][1] for d in Direction)
    )
    # one grid per direction, each its first (REMOVE meets the target there; ADD need not)
    assert [step for step, _ in built_grids] == [pld_method._start_step(scheme)] * 2, built_grids
    add = got.brackets[Direction.ADD]
    assert add.lower <= alone[Direction.ADD][1] and alone[Direction.ADD][0] <= add.upper
    assert add.upper - add.lower > REL_ACCURACY * add.upper  # not refined: wider than the target
    assert all("not refined further" in b.note for b in got.bounds if b.direction is Direction.ADD)


def test_directions_that_overlap_are_both_refined():
    """The Gaussian pair is symmetric: both directions have the same ε, so neither lies below the
    other and each is refined to REL_ACCURACY. Catches a floor taken from the other direction's upper
    end (it would stop both at their first grid)."""
    from verifier._types import Quantity
    from verifier.certify.portfolio import collect_bounds
    from verifier.schemes import Composed, Single

    got = collect_bounds(Composed(Single(Gaussian(10.0)), 100), Quantity.EPSILON, 1e-6, tuple(Direction), only=["pld"])
    for bracket in got.brackets.values():
        assert bracket.upper - bracket.lower <= REL_ACCURACY * bracket.upper
