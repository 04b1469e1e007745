"""The truncated-Poisson bound on random allocation (Feldman & Shenfeld, Thm 4.1; Lemma 3.2 for k > 1).

If the step R is (ε₀, δ₀)-DP (both directions), then for one round of 1-out-of-t′ allocation and
any δ_az > 0, in either direction,

    δ_{A_{t′}(R)}(ε) <= δ_{P_{t′,η}(R)}(ε) + t′δ₀ + δ_az,   η = 1/(t′(1 − γ)),
    γ = min{ sinh(ε₀)·sqrt(2 ln(1/δ_az)/t′), 1 − 1/t′ }.

The paper states γ with cosh(ε₀); its proof (step 3) bounds the increments
D_j = 1 − e^{ℓ_R(y_j)} ∈ [1 − e^{ε₀}, 1 − e^{−ε₀}], an interval of width e^{ε₀} − e^{−ε₀} = 2 sinh(ε₀)
(the text writes 2 cosh, a valid but looser constant; notes §6 item 12; derived in
proofs/allocation_theorem_constants.py). Maximal Azuma–Hoeffding for
the supermartingale Σ D_j (E[D_j | past] = λ(1 − e^{R₂}) <= 0 under A(*), = 0 under A(⊥)) gives
P(max_i Σ_{j<=i} D_j > t′γ) <= exp(−2(t′γ)²/(t′(2 sinh ε₀)²)) = exp(−t′γ²/(2 sinh² ε₀)) <= δ_az.

For k·E = m rounds (Lemma 3.2): on the complement of the m truncation events each round is the
truncated scheme, which is dominated by Poisson(η) (Lemma B.6, Claim B.7), and m rounds of t′
Poisson steps are m·t′ Poisson steps; the excluded events are union-bounded:

    δ_A(ε) <= δ_{P_{m·t′,η}}(ε) + m(t′δ₀ + δ_az).

Candidates whose rate exceeds 1/√t′ are skipped (:func:`~verifier.analytic.poisson_profile.informative_rate`);
if none is left the bound is reported as not applicable.

Free parameters. δ₀ and δ_az trade the Poisson rate η against the additive terms; each candidate
split below gives a valid bound and the smallest is returned (a minimum of upper bounds is an
upper bound). ε₀ is the pair's exact ε(δ₀), the larger of its two directions, rounded up.
"""

from __future__ import annotations

import math

from flint import arb

from verifier._directed import arb_bound, down, up, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_nonnegative, check_open_unit
from verifier.analytic.poisson_profile import ProfileSource, informative_rate, pld_poisson_profile, profiles_for
from verifier.analytic.rounds import Rounds, rounds_of
from verifier.errors import NotApplicable
from verifier.schemes import Allocation

__all__ = ["CITATION", "truncation_rate", "local_epsilon", "truncated_poisson_delta", "truncated_poisson_epsilon",
           "EPSILON_SPLITS", "DELTA_BUDGET_RATIOS"]

CITATION = "Feldman & Shenfeld 2025 (arXiv 2502.08202), Thm 4.1 (γ with sinh per its proof) and Lemma 3.2"
METHOD = "truncated-poisson"

#: ε(δ) form: candidate shares (all t′δ₀ terms, all δ_az terms) of the target δ; the Poisson profile
#: gets what is left. The second is random-allocation's split (0.99, 0.005; notes §3.4). Each
#: candidate costs one Poisson PLD.
EPSILON_SPLITS = ((0.25, 0.25), (0.99, 0.005))
#: δ(ε) form: the additive budget m(t′δ₀ + δ_az) is tried at these fractions of the Poisson δ at
#: rate 1/t′ (the smallest the bound can be), split evenly between the two terms.
DELTA_BUDGET_RATIOS = (1e-1, 1e-2, 1e-3, 1e-4)


def local_epsilon(pair, delta0: float) -> float:
    """ε₀ with the step (ε₀, δ₀)-DP in both directions: max over directions of the exact ε(δ₀), up."""
    return max(float(pair.epsilon(delta0, d).upper) for d in (Direction.ADD, Direction.REMOVE))


def truncation_rate(epsilon0: float, delta_azuma: float, steps: int) -> float:
    """η = 1/(t′(1 − γ)) of Thm 4.1 with γ = min{sinh(ε₀)√(2 ln(1/δ_az)/t′), 1 − 1/t′}, rounded up
    (the Poisson profile is non-decreasing in the rate, Lemma B.6)."""
    with with_precision():
        gamma = arb(epsilon0).sinh() * (2 * (1 / arb(delta_azuma)).log() / steps).sqrt()
        cap = 1 - arb(1) / steps
        if not (gamma < cap):
            return 1.0
        eta = arb_bound(1 / (steps * (1 - gamma)), Side.UPPER)
    return min(eta, 1.0)


def _poisson_rate(rounds: Rounds, delta0: float, delta_azuma: float) -> float:
    eps0 = local_epsilon(rounds.pair, delta0)
    if math.isinf(eps0):
        raise NotApplicable(f"the step is not (ε₀, δ₀)-DP for any finite ε₀ at δ₀ = {delta0:g}")
    return truncation_rate(eps0, delta_azuma, rounds.steps)


def _budget(rounds: Rounds, delta0: float, delta_azuma: float) -> float:
    """m(t′δ₀ + δ_az), rounded up."""
    with with_precision():
        return arb_bound(rounds.rounds * (rounds.steps * arb(delta0) + arb(delta_azuma)), Side.UPPER)


def truncated_poisson_delta(scheme: Allocation, epsilon: float, direction: Direction,
                            profiles: ProfileSource = pld_poisson_profile) -> Bound:
    """UPPER bound on δ(ε) of k-out-of-t allocation over E epochs in ``direction`` (Thm 4.1 with
    Lemma 3.2), minimised over the additive budgets :data:`DELTA_BUDGET_RATIOS`."""
    eps = check_nonnegative("epsilon", epsilon)
    rounds = rounds_of(scheme)
    total_steps = rounds.rounds * rounds.steps
    floor = profiles(rounds.pair, 1.0 / rounds.steps, total_steps, direction).delta_upper(eps)
    best = math.inf
    for ratio in DELTA_BUDGET_RATIOS:
        budget = max(floor * ratio, 1e-300)
        delta0 = down(budget / 2 / rounds.rounds / rounds.steps)
        delta_azuma = down(budget / 2 / rounds.rounds)
        if delta0 <= 0 or delta_azuma <= 0:
            continue
        eta = _poisson_rate(rounds, delta0, delta_azuma)
        if not informative_rate(eta, rounds.steps):
            continue
        value = up(profiles(rounds.pair, eta, total_steps, direction).delta_upper(eps)
                   + _budget(rounds, delta0, delta_azuma))
        best = min(best, value)
    if math.isinf(best):
        raise NotApplicable(f"no additive budget gives an informative Poisson rate η <= 1/√t′ = {1 / math.sqrt(rounds.steps):.3g}")
    return Bound(min(best, 1.0), Side.UPPER, direction, Quantity.DELTA, eps, METHOD, CITATION)


def truncated_poisson_epsilon(scheme: Allocation, delta: float, direction: Direction,
                              profiles: ProfileSource | None = None) -> Bound:
    """UPPER bound on ε(δ) of k-out-of-t allocation over E epochs in ``direction`` (Thm 4.1 with
    Lemma 3.2): the Poisson(η) ε at the δ left after the additive terms, minimised over
    :data:`EPSILON_SPLITS`."""
    target = check_open_unit("delta", delta)
    profiles = profiles_for(profiles, target)
    rounds = rounds_of(scheme)
    best, skipped_rate = math.inf, math.inf
    for share_local, share_azuma in EPSILON_SPLITS:
        delta0 = down(target * share_local / rounds.rounds / rounds.steps)
        delta_azuma = down(target * share_azuma / rounds.rounds)
        left = target - _budget(rounds, delta0, delta_azuma)
        if not left > 0:
            continue
        eta = _poisson_rate(rounds, delta0, delta_azuma)
        if not informative_rate(eta, rounds.steps):
            skipped_rate = min(skipped_rate, eta)
            continue
        eps = profiles(rounds.pair, eta, rounds.rounds * rounds.steps, direction).epsilon_upper(down(left))
        best = min(best, eps)
    if math.isinf(best):
        raise NotApplicable(
            f"no δ split gives an informative Poisson rate η <= 1/√t′ = {1 / math.sqrt(rounds.steps):.3g} "
            f"(smallest η {skipped_rate:.3g}) or a finite ε at δ = {target:g}"
        )
    return Bound(max(best, 0.0), Side.UPPER, direction, Quantity.EPSILON, target, METHOD, CITATION)
