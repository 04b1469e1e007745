"""The closed-form theorems of the random-allocation paper (Feldman & Shenfeld 2025, arXiv
2502.08202) as rigorous bounds, and the Chua et al. lower bound.

Every function takes an :class:`~verifier.schemes.Allocation`, a target and a
:class:`~verifier._types.Direction`, and returns a :class:`~verifier._types.Bound` whose side says
what it is; a theorem outside its conditions raises :class:`~verifier.errors.NotApplicable`.
The Poisson profiles the theorems need come from the PLD engine's DOMINATING side
(:mod:`verifier.analytic.poisson_profile`); tests may pass any other rigorous ``profiles`` source.
"""

from verifier.analytic import chua_lower, combined, decomposition, recursive, truncated_poisson
from verifier.analytic.chua_lower import chua_lower_delta, chua_lower_epsilon
from verifier.analytic.combined import UPPER_BOUNDS, combined_epsilon
from verifier.analytic.decomposition import decomposition_delta, decomposition_epsilon
from verifier.analytic.poisson_profile import PoissonProfile, ProfileSource, pld_poisson_profile
from verifier.analytic.recursive import recursive_delta, recursive_epsilon
from verifier.analytic.rounds import Rounds, rounds_of
from verifier.analytic.truncated_poisson import truncated_poisson_delta, truncated_poisson_epsilon

__all__ = [
    "chua_lower",
    "combined",
    "decomposition",
    "recursive",
    "truncated_poisson",
    "chua_lower_delta",
    "chua_lower_epsilon",
    "UPPER_BOUNDS",
    "combined_epsilon",
    "decomposition_delta",
    "decomposition_epsilon",
    "PoissonProfile",
    "ProfileSource",
    "pld_poisson_profile",
    "recursive_delta",
    "recursive_epsilon",
    "Rounds",
    "rounds_of",
    "truncated_poisson_delta",
    "truncated_poisson_epsilon",
]
