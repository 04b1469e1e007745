"""The recursive bound on random allocation (Feldman & Shenfeld, Thm 4.2; Lemma 3.2 for k > 1).

For one round of 1-out-of-t′ allocation and any 0 < ε′ <= ln(t′)/2 (so that η ∈ [1/t′, 1]):

    δ→_A(ε) <= δ→_{P_{t′,η}}(ε) + τ · δ←_A(ε′),          η = e^{2ε′}/t′,
    δ←_A(ε) <= δ←_{P_{t′,η}}(ε) + τe^{2ε′} · δ←_A(ε′),   τ = 1/(e^{ε′}(e^{ε′} − 1)).

Both tails use the ADD profile of the allocation itself at ε′ (notes §6 item 30); it is bounded
here by another valid ADD bound ("bootstrapping", §4.2): the smaller of the decomposition bound
(Thm 4.6, add) and, for the Gaussian, the direct bound (Cor 4.10, add; verifier.rdp.allocation).

The constant τ. The written proof goes through Kasiviswanathan–Smith (Claim B.10,
P(ℓ > 2ε′) <= 2δ/(1 − e^{−ε′})) and so yields 2τ; the statement has τ (notes §6 item 11). τ holds
because the factor 2 is not needed: for S = {ℓ_{P,Q} > 2ε′}, Q(S) <= e^{−2ε′}P(S), so
H_{e^{ε′}}(P‖Q) >= P(S) − e^{ε′}Q(S) >= P(S)(1 − e^{−ε′}), i.e. P(S) <= H_{e^{ε′}}(P‖Q)/(1 − e^{−ε′})
(checked numerically in tests/analytic/test_recursive.py; derived in proofs/allocation_theorem_constants.py). With the proof's change of measure
(factor 1/(tη) = e^{−2ε′} for REMOVE, none for ADD) this gives exactly τ and τe^{2ε′}.

For m = k·E rounds the tails are union-bounded as in Thm 4.1: δ_A(ε) <= δ_{P_{m·t′,η}}(ε) + m·c·δ←_{A_{t′}}(ε′).

Candidates whose rate η exceeds 1/√t′ are skipped (informative_rate); if none is left the bound
is reported as not applicable.

Free parameter ε′: the δ form minimises over a few candidates; the ε form takes, for each tail
share f of δ, the smallest ε′ (bisection) at which the tail is <= f·δ, and returns the best.
"""

from __future__ import annotations

import math

from flint import arb

from verifier._directed import arb_bound, down, up, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_nonnegative, check_open_unit
from verifier.analytic._search import smallest_passing
from verifier.analytic.decomposition import decomposition_delta_rounds
from verifier.analytic.poisson_profile import ProfileSource, informative_rate, pld_poisson_profile, profiles_for
from verifier.analytic.rounds import Rounds, rounds_of
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.rdp.allocation import allocation_add_gaussian_delta
from verifier.schemes import Allocation

__all__ = ["CITATION", "tail_coefficient", "recursion_rate", "add_bootstrap", "recursive_delta", "recursive_epsilon",
           "TAIL_SHARES", "EPSILON_PRIME_MULTIPLES"]

CITATION = "Feldman & Shenfeld 2025 (arXiv 2502.08202), Thm 4.2 (τ justified in the module docstring) and Lemma 3.2"
METHOD = "recursive"

#: ε(δ) form: candidate shares of δ given to the tail term (each costs one Poisson PLD).
TAIL_SHARES = (0.5,)
#: δ(ε) form: ε′ candidates as multiples of ε (the paper: ε′ = Cε with C >> 1), and fractions of
#: the largest ε′ searched, ln(t′)/4 (see _max_epsilon_prime).
EPSILON_PRIME_MULTIPLES = (2.0, 4.0, 8.0)
_EPSILON_PRIME_FRACTIONS = (0.25, 0.5, 1.0)
#: Bisection width for ε′ (tightness only: any ε′ whose tail passes is valid).
_EPSILON_PRIME_TOLERANCE = 1e-3


def tail_coefficient(epsilon_prime: float, direction: Direction) -> float:
    """τ = 1/(e^{ε′}(e^{ε′} − 1)) (REMOVE) or τe^{2ε′} = e^{ε′}/(e^{ε′} − 1) (ADD), rounded up."""
    with with_precision():
        e = arb(epsilon_prime)
        value = 1 / (e.exp() * e.expm1()) if direction is Direction.REMOVE else e.exp() / e.expm1()
        return arb_bound(value, Side.UPPER)


def recursion_rate(epsilon_prime: float, steps: int) -> float:
    """η = e^{2ε′}/t′ rounded up (the Poisson profile is non-decreasing in the rate, Lemma B.6)."""
    with with_precision():
        eta = (2 * arb(epsilon_prime)).exp() / steps
        if eta > 1:
            raise NotApplicable(f"Thm 4.2 needs ε′ <= ln(t′)/2 = {math.log(steps) / 2:g}; got ε′ = {epsilon_prime:g}")
        return min(arb_bound(eta, Side.UPPER), 1.0)


def add_bootstrap(rounds: Rounds, epsilon_prime: float, profiles: ProfileSource = pld_poisson_profile) -> float:
    """Upper bound on δ←_{A_{t′}}(ε′) of ONE round: the smaller of Thm 4.6 (add) and, for the
    Gaussian, Cor 4.10 (add)."""
    value = decomposition_delta_rounds(rounds.pair, rounds.steps, epsilon_prime, Direction.ADD, profiles)
    if isinstance(rounds.pair, Gaussian):
        value = min(value, allocation_add_gaussian_delta(rounds.pair, rounds.steps, epsilon_prime))
    return value


def _tail(rounds: Rounds, epsilon_prime: float, direction: Direction, profiles: ProfileSource) -> float:
    """m · c(ε′) · δ←_{A_{t′}}(ε′), rounded up (one ball product, then one outward rounding)."""
    bootstrap = add_bootstrap(rounds, epsilon_prime, profiles)
    with with_precision():
        return arb_bound(rounds.rounds * arb(tail_coefficient(epsilon_prime, direction)) * arb(bootstrap), Side.UPPER)


def _max_epsilon_prime(rounds: Rounds) -> float:
    """ln(t′)/4: the theorem allows ε′ <= ln(t′)/2 (η <= 1); beyond ln(t′)/4 the rate exceeds 1/√t′
    (:func:`~verifier.analytic.poisson_profile.informative_rate`), so the search stops there."""
    if rounds.steps < 2:
        raise NotApplicable("Thm 4.2 needs t′ = ⌊t/k⌋ >= 2 (ε′ ∈ (0, ln(t′)/2])")
    return down(math.log(rounds.steps) / 4)


def recursive_delta(scheme: Allocation, epsilon: float, direction: Direction,
                    profiles: ProfileSource = pld_poisson_profile) -> Bound:
    """UPPER bound on δ(ε) of k-out-of-t allocation over E epochs in ``direction`` (Thm 4.2 with
    Lemma 3.2), minimised over the ε′ candidates."""
    eps = check_nonnegative("epsilon", epsilon)
    rounds = rounds_of(scheme)
    cap = _max_epsilon_prime(rounds)
    candidates = {min(c * eps, cap) for c in EPSILON_PRIME_MULTIPLES} | {f * cap for f in _EPSILON_PRIME_FRACTIONS}
    best = math.inf
    for eps_prime in sorted(c for c in candidates if c > 0):
        eta = recursion_rate(eps_prime, rounds.steps)
        if not informative_rate(eta, rounds.steps):
            continue
        poisson = profiles(rounds.pair, eta, rounds.rounds * rounds.steps, direction).delta_upper(eps)
        best = min(best, up(poisson + _tail(rounds, eps_prime, direction, profiles)))
    if math.isinf(best):
        raise NotApplicable(f"every ε′ candidate gives a Poisson rate above 1/√t′ (t′ = {rounds.steps})")
    return Bound(min(best, 1.0), Side.UPPER, direction, Quantity.DELTA, eps, METHOD, CITATION)


def recursive_epsilon(scheme: Allocation, delta: float, direction: Direction,
                      profiles: ProfileSource | None = None) -> Bound:
    """UPPER bound on ε(δ) of k-out-of-t allocation over E epochs in ``direction`` (Thm 4.2 with
    Lemma 3.2): for each tail share f, the smallest ε′ with tail <= fδ, then the Poisson(η) ε at
    δ − tail; the best over :data:`TAIL_SHARES`."""
    target = check_open_unit("delta", delta)
    profiles = profiles_for(profiles, target)
    rounds = rounds_of(scheme)
    cap = _max_epsilon_prime(rounds)
    best = math.inf
    for share in TAIL_SHARES:
        budget = target * share

        def fits(e: float) -> bool:
            return e > 0 and _tail(rounds, e, direction, profiles) <= budget

        if not fits(cap):
            continue
        _, eps_prime = smallest_passing(fits, cap * 1e-3, cap, tolerance=_EPSILON_PRIME_TOLERANCE * cap)
        left = down(target - _tail(rounds, eps_prime, direction, profiles))
        eta = recursion_rate(eps_prime, rounds.steps)
        if not informative_rate(eta, rounds.steps):
            continue
        best = min(best, profiles(rounds.pair, eta, rounds.rounds * rounds.steps, direction).epsilon_upper(left))
    if math.isinf(best):
        raise NotApplicable(
            f"no ε′ <= ln(t′)/4 = {cap:g} (Poisson rate e^(2ε′)/t′ <= 1/√t′) makes the tail τ·δ←_A(ε′) "
            f"small enough for δ = {target:g} (t′ = {rounds.steps})"
        )
    return Bound(max(best, 0.0), Side.UPPER, direction, Quantity.EPSILON, target, METHOD, CITATION)
