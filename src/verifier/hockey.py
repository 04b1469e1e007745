"""δ(ε) of a discrete privacy-loss distribution, rigorously bracketed (the compiled kernel's wrapper).

    δ(ε) = Σ_i p_i (1 − e^{ε − ℓ_i})_+ + p_∞        (Steinke 2022, Prop 7, form (7.2))

The losses ℓ_i, masses p_i and ε are taken as exact binary64 numbers; the kernel returns a
compensated sum and a bound on its floating-point error, and this wrapper rounds the two ends
outward. Slow twin: :func:`verifier.reference.pairs.discrete_pld_delta` (mpmath).

For many ε against one PLD, :func:`validated_delta_many` uses suffix sums instead, O(n + m·log n)
where the kernel is O(n·m) (a privacy-profile construction queries every grid point).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._fast.hockey import hockey_stick_sum
from verifier._types import Bracket
from verifier._validation import check_nonnegative, check_real_array, check_sorted
from verifier.errors import InvalidArgument, NumericalFailure

__all__ = ["discrete_pld_delta", "validated_delta", "validated_delta_many", "HEAD_TERMS"]


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


#: Terms just above ε summed one by one in :func:`validated_delta_many` (the rest by suffix sums).
HEAD_TERMS = 16
_U = 2.0**-53
#: Relative error allowed for one libm/NumPy exp or expm1 (their documented accuracy is 1-4 ulp).
_EXP_REL = 4 * _U
#: Loss span beyond which the suffix sums could overflow or underflow: the kernel is used instead.
_MAX_SPAN = 600.0
#: A suffix-sum value whose error bound exceeds this share of it is recomputed by the kernel.
_LOOSE = 2.0**-20


def _gamma(k: int) -> float:
    """γ_k = k·u/(1 − k·u), the relative error bound of recursive summation of k non-negative terms
    (Higham, Accuracy and Stability of Numerical Algorithms, §4.2), rounded up."""
    return up(k * _U / (1 - k * _U)) * (1 + 4 * _U)


def validated_delta_many(
    losses: npt.NDArray[np.float64], probs: npt.NDArray[np.float64], epsilons: npt.NDArray[np.float64], infinite_mass: float
) -> Bracket:
    """:func:`validated_delta` (same validated inputs, same promise) by suffix sums, for many ε.

    With s the first index where ℓ_s > ε and c = ℓ_0, δ(ε) − p_∞ = Σ_{s <= i < s+K} p_i(1 − e^{ε−ℓ_i})
    + [S1(s + K) − e^{ε−c}·S2(s + K)], S1(k) = Σ_{i>=k} p_i, S2(k) = Σ_{i>=k} p_i e^{c−ℓ_i}, K =
    :data:`HEAD_TERMS`. The head is summed term by term (expm1, no cancellation); in the bracket
    every term has ℓ_i − ε >= ℓ_{s+K} − ℓ_s, so the subtraction cancels at most a factor
    1/(1 − e^{−(ℓ_{s+K} − ℓ_s)}). Error bound (ℓ, p, ε exact doubles; u = 2^-53, γ_k as in
    :func:`_gamma`): head terms 8u each as in the kernel, plus γ_K for their sum; ŵ_i = p_i·exp(c − ℓ_i)
    within τ = (|c − ℓ_i| + 1)u + 4u + u (the argument's rounding, exp, the product); the suffix sums
    within γ_n (and τ for S2); e^{ε−c} within (|ε − c| + 1)u + 4u; one u for the product and one for
    the subtraction. As e^{ε−c}·S2(k) <= S1(k), the bracket's error is at most (ρ1 + ρx)·S1 +
    u·|result|. A product that underflows has no relative bound, only 2^-1075 absolute: n·2^-1074
    for the head and S1, and n·2^-1074·e^{ε−c} for S2 (each ŵ_i's underflow is scaled back up).
    Where that bound exceeds 2^-20 of the value, or the losses span more than 600 (exp would leave
    the normal range), the kernel's O(n) sum is used for that ε."""
    n, eps = losses.size, epsilons
    if n == 0 or eps.size == 0 or losses[-1] - losses[0] > _MAX_SPAN:
        return validated_delta(losses, probs, eps, infinite_mass)
    c = float(losses[0])
    span = float(losses[-1]) - c
    with np.errstate(under="ignore"):
        weights = probs * np.exp(c - losses)
    s1 = np.concatenate([np.cumsum(probs[::-1])[::-1], [0.0]])
    s2 = np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
    start = np.searchsorted(losses, eps, side="right")
    head_idx = start[:, None] + np.arange(HEAD_TERMS)[None, :]
    inside = head_idx < n
    head_idx = np.minimum(head_idx, n - 1)
    terms = np.where(inside, probs[head_idx] * -np.expm1(np.minimum(eps[:, None] - losses[head_idx], 0.0)), 0.0)
    head = terms.sum(axis=1)
    k = np.minimum(start + HEAD_TERMS, n)
    scale = np.exp(np.minimum(eps - c, span))
    rest = s1[k] - scale * s2[k]
    total = head + rest
    g_n = _gamma(n + 1)
    tau = (span + 6.0) * _U
    rho1 = g_n
    rho2 = tau + g_n + tau * g_n
    rho_e = (np.abs(eps - c) + 5.0) * _U
    rho_x = (1 + rho_e) * (1 + rho2) * (1 + _U) - 1
    head_err = (8 * _U + _gamma(HEAD_TERMS)) * head
    rest_err = (rho1 + rho_x) * s1[k] / (1 - rho1)
    underflow = n * 2.0**-1074 * (1.0 + 2.0 * scale)
    error = (head_err + rest_err + _U * np.abs(rest) + _U * np.abs(total) + underflow) * (1 + 16 * _U)
    redo = (error > _LOOSE * np.abs(total)) | (eps - c < -_MAX_SPAN)
    upper = up(up(total + error) + infinite_mass)
    lower = np.maximum(0.0, down(down(total - error) + infinite_mass))
    if redo.any():
        exact = validated_delta(losses, probs, np.ascontiguousarray(eps[redo]), infinite_mass)
        upper[redo], lower[redo] = exact.upper, exact.lower
    return Bracket(lower, np.maximum(upper, lower))
