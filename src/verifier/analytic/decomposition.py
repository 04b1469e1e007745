"""The Poisson-decomposition bound on 1-out-of-t random allocation (Feldman & Shenfeld, Thm 4.6).

With λ = 1/t and γ→ = 1/(1 − (1 − λ)^t) (the factor 1/λ_v, λ_v = P(an element is sampled at least
once by Poisson(1/t) over t steps)):

- REMOVE: δ→_A(ε) ≤ γ→ · δ→_{P_{t,1/t}}(ε→),  ε→ = ln(1 + (e^ε − 1)/γ→);
- ADD:    δ←_A(ε) ≤ γ← · δ←_{P_{t,1/t}}(ε←),  γ← = 1 + e^ε(γ→ − 1),  ε← = −ln(1 − (1 − e^{−ε})/γ→).

The ADD formula is the paper's corrected one (footnote 9: an earlier version applied the REMOVE
formula to both directions). Both follow from Lemma D.4 and Claim D.3 (stated for κ ≥ 1), so the
bound is used for ε ≥ 0 only. It bounds a *profile*, not a dominating pair, so it does not compose:
it applies to k = 1, one epoch. Every constant is evaluated in ball arithmetic and rounded toward
safety: ε→, ε← down (the Poisson profile is non-increasing), γ→, γ← up.
"""

from __future__ import annotations

import math

from flint import arb

from verifier._directed import arb_bound, up, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_nonnegative, check_open_unit
from verifier.analytic._search import EPSILON_TOLERANCE, smallest_passing
from verifier.analytic.poisson_profile import ProfileSource, pld_poisson_profile, profiles_for
from verifier.analytic.rounds import rounds_of
from verifier.errors import NotApplicable
from verifier.schemes import Allocation

__all__ = ["CITATION", "sampled_fraction", "decomposition_delta", "decomposition_epsilon", "decomposition_delta_rounds"]

CITATION = "Feldman & Shenfeld 2025 (arXiv 2502.08202), Thm 4.6 (Poisson decomposition, λ = 1/t; add form per footnote 9)"
METHOD = "decomposition"
#: Relative width of the ADD ε search (tightness only; far below the Poisson profile's own accuracy).
_RELATIVE_TOLERANCE = 1e-5


def sampled_fraction(steps: int) -> arb:
    """λ_v = 1 − (1 − 1/t)^t = 1/γ→ as a ball ((1 − 1/t)^t lies in [0, 1/e]: no cancellation)."""
    with with_precision():
        return 1 - (arb(steps - 1) / steps) ** steps


def _shifted(epsilon: float, lam_v: arb, direction: Direction) -> tuple[float, float]:
    """(ε→ or ε← rounded down, γ→ or γ← rounded up) for the Thm 4.6 direction."""
    e = arb(epsilon)
    if direction is Direction.REMOVE:
        shifted = (lam_v * e.expm1()).log1p()  # ln(1 + λ_v(e^ε − 1))
        factor = 1 / lam_v
    else:
        shifted = -(lam_v * (-e).expm1()).log1p()  # −ln(1 − λ_v(1 − e^{−ε}))
        factor = 1 + e.exp() * (1 / lam_v - 1)
    return max(arb_bound(shifted, Side.LOWER), 0.0), arb_bound(factor, Side.UPPER)


def decomposition_delta_rounds(pair, steps: int, epsilon: float, direction: Direction,
                               profiles: ProfileSource = pld_poisson_profile) -> float:
    """Upper bound on δ(ε) of one round of 1-out-of-``steps`` allocation of ``pair`` (Thm 4.6),
    clipped to 1; used directly and as a bootstrap by the recursive bound."""
    with with_precision():
        shifted, factor = _shifted(epsilon, sampled_fraction(steps), direction)
    poisson = profiles(pair, 1.0 / steps, steps, direction)
    return min(1.0, up(factor * poisson.delta_upper(shifted)))


def _single_round(scheme: Allocation):
    rounds = rounds_of(scheme)
    if not rounds.single:
        raise NotApplicable(
            f"Thm 4.6 bounds a profile, which does not compose: it applies to k=1 and epochs=1, "
            f"not k={scheme.k}, epochs={scheme.epochs}"
        )
    return rounds


def decomposition_delta(scheme: Allocation, epsilon: float, direction: Direction,
                        profiles: ProfileSource = pld_poisson_profile) -> Bound:
    """UPPER bound on δ(ε) of 1-out-of-t allocation in ``direction`` (Thm 4.6, both directions
    separately), for ε ≥ 0, from the DOMINATING Poisson(1/t) profile."""
    eps = check_nonnegative("epsilon", epsilon)
    rounds = _single_round(scheme)
    value = decomposition_delta_rounds(rounds.pair, rounds.steps, eps, direction, profiles)
    return Bound(value, Side.UPPER, direction, Quantity.DELTA, eps, METHOD, CITATION)


def _add_start(rounds, target: float, profiles: ProfileSource) -> float:
    """Where the ADD search starts: the ε with ε←(ε) = ε_P(δ), ignoring the factor γ← >= 1 (float;
    only a starting point, every returned point is verified)."""
    eps_poisson = profiles(rounds.pair, 1.0 / rounds.steps, rounds.steps, Direction.ADD).epsilon_upper(target)
    ratio = -math.expm1(-max(eps_poisson, 0.0)) / float(sampled_fraction(rounds.steps).mid())
    return -math.log1p(-ratio) if 0.0 <= ratio < 1.0 and math.isfinite(eps_poisson) else 0.0


def decomposition_epsilon(scheme: Allocation, delta: float, direction: Direction,
                          profiles: ProfileSource | None = None) -> Bound:
    """UPPER bound on ε(δ) of 1-out-of-t allocation in ``direction`` (Thm 4.6).

    REMOVE inverts in closed form: ε_P = ε_P(δ/γ→) (δ/γ→ rounded down), then
    ε = ln(1 + γ→(e^{ε_P} − 1)) rounded up. ADD has no closed inverse: bisection on the δ form,
    returning a point where the δ bound was evaluated <= δ.
    """
    target = check_open_unit("delta", delta)
    profiles = profiles_for(profiles, target)
    rounds = _single_round(scheme)
    if direction is Direction.REMOVE:
        with with_precision():
            lam_v = sampled_fraction(rounds.steps)
            target_poisson = arb_bound(arb(target) * lam_v, Side.LOWER)
            eps_poisson = profiles(rounds.pair, 1.0 / rounds.steps, rounds.steps, direction).epsilon_upper(target_poisson)
            if math.isinf(eps_poisson):
                raise NotApplicable(f"the Poisson profile gives ε = ∞ at δ/γ→ = {target_poisson:g}")
            eps_poisson = max(eps_poisson, 0.0)
            value = arb_bound((arb(eps_poisson).expm1() / lam_v).log1p(), Side.UPPER)
    else:
        start = _add_start(rounds, target, profiles)
        _, value = smallest_passing(
            lambda e: decomposition_delta_rounds(rounds.pair, rounds.steps, e, direction, profiles) <= target,
            start, tolerance=max(EPSILON_TOLERANCE, _RELATIVE_TOLERANCE * start),
        )
    return Bound(value, Side.UPPER, direction, Quantity.EPSILON, target, METHOD, CITATION)
