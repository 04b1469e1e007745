"""Hypothesis-testing privacy: rigorous brackets on the trade-off curve β(α) and on TPR at FPR α.

An attacker who sees the output and tests "the record is out" (null) against "the record is in"
(alternative) with false-positive rate α has at best the true-positive rate

    TPR(α) = inf_{ε ∈ ℝ} ( δ(ε) + e^ε·α )   (capped at 1),      β(α) = 1 − TPR(α),

where δ(ε) is the hockey-stick curve of the direction asked (REMOVE: H_{e^ε}(P‖Q), ADD: H_{e^ε}(Q‖P);
in both the first argument is the output law *with* the record), for every real ε, negative ones
included. This is the convex conjugate of the trade-off function (Dong, Roth & Su 2022, Prop 2.12
and Prop 2.13; derived in ``proofs/tradeoff_conversion.py`` with the direction of every inequality).

Which bound gives which side (proofs/tradeoff_conversion.py, Lemmas 2 and 3):

- an UPPER bound on δ at *any* ε gives an UPPER bound on TPR there (the infimum is below each of its
  terms), so a finite set of ε errs on the safe side, and an upper bound on TPR is a LOWER bound on β;
- a LOWER bound on δ gives a LOWER bound on TPR only if it holds at *every* ε and its infimum is taken
  over all of ℝ. For a DOMINATED PLD, ε ↦ δ(ε) + e^ε·α is convex and piecewise affine in t = e^ε
  with kinks only at the grid losses, so the infimum is attained at a grid loss or as ε → −∞: a
  finite, exact evaluation (:func:`pld_tpr`).

Every evaluation is rounded toward the side it bounds (:mod:`verifier._directed`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._types import Bracket, Dominance
from verifier._validation import check_real_array
from verifier.errors import InvalidArgument
from verifier.hockey import validated_delta
from verifier.pld.bracket import PLDBracket
from verifier.pld.distribution import DiscretePLD, _discounted_cumsum, sum_down

__all__ = ["DEFAULT_FPRS", "pld_tpr", "tpr_bracket", "beta_bracket", "check_fprs", "staircase_tpr"]

#: The false-positive rates ``verifier tradeoff`` reports by default.
DEFAULT_FPRS = (1e-4, 1e-3, 1e-2, 0.1)

#: Relative error allowed for α·e^ℓ: libm's exp within 2 ulp (a generous allowance for its
#: documented 1-ulp accuracy, as in the hockey-stick kernel), the product within 1 ulp.
_EXP_REL = 4.0 * 2.0**-53

#: First half-width (in grid points) of the window of kinks evaluated rigorously around the float
#: minimiser; widened until the convexity certificate of :func:`_window_certified` holds.
_FIRST_WINDOW = 16
#: Largest half-width tried: past it the unproven outside is bounded by monotonicity (:func:`_window_lower`).
_LAST_WINDOW = 1024


def check_fprs(name: str, values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """False-positive rates: a non-empty 1-D array of numbers in [0, 1]."""
    alphas = np.atleast_1d(check_real_array(name, values))
    if alphas.ndim != 1 or alphas.size == 0:
        raise InvalidArgument(name, values, "must be one number or a non-empty list of numbers in [0, 1]")
    bad = (alphas < 0.0) | (alphas > 1.0)
    if bad.any():
        raise InvalidArgument(name, float(alphas[bad][0]), "must be a false-positive rate in [0, 1]")
    return alphas


def _scaled_exp(alpha: float, losses: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(lower, upper) bounds on α·e^ℓ at each loss (+∞ where it overflows)."""
    with np.errstate(over="ignore"):
        value = alpha * np.exp(losses)
    lower = np.maximum(0.0, down(value * (1.0 - _EXP_REL)))
    upper = up(value * (1.0 + _EXP_REL))
    return lower, np.where(np.isfinite(value), upper, np.inf)


def _float_objective(pld: DiscretePLD) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Float estimates of δ(ℓ_J) at every grid loss, and the losses: δ(ℓ_J) = A_J − C_J + p_∞ with
    A_J = Σ_{i>=J} p_i, C_J = Σ_{i>=J} p_i e^{ℓ_J − ℓ_i} (Steinke 2022, Prop 7). Places the window
    only; the rigorous kernel decides."""
    p = pld.probs[::-1]
    tail = np.cumsum(p)[::-1]
    weighted = _discounted_cumsum(p, pld.step)[::-1]
    return np.maximum(tail - weighted, 0.0) + pld.infinite_mass, pld.losses()


def _window_certified(lower: npt.NDArray[np.float64], upper: npt.NDArray[np.float64], at_start: bool, at_end: bool) -> tuple[bool, bool]:
    """Whether the convex function g, bracketed at consecutive kinks by [lower, upper], is proven to
    have no value below the window's smallest lower bound to the left (resp. right) of the window: at
    the left end (unless it is the grid's first point) some kink further in has g <= g(left end)
    (upper <= lower), so by convexity g only grows to the left; the same on the right
    (proofs/tradeoff_conversion.py, Lemma 3)."""
    left = at_start or bool((upper[1:] <= lower[0]).any())
    right = at_end or bool((upper[:-1] <= lower[-1]).any())
    return left, right


def _window_lower(
    pld: DiscretePLD,
    g_lo: npt.NDArray[np.float64],
    delta_lo: npt.NDArray[np.float64],
    at_lo: npt.NDArray[np.float64],
    start: int,
    left: bool,
    right: bool,
) -> float:
    """A lower bound on inf_ε g: the window's smallest lower end, and where convexity did not prove
    the outside larger, the monotone bounds there: left of the window g(t) >= δ(t_a) (δ falls with t,
    αt >= 0), right of it g(t) >= p_∞ + α·t_b (δ >= p_∞). At the grid's first point the limit ε → −∞
    (total mass) joins, the infimum on (−∞, ℓ_0] when g rises there (Lemma 3)."""
    value = float(np.min(g_lo))
    if start == 0:
        value = min(value, down(sum_down(pld.probs) + pld.infinite_mass))
    elif not left:
        value = min(value, float(np.asarray(delta_lo)[0]))
    if not right:
        value = min(value, float(down(pld.infinite_mass + at_lo[-1])))
    return value


def pld_tpr(pld: DiscretePLD, alphas: float | npt.ArrayLike) -> npt.NDArray[np.float64] | float:
    """One-sided bound on TPR(α) = inf_{ε∈ℝ} (δ(ε) + e^ε α) of the mechanism ``pld`` stands for: UPPER
    for a DOMINATING PLD, LOWER for a DOMINATED one (proofs/tradeoff_conversion.py, Thm 1).

    Both sides evaluate g(ε) = δ_PLD(ε) + α e^ε rigorously at the grid losses near the float minimiser.
    UPPER: TPR <= g(ε) at every ε (Lemma 2), so the smallest upper end is an upper bound. LOWER:
    g is convex and piecewise affine in e^ε with kinks at the grid losses (Lemma 3), so its
    infimum over ℝ is its smallest value at a grid loss or its limit Σp_i + p_∞ as ε → −∞; the window
    of evaluated losses grows until convexity proves nothing outside it is smaller (or, past
    _LAST_WINDOW, the outside is bounded by monotonicity, :func:`_window_lower`). The LOWER end is
    also at least α (a coin flip that says "in" with probability α), both ends at most 1.
    """
    scalar = np.ndim(alphas) == 0
    fprs = check_fprs("fpr", alphas)
    dominating = pld.dominance is Dominance.DOMINATING
    estimate, losses = _float_objective(pld)
    n = losses.size
    out = np.empty(fprs.size)
    for k, alpha in enumerate(fprs):
        with np.errstate(over="ignore"):
            centre = int(np.argmin(estimate + alpha * np.exp(losses)))
        half = _FIRST_WINDOW
        while True:
            a, b = max(0, centre - half), min(n, centre + half + 1)
            bracket = validated_delta(losses, pld.probs, np.ascontiguousarray(losses[a:b]), pld.infinite_mass)
            at_lo, at_hi = _scaled_exp(float(alpha), losses[a:b])
            g_hi = up(np.asarray(bracket.upper) + at_hi)
            g_lo = down(np.asarray(bracket.lower) + at_lo)
            if dominating:
                out[k] = min(1.0, float(np.min(g_hi)))
                break
            left, right = _window_certified(g_lo, g_hi, a == 0, b == n)
            if (left and right) or half >= _LAST_WINDOW:
                out[k] = min(1.0, max(float(alpha), _window_lower(pld, g_lo, bracket.lower, at_lo, a, left, right)))
                break
            half *= 4
    return float(out[0]) if scalar else out


def tpr_bracket(bracket: PLDBracket, alphas: float | npt.ArrayLike) -> Bracket:
    """[LOWER, UPPER] bound on TPR at false-positive rate(s) ``alphas`` in the bracket's direction,
    from its DOMINATED and DOMINATING PLDs (:func:`pld_tpr`)."""
    return Bracket(pld_tpr(bracket.dominated, alphas), pld_tpr(bracket.dominating, alphas))


def beta_bracket(bracket: PLDBracket, alphas: float | npt.ArrayLike) -> Bracket:
    """[LOWER, UPPER] bound on the trade-off β(α) = 1 − TPR(α): an upper bound on TPR gives the
    lower end, a lower bound on TPR the upper end, each rounded outward."""
    tpr = tpr_bracket(bracket, alphas)
    lower = np.maximum(0.0, down(1.0 - np.asarray(tpr.upper, dtype=float)))
    upper = np.minimum(1.0, up(1.0 - np.asarray(tpr.lower, dtype=float)))
    if np.ndim(alphas) == 0:
        return Bracket(float(lower), float(upper))
    return Bracket(lower, upper)



def staircase_tpr(
    epsilons: npt.ArrayLike, delta_lower: npt.ArrayLike, delta_upper: npt.ArrayLike, alpha: float
) -> Bracket:
    """[LOWER, UPPER] bound on TPR(α) from brackets [delta_lower, delta_upper] on δ at finitely many
    ascending ε (any method's; proofs/tradeoff_conversion.py, Lemmas 1 and 4). UPPER: the smallest
    δ_U(ε_i) + e^{ε_i}·α. LOWER: δ is non-increasing in ε, so on [ε_i, ε_{i+1}] δ(ε) + e^ε α >=
    δ_L(ε_{i+1}) + e^{ε_i} α, below ε_0 it is >= δ_L(ε_0), above ε_n >= e^{ε_n} α: the smallest of
    these (first order in the grid spacing, exact only in the limit). Ends clipped to [α, 1]."""
    eps = check_real_array("epsilons", epsilons)
    low = np.asarray(delta_lower, dtype=float)
    high = np.asarray(delta_upper, dtype=float)
    if eps.ndim != 1 or eps.size == 0 or low.shape != eps.shape or high.shape != eps.shape or np.any(np.diff(eps) <= 0):
        raise InvalidArgument("epsilons", f"{eps.size} points", "must be a strictly ascending grid with one δ bracket per point")
    fpr = float(check_fprs("fpr", alpha)[0])
    at_lo, at_hi = _scaled_exp(fpr, eps)
    upper = float(np.min(up(high + at_hi)))
    steps = down(low[1:] + at_lo[:-1])
    lower = min(float(low[0]), float(np.min(steps)) if steps.size else math.inf, float(at_lo[-1]))
    return Bracket(min(1.0, max(fpr, lower)), max(fpr, min(1.0, upper)))
