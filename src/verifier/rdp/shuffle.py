"""Rényi divergence of the shuffle model for one specific pair of datasets: a rigorous LOWER bound
on the shuffle model's RDP (Liew, Hasegawa & Takahashi, "Privacy amplification via shuffled
check-ins", Thm 3 / Eq. (8) and Remark 4).

With n users whose reports are shuffled, D' = one user's report drawn from P and the n − 1 others
from Q, and D = all n from Q, the released multiset (equivalently, the reports in uniformly random
order) has laws M(D') = (1/n) Σ_i Q^{⊗(i−1)} ⊗ P ⊗ Q^{⊗(n−i)} and M(D) = Q^{⊗n}. For the Gaussian
pair (P, Q) = (N(Δ, σ²), N(0, σ²)) Eq. (8) reads

    D_α(M(D') ‖ M(D)) = 1/(α−1) · ln( e^{−αΔ²/(2σ²)} n^{−α} Σ_{k_1+…+k_n=α} binom(α; k) e^{Σ_i k_i² Δ²/(2σ²)} ),

with the arguments in this order: the paper's statement writes D_α(M(D) ‖ M(D')), but its proof
(Eqs. 21–40) computes E_{M(D)}[(M(D')/M(D))^α], i.e. the mixture in the first slot (notes §3.4,
errata item 6). Since RDP is a supremum over neighbouring datasets, the value is a LOWER bound on
the shuffle model's RDP under replace-one neighbours (either order of the two datasets is a pair of
neighbours, so it bounds both "directions" of the replace-one relation from below).

This is the same quantity as the remove-direction RDP of 1-out-of-n random allocation
(Feldman & Shenfeld, Thm 4.8: the mixture of n product laws with the P factor in one uniformly chosen
slot, against Q^{⊗n}), so it reuses that kernel (:func:`verifier.rdp.allocation.allocation_remove_integer`)
with moments and rounding directed DOWN (closed forms at α = 2, 3). Integer orders are flagged
exact where the matching upper bound is within EXACT_RTOL (not at α >= 4 for large n, where the
series loses ~n·u relative: issue 30); a fractional order α gets the value at ⌊α⌋ (Rényi
divergences are non-decreasing in the order), 0 below 2, flagged inexact.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from verifier._types import Direction, Side
from verifier._validation import check_integer
from verifier.errors import InvalidArgument
from verifier.pairs import DominatingPair
from verifier.rdp.allocation import MAX_STEPS, allocation_remove_flagged
from verifier.rdp.curve import RdpCurve, check_orders

__all__ = ["shuffle_lower", "shuffle_curve", "CITATION"]

CITATION = (
    "Liew, Hasegawa & Takahashi, Thm 3 / Eq. (8) (arguments in the order of its proof), a specific pair: "
    "LOWER bound; computed as Feldman & Shenfeld Thm 4.8 (allocation remove, t = n)"
)


def shuffle_lower(pair: DominatingPair, users: int, orders: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """LOWER bounds (exact up to downward rounding) on D_α(M(D') ‖ M(D)) of the n-user shuffle of
    ``pair`` at integer orders α >= 2 (module docstring)."""
    return _shuffle_flagged(pair, users, orders)[0]


def _shuffle_flagged(pair: DominatingPair, users: int, orders: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    n = check_integer("users", users, minimum=1, maximum=MAX_STEPS)
    ints = np.asarray(orders)
    if ints.size == 0 or np.any(ints != np.floor(ints)) or np.any(ints < 2):
        raise InvalidArgument("orders", list(ints), "Eq. (8) is evaluated at integer orders >= 2")
    return allocation_remove_flagged(pair, n, ints.astype(np.int64), Side.LOWER)


def shuffle_curve(pair: DominatingPair, users: int, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """LOWER-bound RDP curve of the n-user shuffle model (either direction of the replace-one
    relation; see the module docstring). Fractional orders use the value at ⌊α⌋ (inexact)."""
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    grid = check_orders(orders)
    floors = np.floor(grid)
    values = np.zeros(len(grid))
    exact = np.zeros(len(grid), dtype=bool)
    usable = floors >= 2
    if np.any(usable):
        ints = np.unique(floors[usable])
        at_int = dict(zip(ints, zip(*_shuffle_flagged(pair, users, ints))))
        values[usable] = [at_int[f][0] for f in floors[usable]]
        exact[usable] = [bool(at_int[f][1]) for f in floors[usable]]
    return RdpCurve(grid, values, exact & (floors == grid), direction, CITATION, Side.LOWER)
