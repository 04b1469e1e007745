"""RDP of one step on a fixed-size batch drawn without replacement, under replace-one neighbours:
UPPER bounds at integer orders α >= 2 (fractional orders by the log-convex chord), the smaller of two.

Setting: rate γ = B/n, (P, Q) the step's replace-one pair with ε(j) = max of D_j(P‖Q), D_j(Q‖P). The
output laws of neighbours are M = γA + (1 − γ)R and M' = γA' + (1 − γ)R (R: the element is not in
the batch); A, A', R pairwise differ by one substitution, so their moments are at most the pair's
(joint convexity, Steinke 2022 Lemma 33.6).

1. Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm 9 (subsampling without replacement, replace-one,
   a base mechanism that is (j, ε(j))-RDP for the integers j; the bound holds for every integer α >= 2):

       ε'(α) <= 1/(α−1) · ln(1 + γ² C(α,2) min{4(e^{ε(2)} − 1), e^{ε(2)} min{2, (e^{ε(∞)} − 1)²}}
                               + Σ_{j=3}^{α} γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)} − 1)^j}).

   verifier takes min{2, ·} <= 2 (exact when ε(∞) = ∞, as for the Gaussian; a little loose for
   Laplace). The sum is :func:`verifier.rdp.checkin.wbk_log_moment`, rounded up.

2. Group privacy (Steinke 2022, §6.7, last paragraph, through Lemma 33.7): for every α' > α,

       D_α(M‖M') <= α'/(α'−1) · D_{α(α'−1)/(α'−α)}(M‖R) + D_{α'}(R‖M').

   (The source prints the subscript's denominator as α; Lemma 33.7 gives α' − α: notes §6.7.)
   D_β(M‖R) <= Thm 34's sum at the integer ⌈β⌉ (monotonicity, Lemma 33.3), D_{α'}(R‖M') <= Thm 35's
   max (:func:`verifier.rdp.poisson.poisson_curve`, ADD). α' runs over the integers α+1 … 2α.

Poisson sampling under replace-one has the same mixture structure with R the output without the
element, so bound 2 applies with (P, Q) the add/remove pair of one record (A and R differ by a
removal; Thm 34 is then exact for D(M‖R)) — the use Steinke's paragraph describes;
:func:`poisson_replace_one_curve`. (WBK's Thm 9 is proven for sampling without replacement only.)

Neither bound is tight: the PLD method's bracket is far narrower (README, "Fixed-size batches").
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._directed import up
from verifier._types import Direction
from verifier.pairs import DominatingPair
from verifier.rdp.checkin import BASES, FLOAT_MARGIN, wbk_log_moment
from verifier.rdp.curve import RdpCurve, check_orders
from verifier.rdp.interpolation import interpolate
from verifier.rdp.moments import renyi_upper
from verifier.rdp.poisson import poisson_curve, poisson_remove_integer

__all__ = ["without_replacement_curve", "poisson_replace_one_curve", "wbk_upper", "group_privacy_upper", "CITATION", "CITATION_POISSON"]

CITATION = (
    "fixed-size batches, replace-one: min(Wang-Balle-Kasiviswanathan 2019 Thm 9, group privacy Steinke 2022 "
    "§6.7 / Lemma 33.7 over Thm 34/35): UPPER"
)


CITATION_POISSON = "Poisson sampling, replace-one: group privacy Steinke 2022 §6.7 / Lemma 33.7 over Thm 34/35: UPPER"


def wbk_upper(pair: DominatingPair, rate: float, orders: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """WBK 2019 Thm 9 at integer orders >= 2 (module docstring), rounded up."""
    top = int(max(orders))
    base = BASES["shuffle"](pair, np.ones(1), np.arange(top + 1, dtype=float))  # (j−1)·ε(j), both orders
    log_q = np.array([math.log(rate)])
    out = np.empty(len(orders))
    for i, alpha in enumerate(orders):
        value, scale = wbk_log_moment(base[:, : int(alpha) + 1], log_q, int(alpha))
        margin = FLOAT_MARGIN * (float(scale[0]) + abs(float(value[0])) + 1.0)
        out[i] = up((float(value[0]) + margin) / (int(alpha) - 1))
    return out


def group_privacy_upper(pair: DominatingPair, rate: float, orders: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Steinke 2022 §6.7's group-privacy bound at integer orders >= 2, minimised over the integers
    α' in α+1 … 2α (module docstring); sums rounded up."""
    top = 2 * int(max(orders))
    every = np.arange(2, top + 1)
    remove = dict(zip(every.tolist(), poisson_remove_integer(pair, rate, every)))
    add = poisson_curve(pair, rate, every.astype(float), Direction.ADD)
    back = dict(zip(every.tolist(), add.values))
    out = np.empty(len(orders))
    for i, alpha in enumerate(int(a) for a in orders):
        best = math.inf
        for outer in range(alpha + 1, 2 * alpha + 1):
            inner = math.ceil(alpha * (outer - 1) / (outer - alpha))
            if inner > top:
                continue
            best = min(best, up(up(outer / (outer - 1) * remove[inner]) + back[outer]))
        out[i] = best
    return out


def without_replacement_curve(pair: DominatingPair, rate: float, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """UPPER RDP curve of one fixed-size-batch step at rate γ = B/n (the same in both directions:
    the relation is symmetric); compose with :meth:`RdpCurve.times`."""
    grid = check_orders(orders)

    def at_integers(ints: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        if rate >= 1.0:  # every step sees the element: the base pair's own divergence
            values = np.array([max(renyi_upper(pair, float(a), d) for d in Direction) for a in ints])
            return values, np.ones(len(ints), dtype=bool)
        return np.minimum(wbk_upper(pair, rate, ints), group_privacy_upper(pair, rate, ints)), np.zeros(len(ints), dtype=bool)

    values, exact = interpolate(grid, at_integers)
    return RdpCurve(grid, values, exact, direction, CITATION)


def poisson_replace_one_curve(pair: DominatingPair, rate: float, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """UPPER RDP curve of one Poisson-sampled step under replace-one, ``pair`` the add/remove pair
    of one record: the group-privacy bound (module docstring), the same in both directions."""
    grid = check_orders(orders)

    def at_integers(ints: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        return group_privacy_upper(pair, rate, ints), np.zeros(len(ints), dtype=bool)

    values, exact = interpolate(grid, at_integers)
    return RdpCurve(grid, values, exact, direction, CITATION_POISSON)
