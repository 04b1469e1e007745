"""δ(ε) of a discrete privacy-loss distribution, rigorously bracketed (the compiled kernel's wrapper).

    δ(ε) = Σ_i p_i (1 − e^{ε − ℓ_i})_+ + p_∞        (Steinke 2022, Prop 7, form (7.2))

The losses ℓ_i, masses p_i and ε are taken as exact binary64 numbers; the kernel returns a
compensated sum and a bound on its floating-point error, and this wrapper rounds the two ends
outward. Slow twin: :func:`verifier.reference.pairs.discrete_pld_delta` (mpmath).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._fast.hockey import hockey_stick_sum
from verifier._types import Bracket
from verifier._validation import check_nonnegative, check_real_array, check_sorted
from verifier.errors import InvalidArgument, NumericalFailure

__all__ = ["discrete_pld_delta", "validated_delta"]


def discrete_pld_delta(
    losses: npt.ArrayLike,
    probs: npt.ArrayLike,
    epsilons: npt.ArrayLike,
    infinite_mass: float = 0.0,
) -> Bracket:
    """Bracket of δ(ε) for every ε in ``epsilons`` (array bracket, one entry per ε).

    ``losses`` must be finite and sorted ascending, ``probs`` non-negative of the same length;
    ``infinite_mass`` is the mass at loss +∞ (it counts in full at every ε). The masses need not sum
    to one (a DOMINATED PLD may have dropped mass).
    """
    ell = check_sorted("losses", check_real_array("losses", losses))
    p = check_real_array("probs", probs)
    eps = check_real_array("epsilons", epsilons)
    p_inf = check_nonnegative("infinite_mass", infinite_mass)
    if p.shape != ell.shape:
        raise InvalidArgument("probs", f"{p.size} masses", f"must match the number of losses ({ell.size})")
    if (p < 0).any():
        raise InvalidArgument("probs", "negative mass", "masses must be >= 0")
    return validated_delta(ell, p, eps, p_inf)


def validated_delta(
    losses: npt.NDArray[np.float64], probs: npt.NDArray[np.float64], epsilons: npt.NDArray[np.float64], infinite_mass: float
) -> Bracket:
    """:func:`discrete_pld_delta` for arrays a caller has already validated once (contiguous float64,
    finite, ``losses`` sorted, ``probs`` >= 0 of the same length; a
    :class:`~verifier.pld.distribution.DiscretePLD` holds such arrays): the O(n) checks are skipped,
    which is most of the cost of the many δ queries of an ε root search (issue 17)."""
    eps, p_inf = epsilons, infinite_mass
    total = np.empty_like(eps)
    error = np.empty_like(eps)
    if hockey_stick_sum(losses, probs, eps, total, error) != 0:
        raise NumericalFailure("hockey_stick_sum rejected its buffers")  # pragma: no cover
    upper = up(up(total + error) + p_inf)  # each `up` covers the rounding of the addition before it
    lower = np.maximum(0.0, down(down(total - error) + p_inf))
    return Bracket(lower, np.maximum(upper, lower))
