"""The PLD engine on whole schemes, against exact references: m-fold Gaussian composition (exactly
Gaussian with σ/√m, Steinke 2022 Cor 10), m-fold randomized response (binomial sum, reference
module), and the Poisson-subsampled Gaussian values dp_accounting and prv_accountant agree on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Bracket, Direction, Dominance
from verifier.errors import AccuracyNotReachable, InvalidArgument, NotApplicable
from verifier.pairs import Gaussian, RandomizedResponse
from verifier.pld import PLDBracket, builder_for, register_builder, scheme_pld
from verifier.reference import rr_composed_delta
from verifier.schemes import Allocation, Composed, Poisson, PoissonReplaceOne, Sequence, Single, WithoutReplacement

EPSILONS = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
DELTAS = (1e-3, 1e-6)

#: Relative width of the composed-Gaussian ε bracket at step 2^-12 (measured: ~3e-5 at m=1000).
GAUSSIAN_EPS_RTOL = 1e-3


@pytest.mark.parametrize("m", [1, 10, 1000])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_composed_gaussian_brackets_the_exact_value(m: int, direction: Direction) -> None:
    sigma = math.sqrt(m)  # the composition is exactly Gaussian(1)
    bracket = scheme_pld(Composed(Single(Gaussian(sigma)), m), direction, step=2.0**-12)
    exact = Gaussian(sigma / math.sqrt(m))
    got = bracket.delta(EPSILONS)
    truth = exact.delta(EPSILONS, direction)
    assert np.all(got.lower <= truth.upper) and np.all(got.upper >= truth.lower)
    for delta in DELTAS:
        eps = bracket.epsilon(delta)
        ref = exact.epsilon(delta, direction)
        assert eps.lower <= ref.upper and eps.upper >= ref.lower
        assert eps.relative_width <= GAUSSIAN_EPS_RTOL


@pytest.mark.parametrize("m", [1, 7, 60])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_composed_randomized_response_brackets_the_binomial_sum(m: int, direction: Direction) -> None:
    eps0 = 0.5
    bracket = scheme_pld(Composed(Single(RandomizedResponse(eps0)), m), direction, step=2.0**-9)
    for eps in (0.0, 0.3, 1.0, 2.5):
        ref = float(rr_composed_delta(eps0, m, eps, direction.value))
        got = bracket.delta(eps)
        assert got.lower <= ref * (1 + 1e-12) and got.upper >= ref * (1 - 1e-12)


def _poisson_both(
    sigma: float, rate: float, steps: int, delta: float, step: float, target_delta: float | None = None
) -> Bracket:
    scheme = Poisson(Gaussian(sigma), rate, steps)
    brackets = [scheme_pld(scheme, d, step=step, target_delta=target_delta).epsilon(delta) for d in Direction]
    return brackets[0].maximum(brackets[1])


@pytest.mark.parametrize("target", [None, 1e-5], ids=["full-grid", "tail-coarsened"])
def test_poisson_gaussian_dpsgd_case(target: float | None) -> None:
    """σ=1, λ=0.01, 1000 steps, δ=1e-5: 1.8282 (dp_accounting and prv_accountant), width <= 0.2%,
    on the full grid and with the tails thinned for the target δ."""
    got = _poisson_both(1.0, 0.01, 1000, 1e-5, 2.0**-11, target)
    assert got.contains(1.8282)
    assert got.relative_width <= 2e-3


def test_poisson_gaussian_long_run() -> None:
    """σ=0.8, λ=0.001, 10^4 steps, δ=1e-6: 0.9472, width <= 0.5% (tails thinned for the target δ)."""
    got = _poisson_both(0.8, 0.001, 10_000, 1e-6, 2.0**-13, 1e-6)
    assert got.contains(0.9472)
    assert got.relative_width <= 5e-3


def test_target_delta_is_validated() -> None:
    with pytest.raises(InvalidArgument, match="target_delta"):
        scheme_pld(Poisson(Gaussian(1.0), 0.01, 10), Direction.REMOVE, target_delta=0.0)


def test_accuracy_loop_refines_until_narrow() -> None:
    scheme = Composed(Single(Gaussian(3.0)), 9)
    coarse = scheme_pld(scheme, Direction.REMOVE, step=2.0**-5)
    fine = scheme_pld(scheme, Direction.REMOVE, step=2.0**-5, eps_accuracy=1e-3, delta=1e-5)
    assert fine.step < coarse.step
    assert fine.epsilon(1e-5).width <= 1e-3
    with pytest.raises(AccuracyNotReachable, match="max_grid"):
        scheme_pld(scheme, Direction.REMOVE, step=2.0**-5, eps_accuracy=1e-9, delta=1e-5, max_grid=4000)
    with pytest.raises(InvalidArgument, match="delta"):
        scheme_pld(scheme, Direction.REMOVE, eps_accuracy=1e-3)


def test_builder_registry() -> None:
    with pytest.raises(NotApplicable):
        builder_for(object())
    with pytest.raises(InvalidArgument, match="scheme_type"):
        register_builder("Single", lambda *a: None)
    assert callable(builder_for(Single(Gaussian(1.0))))


def test_every_scheme_class_has_a_builder_or_is_explicitly_left_to_another_module() -> None:
    """Single, Composed and Poisson are built here; Allocation is registered by the allocation module."""
    for scheme in (Single(Gaussian(1.0)), Composed(Single(Gaussian(1.0)), 2), Poisson(Gaussian(1.0), 0.1, 2)):
        assert builder_for(scheme)
    try:
        builder_for(Allocation(Gaussian(1.0), 4))
    except NotApplicable as exc:
        assert "Allocation" in str(exc)


def test_bracket_type() -> None:
    bracket = scheme_pld(Single(Gaussian(1.0)), Direction.ADD, step=2.0**-6)
    assert isinstance(bracket, PLDBracket) and bracket.direction is Direction.ADD


@pytest.mark.parametrize(
    "scheme",
    [
        Composed(Single(Gaussian(2.0)), 8),
        Poisson(Gaussian(1.0), 0.05, 20),
        Allocation(Gaussian(1.0), 10, 1, 2),
        Sequence((Poisson(Gaussian(1.0), 0.05, 10), Composed(Single(Gaussian(3.0)), 4))),
        WithoutReplacement(Gaussian(1.0), 200, 10, 10),
        PoissonReplaceOne(Gaussian(1.0), 0.05, 10),
    ],
    ids=lambda s: type(s).__name__,
)
@pytest.mark.parametrize("kept", list(Dominance))
def test_one_sided_build_keeps_that_side_and_trivialises_the_other(scheme, kept: Dominance) -> None:
    """``sides`` (one-sided refinement, issue 17): the requested side is the two-sided build's, the
    other is trivial (δ = 1 above, ε lower end <= 0 below), so a bracket mixing them stays rigorous.
    Catches a builder that drops ``sides`` on the way to an inner builder (both sides built: the
    other side would not be trivial) or builds the wrong side."""
    full = scheme_pld(scheme, Direction.REMOVE, step=2.0**-7)
    one = scheme_pld(scheme, Direction.REMOVE, step=2.0**-7, sides=(kept,))
    side = {Dominance.DOMINATING: lambda b: b.dominating, Dominance.DOMINATED: lambda b: b.dominated}
    other = next(d for d in Dominance if d is not kept)
    # the same PLD up to the FFT round-off and trim (the packed pair transform rounds differently)
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(side[kept](one).delta(eps), side[kept](full).delta(eps), rtol=1e-9, atol=1e-12)
    assert side[other](one).probs.size == 1
    if other is Dominance.DOMINATING:
        assert one.dominating.delta(5.0) == 1.0
    else:
        assert one.dominated.epsilon(1e-6) <= 0.0
