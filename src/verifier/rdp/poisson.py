"""RDP of one Poisson-subsampled step (rate λ) of a dominating pair, both directions.

REMOVE, integer α >= 2, EXACT (Steinke 2022, Thm 34 and its proof identity, after Mironov, Talwar &
Zhang 2019): with X = P/Q under Q and m_k = E_Q[X^k],

    e^{(α−1) D_α(λP + (1−λ)Q ‖ Q)} = E_Q[(1 − λ + λX)^α] = Σ_k C(α,k)(1−λ)^{α−k} λ^k m_k
                                   = α!·[x^α] (Σ_i (1−λ)^i x^i/i!)·(Σ_k λ^k m_k x^k/k!),

a product of two positive series. Since Σ_k C(α,k)(1−λ)^{α−k}λ^k = 1, it is evaluated as
1 + α!·[x^α] (Σ_i (1−λ)^i x^i/i!)·(Σ_{k>=2} λ^k (m_k − 1) x^k/k!) (every m_k − 1 >= 0 by Jensen), so
that ln(1 + S) keeps full relative accuracy when the divergence is tiny; the product is computed for
all orders at once by the log-domain kernel.

ADD, integer α >= 2, UPPER (Thm 35, whose proof needs α >= 2 — notes §6.5 CAVEAT):
D_α(Q ‖ λP + (1−λ)Q) <= max{D_α(λP + (1−λ)Q ‖ Q), D_α(λQ + (1−λ)P ‖ P)}, the second term being the
REMOVE formula for the swapped pair.

Fractional orders: for the Gaussian pair in the REMOVE direction, EXACT by rigorous numerical
integration in ball arithmetic of E_Q[(1 − λ + λX)^α] (arb's certified Gauss–Legendre integration on
a finite interval plus explicit Gaussian tail bounds, see :func:`gaussian_remove_fractional`); for
Gaussian ADD with α >= 2 by Thm 35 from that value (the Gaussian pair is symmetric); everywhere else
by the log-convexity chord between neighbouring integer orders
(:mod:`verifier.rdp.interpolation`), which is valid for every α > 1 (so no result is used below its
proven range: for α in (1, 2) this is D_α <= D_2).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
from flint import acb, arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier._validation import check_unit
from verifier.errors import InvalidArgument, NumericalFailure
from verifier.pairs import DominatingPair, Gaussian
from verifier.rdp.curve import RdpCurve, check_orders
from verifier.rdp.interpolation import interpolate
from verifier.rdp.moments import log_moments_upper
from verifier.rdp.series import log_product

__all__ = ["poisson_curve", "poisson_remove_integer", "gaussian_remove_fractional", "CITATION"]

CITATION = "Steinke 2022, Thm 34 (exact remove) / Thm 35 (add); log-convex interpolation for fractional orders"

#: Relative tolerance requested from the certified integrator (the returned ball is rigorous
#: whatever it reaches; this only sets how narrow it is).
_QUAD_REL_TOL = 2.0**-70
#: The integral over y ~ N(0, 1) is taken on [−_TAIL, α·Δ/σ + _TAIL]; the two tails outside are
#: bounded by Φ(−_TAIL) and e^{α(α−1)Δ²/(2σ²)}·Φ(−_TAIL) (see gaussian_remove_fractional).
_TAIL = 40


def poisson_remove_integer(pair: DominatingPair, rate: float, orders: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Upper bounds (exact up to rounding) on D_α(λP + (1−λ)Q ‖ Q) at integer orders >= 2 (Thm 34)."""
    lam = check_unit("rate", rate)
    n = int(orders.max()) + 1
    log_m = log_moments_upper(pair, Direction.REMOVE, n)
    infinite = np.flatnonzero(np.isinf(log_m))
    cut = int(infinite[0]) if infinite.size else n  # orders >= cut involve an infinite moment
    idx = np.arange(cut)
    log_a = np.empty(cut)
    log_b = np.empty(cut)
    with with_precision():
        one_minus = (1 - arb(lam)).log() if lam < 1.0 else None
        log_lam = arb(lam).log()
        for i in idx:
            lg = arb(int(i) + 1).lgamma()
            log_a[i] = 0.0 if i == 0 else (-math.inf if one_minus is None else arb_bound(i * one_minus - lg, Side.UPPER))
            excess = arb(float(log_m[i])).expm1() if i >= 2 else arb(0)  # m_i − 1, rounded up below
            log_b[i] = -math.inf if i < 2 else arb_bound(i * log_lam + excess.log() - lg, Side.UPPER)
    coeff, err = log_product(log_a, log_b, cut)
    values = np.full(len(orders), math.inf)
    with with_precision():
        for n, alpha in enumerate(orders):
            if alpha >= cut:
                continue
            lc = float(coeff[alpha])
            if lc == -math.inf:  # every m_k = 1: P = Q
                values[n] = 0.0
                continue
            log_s = arb(lc) + arb(float(err[alpha])) + arb(int(alpha) + 1).lgamma()
            values[n] = max(0.0, arb_bound(log_s.exp().log1p() / (int(alpha) - 1), Side.UPPER))
    return values


def gaussian_remove_fractional(pair: Gaussian, rate: float, alpha: float) -> float:
    """Upper bound on D_α(λP + (1−λ)Q ‖ Q) for the Gaussian pair and any real α > 1 (certified
    integration; cached, as the refinement of the best order asks for the same orders repeatedly)."""
    lam = check_unit("rate", rate)
    if not alpha > 1.0:
        raise InvalidArgument("alpha", alpha, "a Rényi order must be > 1")
    return _gaussian_remove_fractional(float(pair.sigma), float(pair.sensitivity), lam, float(alpha))


@functools.lru_cache(maxsize=4096)
def _gaussian_remove_fractional(sigma: float, sensitivity: float, lam: float, alpha: float) -> float:
    """Upper bound on D_α(λP + (1−λ)Q ‖ Q) for the Gaussian pair and any real α > 1, by certified
    integration (exact up to the ball's width).

    With y ~ N(0, 1), s = σ/Δ and X = e^{y/s − 1/(2s²)}: E_Q[(1−λ+λX)^α] = ∫ (1−λ+λX(y))^α φ(y) dy.
    On y < −T the base is <= 1, so that tail is <= Φ(−T); on y > α/s + T the base is <= X (X >= 1),
    and ∫_{L}^∞ X^α φ = e^{α(α−1)/(2s²)} Φ(α/s − L), so that tail is <= e^{α(α−1)/(2s²)} Φ(−T).
    """
    with with_precision():
        s = arb(sigma) / arb(sensitivity)
        a = arb(alpha)
        p = arb(lam)
        two_s2 = 2 * s * s
        norm = (2 * arb.pi()).sqrt()

        def integrand(y: acb, analytic: bool) -> acb:
            base = (1 - p) + p * (y / s - 1 / two_s2).exp()
            return (a * base.log(analytic=analytic)).exp() * (-(y * y) / 2).exp() / norm

        hi = math.ceil(alpha * sensitivity / sigma) + _TAIL
        body = acb.integral(integrand, -_TAIL, hi, rel_tol=_QUAD_REL_TOL).real
        tail_mass = (arb(_TAIL) / arb(2).sqrt()).erfc() / 2  # Φ(−T)
        tails = tail_mass * (1 + (a * (a - 1) / two_s2).exp())
        # The tails lie in [0, tails]: widen the ball upward by them, stay in ball arithmetic.
        total = body + arb(tails.upper() / 2, tails.upper() / 2)
        if not total.is_finite():
            raise NumericalFailure(f"certified integration failed for the subsampled Gaussian at alpha={alpha}")
        return max(0.0, arb_bound(total.log() / (a - 1), Side.UPPER))


def poisson_curve(pair: DominatingPair, rate: float, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """RDP curve (UPPER bounds, exact where flagged) of one Poisson-subsampled step of ``pair`` in
    ``direction``; compose with :meth:`RdpCurve.times` for several steps. See the module docstring."""
    grid = check_orders(orders)
    lam = check_unit("rate", rate)
    if lam == 0.0:
        raise InvalidArgument("rate", rate, "must lie in (0, 1] (rate 0 releases nothing)")
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    swapped = pair.swapped()

    def at_integers(ints: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        remove = poisson_remove_integer(pair, lam, ints)
        if direction is Direction.REMOVE:
            return remove, np.ones(len(ints), dtype=bool)
        other = remove if swapped is pair else poisson_remove_integer(swapped, lam, ints)
        return np.maximum(remove, other), np.zeros(len(ints), dtype=bool)

    values, exact = interpolate(grid, at_integers)
    if isinstance(pair, Gaussian):
        for i, alpha in enumerate(grid):
            if alpha.is_integer() or (direction is Direction.ADD and alpha < 2.0):
                continue
            values[i] = min(values[i], gaussian_remove_fractional(pair, lam, float(alpha)))
            exact[i] = direction is Direction.REMOVE
    return RdpCurve(grid, values, exact, direction, CITATION)
