"""The Poisson-subsampling privacy profiles the analytic allocation bounds are stated in terms of.

Every theorem in this package bounds the allocation profile by a Poisson profile δ_{P_{t,λ}(R)}
plus lower-order terms (Feldman & Shenfeld, Thm 4.1, 4.2, 4.6). Those Poisson profiles must be
*upper* bounds, so they come from the DOMINATING side of the PLD engine (:mod:`verifier.pld`),
never from an estimate. A :class:`PoissonProfile` is that one-sided view; any other source of
rigorous upper bounds (e.g. a trusted reference in the tests) can be passed where a
:data:`ProfileSource` is accepted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Protocol

from verifier._types import Direction, Dominance
from verifier.errors import NotApplicable
from verifier.pairs import DominatingPair
from verifier.schemes import Poisson

__all__ = ["informative_rate", "PoissonProfile", "ProfileSource", "PLDPoissonProfile", "pld_poisson_profile", "PLD_STEPS",
           "TARGET_SHARE", "profiles_for"]

#: Loss-grid steps of the PLD engine for the Poisson profiles; each query takes the smaller of the
#: upper bounds (a minimum of upper bounds is one). Neither step is best everywhere with the current
#: engine: 2^-12 is ~10% loose at ε ≈ 0.035 (σ = 5, t = 1000), while 2^-13 gives ε = ∞ at
#: σ <= 0.57, t = 1000, δ ~ 1e-10, where 2^-12 is finite. The steps only affect tightness.
PLD_STEPS = (2.0**-12, 2.0**-13)

#: An ε(δ) search tells the PLD engine that it queries δ down to δ·TARGET_SHARE (the tail term of the
#: recursive bound and the γ← factor of the decomposition's add form put some queries below δ), so
#: the far loss tails of each Poisson step are thinned (pld.schemes.COARSEN_SCALE: their error is
#: about 0.17·TARGET_SHARE·δ in δ). Tightness only: every query stays a rigorous upper bound.
TARGET_SHARE = 1e-3


def informative_rate(rate: float, steps: int) -> bool:
    """Whether a Poisson rate is worth a PLD: rate <= 1/√t′ (random-allocation's guard, notes §3.4).

    Above it the truncated-Poisson and recursive bounds are far from every other method (the
    amplification is gone) and the Poisson PLD is the costliest to build, so those candidates are
    skipped. Skipping a candidate never affects validity, only which bounds are tried.
    """
    return rate * rate * steps <= 1.0


class PoissonProfile(Protocol):
    """Rigorous UPPER bounds on the profile of ``steps`` Poisson(``rate``) steps in one direction."""

    def delta_upper(self, epsilon: float) -> float:
        """An upper bound on δ(ε)."""

    def epsilon_upper(self, delta: float) -> float:
        """An upper bound on ε(δ) (may be +∞)."""


#: (pair, rate, steps, direction) -> profile of Poisson(pair, rate, steps) in that direction.
ProfileSource = Callable[[DominatingPair, float, int, Direction], PoissonProfile]


@dataclass(frozen=True)
class PLDPoissonProfile:
    """The DOMINATING sides of PLD-engine brackets (``.delta(ε)`` / ``.epsilon(δ)`` return
    Brackets), the smallest upper bound over the brackets."""

    plds: tuple

    def delta_upper(self, epsilon: float) -> float:
        return min(float(pld.delta(epsilon).upper) for pld in self.plds)

    def epsilon_upper(self, delta: float) -> float:
        return min(float(pld.epsilon(delta).upper) for pld in self.plds)


@functools.lru_cache(maxsize=512)
def pld_poisson_profile(pair: DominatingPair, rate: float, steps: int, direction: Direction,
                        target_delta: float | None = None) -> PoissonProfile:
    """Upper-bound profile of Poisson(``pair``, ``rate``, ``steps``) in ``direction`` from the PLD
    engine's DOMINATING PLDs at :data:`PLD_STEPS` (cached: the analytic searches query the same
    profile many times). Only the DOMINATING side is built (the DOMINATED one is trivial: its lower
    bounds are never read here), which halves the construction's ball arithmetic. ``target_delta``:
    the smallest δ the caller expects to query (the engine thins the far tails for it; a tightness
    hint, see :data:`TARGET_SHARE`)."""
    try:
        from verifier.pld import scheme_pld  # the sibling math layer; imported when first needed
    except ImportError as exc:  # pragma: no cover - only while the PLD engine is not installed
        raise NotApplicable(f"the PLD engine (verifier.pld) is not available: {exc}") from exc
    scheme = Poisson(pair, rate, steps)
    sides = (Dominance.DOMINATING,)
    return PLDPoissonProfile(
        tuple(scheme_pld(scheme, direction, step=step, sides=sides, target_delta=target_delta) for step in PLD_STEPS)
    )


def profiles_for(profiles: ProfileSource | None, delta: float) -> ProfileSource:
    """``profiles`` if given, else the PLD engine's profiles hinted for an ε(δ) search at ``delta``
    (:func:`pld_poisson_profile` with target δ·:data:`TARGET_SHARE`)."""
    if profiles is not None:
        return profiles
    return functools.partial(pld_poisson_profile, target_delta=delta * TARGET_SHARE)
