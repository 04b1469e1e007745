"""Random-allocation PLD brackets against exact values: t = 1 (the pair's own profile, ball
arithmetic), t = 2 Gaussian σ = 1 (notes/random-allocation.md §7.5, reproduced by the mpmath
reference ``gaussian_allocation_t2_delta``), k = t = 2 (Lemma 3.2 is exact there: two rounds of one
step = the Gaussian with σ/√2), both directions, both algorithms (directed rounding, S1 Alg. 4/5
corrected; convex order). Also the numeric checks behind each correction of S1 Alg. 4/5."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Direction, Dominance, Measure
from verifier.hockey import discrete_pld_delta
from verifier.pairs import DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier.pld import scheme_pld
from verifier.pld.allocation import allocation_bracket, allocation_loss, loss_range
from verifier.pld.geometric import convex_ratio_law, ratio_law, self_convolve
from verifier.schemes import Allocation

#: notes/random-allocation.md §7.5 (t = 2, σ = 1, k = 1), ~8 significant digits.
EPSILONS = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
EXACT_T2 = {
    Direction.REMOVE: np.array([2.97762225e-01, 2.16845146e-01, 1.49177523e-01, 9.67846539e-02,
                                5.92065011e-02, 1.86648880e-02, 4.74577763e-03, 1.67702771e-04]),
    Direction.ADD: np.array([2.97762225e-01, 2.13502048e-01, 1.42686966e-01, 8.82532235e-02,
                             5.01976624e-02, 1.23616056e-02, 2.05592453e-03, 1.59026508e-05]),
}  # fmt: skip
#: The table's values are rounded to 9 digits: compare with that much relative slack.
TABLE_RTOL = 5e-9
#: How tight the brackets must be (not only valid): relative width at these settings.
MAX_REL_WIDTH_T2 = 1e-2
#: Directed rounding shifts every loss by up to Δ = 2^-8 per rounding (first order): at ε = 3, where
#: δ falls by e^{-5} per unit of loss, that is a few percent.
MAX_REL_WIDTH_DIRECTED = 1e-1
DIRECTED_EXPONENT = 8
STEP = 2.0**-14
TAIL = 1e-14


def _directed_bracket(pair, t, direction, k=DIRECTED_EXPONENT):
    sides = [allocation_loss(pair, t, direction, d, step_exponent=k, tail_budget=TAIL).pld() for d in Dominance]
    return sides[0], sides[1]


def test_t2_values_from_the_reference_agree_with_the_notes():
    ref = pytest.importorskip("verifier.reference.pairs")
    for direction in Direction:
        got = float(ref.gaussian_allocation_t2_delta(1.0, 0.5, direction.value))
        expected = EXACT_T2[direction][2]
        assert got == pytest.approx(expected, rel=TABLE_RTOL)


@pytest.mark.parametrize("direction", list(Direction))
def test_t2_convex_bracket_contains_the_exact_profile(direction):
    bracket = allocation_bracket(Allocation(Gaussian(1.0), 2), direction, STEP)
    got = bracket.delta(EPSILONS)
    exact = EXACT_T2[direction]
    assert np.all(got.lower <= exact * (1 + TABLE_RTOL)) and np.all(exact * (1 - TABLE_RTOL) <= got.upper)
    assert np.all((got.upper - got.lower) / exact < MAX_REL_WIDTH_T2)


@pytest.mark.parametrize("direction", list(Direction))
def test_t2_directed_bracket_contains_the_exact_profile(direction):
    dominating, dominated = _directed_bracket(Gaussian(1.0), 2, direction)
    exact = EXACT_T2[direction]
    assert np.all(dominated.delta(EPSILONS) <= exact * (1 + TABLE_RTOL))
    assert np.all(exact * (1 - TABLE_RTOL) <= dominating.delta(EPSILONS))
    assert np.all((dominating.delta(EPSILONS) - dominated.delta(EPSILONS)) / exact < MAX_REL_WIDTH_DIRECTED)


PAIRS_T1 = [Gaussian(1.0), Gaussian(0.5), Laplace(1.0), RandomizedResponse(1.0), RandomizedResponse(0.5, k=3),
            DiscretePair((0.5, 0.3, 0.2), (0.2, 0.3, 0.5)), DiscretePair((0.3, 0.5, 0.2, 0.0), (0.4, 0.4, 0.0, 0.2))]  # fmt: skip


@pytest.mark.parametrize("pair", PAIRS_T1, ids=repr)
@pytest.mark.parametrize("direction", list(Direction))
def test_t1_brackets_contain_the_pair_profile(pair, direction):
    eps = np.array([-0.5, 0.0, 0.3, 1.0, 2.0])
    exact = pair.delta(eps, direction)
    convex = allocation_bracket(Allocation(pair, 1), direction, STEP).delta(eps)
    dominating, dominated = _directed_bracket(pair, 1, direction)
    for lower, upper in ((convex.lower, convex.upper), (dominated.delta(eps), dominating.delta(eps))):
        assert np.all(lower <= exact.upper) and np.all(exact.lower <= upper)


def test_k_equals_t_is_the_composed_gaussian():
    """A_{2,2}(N_σ) = N_σ twice = N_{σ/√2}: Lemma 3.2 (⌊2/2⌋ = 1 step per round) is exact here."""
    eps = np.array([0.0, 0.5, 1.0, 2.0])
    exact = Gaussian(1.0 / math.sqrt(2.0)).delta(eps, Direction.REMOVE)
    got = allocation_bracket(Allocation(Gaussian(1.0), 2, k=2), Direction.REMOVE, STEP).delta(eps)
    assert np.all(got.lower <= exact.upper) and np.all(exact.lower <= got.upper)


def test_rounds_use_the_floor_of_t_over_k():
    """Lemma 3.2 with ⌊t/k⌋: t = 11, k = 2 runs two rounds of 5 steps (a ceiling would run 6-step
    rounds, more amplification, an under-reported ε)."""
    floor = allocation_bracket(Allocation(Gaussian(1.0), 11, k=2), Direction.REMOVE, STEP).epsilon(1e-6)
    five = allocation_bracket(Allocation(Gaussian(1.0), 10, k=2), Direction.REMOVE, STEP).epsilon(1e-6)
    six = allocation_bracket(Allocation(Gaussian(1.0), 12, k=2), Direction.REMOVE, STEP).epsilon(1e-6)
    assert floor == five
    assert six.upper < floor.lower


#: A coarse grid for the brute-force composition below (np.convolve is O(n²) on the PLD's points).
EPOCH_STEP = 2.0**-8
#: Slack between the brute-force square and the engine's FFT composition: float sums of ~10^4 terms.
EPOCH_ATOL = 1e-12


def _brute_force_two_epochs(pld) -> np.ndarray:
    """δ(ε) at EPOCHS_EPS of the two-fold composition of one discrete PLD by direct convolution
    (np.convolve: no FFT, no Chernoff window, no shared code with ``self_compose``): losses add,
    probabilities multiply, mass at +∞ is 1 − (1 − m)²."""
    probs = np.convolve(pld.probs, pld.probs)
    losses = (2 * pld.offset + np.arange(probs.size)) * pld.step
    infinite = 1.0 - (1.0 - pld.infinite_mass) ** 2
    return discrete_pld_delta(losses, probs, EPOCHS_EPS, infinite)


EPOCHS_EPS = np.array([0.2, 1.0, 2.0])


def _epochs_check(one, two) -> None:
    """The two-epoch bracket ``two`` against the brute-force square of the one-epoch bracket ``one``:
    the DOMINATING side must be >= the square of the DOMINATING PLD (and close), the DOMINATED side
    <= the square of the DOMINATED PLD (and close)."""
    upper = _brute_force_two_epochs(one.dominating)
    lower = _brute_force_two_epochs(one.dominated)
    got = two.delta(EPOCHS_EPS)
    slack = EPOCH_ATOL + 2 * (one.dominating.error_budget + one.dominating.dropped_mass)
    assert np.all(got.upper >= upper.lower - EPOCH_ATOL) and np.all(got.upper <= upper.upper + slack)
    assert np.all(got.lower <= lower.upper + EPOCH_ATOL) and np.all(got.lower >= lower.lower - slack)


def test_epochs_compose():
    """Two epochs of 1-out-of-4 allocation = the two-fold composition of one epoch, checked against
    a brute-force convolution (the old test compared ``epochs=2`` with ``self_compose(2)``, which is
    how ``epochs=2`` is computed: a value with itself). The mutants below are what it catches: the
    epochs ignored, or composed once too often."""
    one = allocation_bracket(Allocation(Gaussian(1.0), 4), Direction.ADD, EPOCH_STEP)
    two = allocation_bracket(Allocation(Gaussian(1.0), 4, epochs=2), Direction.ADD, EPOCH_STEP)
    _epochs_check(one, two)
    assert np.all(two.delta(EPOCHS_EPS).lower > one.delta(EPOCHS_EPS).upper)
    for mutant in (one, one.self_compose(3)):  # epochs ignored; one epoch too many
        with pytest.raises(AssertionError):
            _epochs_check(one, mutant)


def test_scheme_pld_dispatches_allocation():
    bracket = scheme_pld(Allocation(Gaussian(1.0), 2), Direction.REMOVE, step=STEP)
    got = bracket.delta(0.5)
    assert got.lower <= EXACT_T2[Direction.REMOVE][2] <= got.upper


# ---- the corrections of S1 Alg. 4/5 (notes/random-allocation.md §6 item 23), checked numerically --


def test_erratum_a_the_remove_loss_needs_minus_ln_t():
    """Without the −ln t shift the DOMINATED PLD's δ exceeds the exact value: invalid."""
    _, dominated = _directed_bracket(Gaussian(1.0), 2, Direction.REMOVE)
    unshifted = discrete_pld_delta(dominated.losses() + math.log(2.0), dominated.probs, EPSILONS, dominated.infinite_mass)
    assert np.any(unshifted.lower > EXACT_T2[Direction.REMOVE])


def test_erratum_b_the_null_factor_cdf_is_the_complement():
    """The printed CDF F^R_{Q,P}(1/r) = P_Q(Q/P <= 1/r) = P_Q(P/Q >= r) decreases in r: it is the
    survival function. The correct CDF of P/Q under Q is 1 − F^R_{Q,P}((1/r)^−) = P_Q(ℓ <= ln r), and
    the discretised null factor has mean E_Q[P/Q] = 1 (a mean the printed law does not have)."""
    pair = Gaussian(1.0)
    log_r = np.linspace(-3.0, 3.0, 13)
    printed = pair.loss_cdf(-log_r, Direction.ADD, Measure.Q)  # ln(Q/P) under Q, at ln(1/r)
    correct = pair.loss_cdf(log_r, Direction.REMOVE, Measure.Q)
    assert np.all(np.diff(printed) < 0) and np.all(np.diff(correct) > 0)
    np.testing.assert_allclose(printed, 1.0 - correct, rtol=1e-12, atol=1e-15)
    law = convex_ratio_law(pair, 8, loss_range(pair, Measure.Q, 1e-16), Dominance.DOMINATING)
    mean = float(np.sum(law.moments)) + law.lost_moment
    assert mean == pytest.approx(1.0, rel=1e-9)


def test_erratum_e_add_sums_round_down_for_the_dominating_pld():
    """Rounding the add direction's ratio sums UP (the printed call label) gives a "dominating" PLD
    whose δ falls below the exact add profile: invalid. (ℓ = ln t − ln S decreases in S.)"""
    pair, t, k = Gaussian(1.0), 2, DIRECTED_EXPONENT
    null = ratio_law(pair, Measure.Q, k, loss_range(pair, Measure.Q, 1e-16), Dominance.DOMINATING)
    law = self_convolve(null, t, lambda m: 0.0)
    losses = (math.log(t) - law.log_ratios)[::-1]
    wrong = discrete_pld_delta(np.ascontiguousarray(losses), law.probs[::-1].copy(), EPSILONS, law.zero_mass)
    assert np.any(wrong.upper < EXACT_T2[Direction.ADD] * (1 - TABLE_RTOL))


def test_erratum_d_add_has_no_special_coordinate():
    """Alg. 5's extra convolution with the P-factor (t − 1 null draws plus one under P) gives a
    different law: its δ misses the exact add profile."""
    pair, t, k = Gaussian(1.0), 2, DIRECTED_EXPONENT
    null = ratio_law(pair, Measure.Q, k, loss_range(pair, Measure.Q, 1e-16), Dominance.DOMINATED)
    special = ratio_law(pair, Measure.P, k, loss_range(pair, Measure.P, 1e-16), Dominance.DOMINATED)
    from verifier.pld.geometric import convolve

    law = convolve(special, null, 0.0)
    losses = np.ascontiguousarray((math.log(t) - law.log_ratios)[::-1])
    delta = discrete_pld_delta(losses, law.probs[::-1].copy(), EPSILONS, law.zero_mass)
    exact = EXACT_T2[Direction.ADD]
    assert np.any(np.abs(delta.upper - exact) > 0.05 * exact)
