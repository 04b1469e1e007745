"""Poisson subsampling of an existing pair of PLD brackets (REMOVE and ADD), both directions.

Lemma A.4 of the random-allocation PLD paper transforms the privacy-ratio CDFs of (P, Q) into those
of the subsampled pair (λP + (1 − λ)Q, Q) and needs both F_{P,Q} and F_{Q,P}. It holds for variables
that *stochastically* dominate the PLDs; verifier's PLDs are one-sided in Blackwell's sense
instead (connect-the-dots is not a stochastic bound), so this module applies the same identity at
the level of privacy profiles, where the one-sided promises are pointwise bounds (Balle, Barthe &
Gaboardi 2018, Thm 2; Feldman & Shenfeld, Claim D.3; :mod:`verifier.pairs.subsampled`):

- REMOVE: H_κ(M‖Q) = 1 − κ for κ <= 1 − λ, else λ·H_{κ'}(P‖Q), ln κ' = log1p(expm1(ε)/λ);
- ADD: H_κ(Q‖M) = β·H_{κ''}(Q‖P), β = 1 − κ(1 − λ) > 0, ln κ'' = ε + ln λ − ln β; 0 for β <= 0.

H(P‖Q) is bracketed by the REMOVE bracket's two PLDs and H(Q‖P) by the ADD bracket's (each PLD's δ
is one-sided at every ε, and δ is non-increasing in ε, so the transformed arguments are rounded
toward the safe side). These rigorous profile bounds at the output grid points feed the
connect-the-dots / gap-corrected constructions of :mod:`verifier.pld.construction`, whose proofs
only need such bounds. Cost: one ball-arithmetic argument per output grid point, and one suffix-sum
pass over the input PLD for all of them (:func:`verifier.hockey.validated_delta_many`).
"""

from __future__ import annotations

import numpy as np
from flint import arb

from verifier._directed import ARB_PRECISION_BITS, arb_bound, down, loss_index, up, with_precision
from verifier._types import Direction, Dominance, Side
from verifier._validation import check_unit
from verifier.errors import AccuracyNotReachable, IncompatibleObjects, InvalidArgument
from verifier.pld.bracket import PLDBracket
from verifier.pld.construction import MAX_GRID, pld_sides_from_profile

__all__ = ["subsample", "subsample_direction"]


def subsample(remove: PLDBracket, add: PLDBracket, rate: float, *, max_grid: int = MAX_GRID) -> tuple[PLDBracket, PLDBracket]:
    """(REMOVE, ADD) PLD brackets of the Poisson-subsampled mechanism at rate λ = ``rate``, from the
    REMOVE and ADD PLD brackets of the mechanism (same grid step); see the module docstring."""
    if not (isinstance(remove, PLDBracket) and isinstance(add, PLDBracket)):
        raise InvalidArgument("pld", (type(remove).__name__, type(add).__name__), "both must be PLDBracket")
    if remove.direction is not Direction.REMOVE or add.direction is not Direction.ADD:
        raise InvalidArgument("direction", (remove.direction.value, add.direction.value), "need (REMOVE, ADD) brackets")
    if remove.step != add.step:
        raise IncompatibleObjects("grid step", remove.step, add.step)
    return subsample_direction(remove, rate, max_grid=max_grid), subsample_direction(add, rate, max_grid=max_grid)


def subsample_direction(base: PLDBracket, rate: float, *, max_grid: int = MAX_GRID) -> PLDBracket:
    """The PLD bracket of the Poisson-subsampled mechanism at rate λ = ``rate`` in ``base``'s direction
    (REMOVE needs only the REMOVE bracket of the mechanism, ADD only the ADD one)."""
    if not isinstance(base, PLDBracket):
        raise InvalidArgument("pld", type(base).__name__, "must be a PLDBracket")
    lam = check_unit("rate", rate)
    if lam == 0.0:
        raise InvalidArgument("rate", rate, "must lie in (0, 1] (rate 0 releases nothing)")
    side = _remove_side if base.direction is Direction.REMOVE else _add_side
    return side(base, lam, base.step, max_grid)


def _span(lo_loss: float, hi_loss: float, h: float, max_grid: int) -> np.ndarray:
    j_lo = int(loss_index(np.array([lo_loss]), h, Dominance.DOMINATED)[0]) - 1
    j_hi = int(loss_index(np.array([hi_loss]), h, Dominance.DOMINATING)[0]) + 1
    if j_hi - j_lo + 1 > max_grid:
        raise AccuracyNotReachable(f"the subsampled loss range needs {j_hi - j_lo + 1} grid points, above max_grid={max_grid}")
    return np.arange(j_lo, j_hi + 1)


def _remove_side(base: PLDBracket, lam: float, h: float, max_grid: int) -> PLDBracket:
    """λ·H_{κ'}(P‖Q) (or 1 − κ) bracketed at every grid loss of the subsampled REMOVE PLD."""
    top = max(base.dominating.losses()[-1], base.dominated.losses()[-1])
    phi_top = float(np.log1p(lam * np.expm1(top))) if lam < 1 else top
    bottom = float(np.log1p(-lam)) if lam < 1 else min(base.dominating.losses()[0], base.dominated.losses()[0])
    js = _span(bottom, phi_top + h, h, max_grid)
    lower, upper = np.empty(js.size), np.empty(js.size)
    shifted_lo, shifted_hi, plain = [], [], []
    with with_precision(ARB_PRECISION_BITS):
        lam_b = arb(lam)
        for i, j in enumerate(js):
            eps = arb(float(j * h))
            km1 = eps.expm1()  # κ − 1
            linear = -km1  # 1 − κ
            if km1 <= -lam_b:
                plain.append(i)
                lower[i], upper[i] = arb_bound(linear, Side.LOWER), arb_bound(linear, Side.UPPER)
                continue
            arg = (km1 / lam_b).log1p()  # ln κ'
            shifted_lo.append(arb_bound(arg, Side.LOWER))
            shifted_hi.append(arb_bound(arg, Side.UPPER))
            if not km1 > -lam_b:  # the two forms meet (at value λ) where κ = 1 − λ
                lower[i], upper[i] = arb_bound(linear, Side.LOWER), arb_bound(linear, Side.UPPER)
            else:
                lower[i], upper[i] = np.inf, -np.inf
    rest = np.setdiff1d(np.arange(js.size), plain)
    d_up = base.dominating.delta(np.array(shifted_lo), many=True)  # δ non-increasing: the smaller argument for the upper end
    d_lo = base.dominated.delta(np.array(shifted_hi), many=True)
    upper[rest] = np.maximum(np.where(np.isfinite(upper[rest]), upper[rest], -np.inf), up(up(lam * d_up)))
    lower[rest] = np.minimum(np.where(np.isfinite(lower[rest]), lower[rest], np.inf), down(lam * d_lo))
    upper, lower = np.minimum(upper, 1.0), np.maximum(lower, 0.0)
    inf_lower = max(0.0, down(lam * base.dominated.infinite_mass))
    dominating, dominated = pld_sides_from_profile(Direction.REMOVE, h, int(js[0]), lower, upper, inf_lower)
    return PLDBracket(dominating, dominated)


def _add_side(base: PLDBracket, lam: float, h: float, max_grid: int) -> PLDBracket:
    """β·H_{κ''}(Q‖P) (or 0) bracketed at every grid loss of the subsampled ADD PLD."""
    bottom_in = min(base.dominating.losses()[0], base.dominated.losses()[0])
    top_in = max(base.dominating.losses()[-1], base.dominated.losses()[-1])
    # ADD loss of the subsampled pair: −ln(1 − λ + λ e^{−L}) for the base ADD loss L (Lemma A.4).
    low = -float(np.log1p(lam * np.expm1(-bottom_in)))
    high = -float(np.log1p(-lam)) if lam < 1 else -float(np.log1p(lam * np.expm1(-top_in)))
    js = _span(low - h, high, h, max_grid)
    lower, upper = np.zeros(js.size), np.zeros(js.size)
    args_lo, args_hi, betas_lo, betas_hi, where = [], [], [], [], []
    with with_precision(ARB_PRECISION_BITS):
        lam_b = arb(lam)
        for i, j in enumerate(js):
            eps = arb(float(j * h))
            beta = 1 - eps.exp() * (1 - lam_b)
            if beta <= 0:
                continue  # H = 0 exactly
            if not beta > 0:  # β's sign uncertain: the profile is in [0, β⁺·1]
                upper[i] = max(0.0, arb_bound(beta, Side.UPPER))
                continue
            arg = eps + lam_b.log() - beta.log()
            where.append(i)
            args_lo.append(arb_bound(arg, Side.LOWER))
            args_hi.append(arb_bound(arg, Side.UPPER))
            betas_lo.append(arb_bound(beta, Side.LOWER))
            betas_hi.append(arb_bound(beta, Side.UPPER))
    if where:
        d_up = base.dominating.delta(np.array(args_lo), many=True)
        d_lo = base.dominated.delta(np.array(args_hi), many=True)
        upper[where] = up(up(np.array(betas_hi) * d_up))
        lower[where] = np.maximum(0.0, down(np.maximum(np.array(betas_lo), 0.0) * d_lo))
    upper, lower = np.minimum(upper, 1.0), np.maximum(lower, 0.0)
    dominating, dominated = pld_sides_from_profile(Direction.ADD, h, int(js[0]), lower, upper, 0.0)
    return PLDBracket(dominating, dominated)
