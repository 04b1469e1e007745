"""Inputs and outputs of the integer-order series formulas: privacy-ratio moments in, Rényi
divergences out, both rounded toward safety in ball arithmetic.

The moments m_j = E_Q[(P/Q)^j] = e^{(j−1) D_j(P‖Q)} (Feldman & Shenfeld, Thm 4.8; Steinke 2022,
Def 32) are taken from the pair's rigorous Rényi brackets (UPPER ends): every series formula here
has non-negative coefficients in the m_j, so upper bounds on the moments give upper bounds on the
result.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier.pairs import DominatingPair

__all__ = ["log_moments", "log_moments_upper", "renyi_from_log_coefficients", "renyi_upper", "clear_memo"]


@functools.lru_cache(maxsize=65536)
def _renyi_upper_cached(pair: DominatingPair, order: float, direction: Direction) -> float:
    return float(pair.renyi(order, direction).upper)


def clear_memo() -> None:
    """Forget the memoised divergences (for cold-start timings)."""
    _renyi_upper_cached.cache_clear()


def renyi_upper(pair: DominatingPair, order: float, direction: Direction) -> float:
    """UPPER end of the pair's rigorous Rényi bracket at ``order`` (memoised for hashable pairs:
    the order refinement asks for the same orders many times)."""
    try:
        return _renyi_upper_cached(pair, float(order), direction)
    except TypeError:  # an unhashable pair (e.g. one holding arrays)
        return float(pair.renyi(float(order), direction).upper)


def log_moments_upper(pair: DominatingPair, direction: Direction, count: int) -> npt.NDArray[np.float64]:
    """Upper bounds on ln m_j for j = 0 … count−1 in ``direction`` (m_j of the oriented pair).

    m_0 = 1 and m_1 = E_Q[P/Q] = P(supp Q) <= 1 are bounded by 1 (log 0); for j >= 2,
    ln m_j = (j−1)·D_j, rounded up; +∞ where D_j is infinite (P not absolutely continuous w.r.t. Q).
    """
    return log_moments(pair, direction, count, Side.UPPER)


def log_moments(pair: DominatingPair, direction: Direction, count: int, side: Side) -> npt.NDArray[np.float64]:
    """Bounds on ``side`` of ln m_j for j = 0 … count−1 in ``direction``: ln m_j = (j−1)·D_j from
    the pair's rigorous Rényi bracket, rounded toward ``side``. ln m_0 = 0; ln m_1 = ln P(supp Q) is
    taken as 0, which is exact for every pair with P << Q (the only ones whose higher moments are
    finite) and an upper bound otherwise."""
    out = np.zeros(count)
    with with_precision():
        for j in range(2, count):
            if side is Side.UPPER:
                d = renyi_upper(pair, float(j), direction)
            else:
                d = float(pair.renyi(float(j), direction).lower)
            out[j] = math.inf if math.isinf(d) else arb_bound(arb(j - 1) * arb(d), side)
    return out


def renyi_from_log_coefficients(
    orders: npt.NDArray[np.int64],
    log_coeff: npt.NDArray[np.float64],
    log_err: npt.NDArray[np.float64],
    shift: float = 0.0,
    side: Side = Side.UPPER,
) -> npt.NDArray[np.float64]:
    """D_α <= (ln c_α + err_α + ln α! − shift)/(α − 1), rounded up and clipped at 0, where
    e^{(α−1) D_α} = α!·c_α·e^{−shift} and ln c_α is known to within ``err_α``; with
    ``side=Side.LOWER`` the matching lower bound (− err_α, rounded down, clipped at 0)."""
    sign = 1 if side is Side.UPPER else -1
    out = np.empty(len(orders))
    with with_precision():
        for i, a in enumerate(orders):
            lc = float(log_coeff[a])
            if math.isinf(lc):
                out[i] = lc if lc > 0 else 0.0  # −∞: a zero coefficient cannot occur for a_0 = 1
                continue
            numerator = arb(lc) + sign * arb(float(log_err[a])) + arb(int(a) + 1).lgamma() - arb(shift)
            out[i] = max(0.0, arb_bound(numerator / (int(a) - 1), side))
    return out
