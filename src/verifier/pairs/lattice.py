"""LOWER bounds on δ(ε) of a T-fold composition from the step's privacy loss rounded down onto a lattice.

δ(ε) = E_P[(1 − e^{ε−L})_+] (Steinke 2022, Prop 7) with L = ℓ_1 + … + ℓ_T the composed loss, the ℓ_i
independent with the step's loss law under its first distribution. The integrand grows with L, so
replacing every ℓ_i by ⌊ℓ_i⌋ (the lower end of its lattice cell lo + k·h) can only lower it: the
result is a rigorous LOWER bound, the value of the dominated (pessimistic-for-the-attacker) PLD of
Koskela et al. and dp_accounting's optimistic discretisation. Mass below lo is dropped (it only
lowers δ further; below ε − (T − 1)·top it cannot reach ε at all), mass above the top cell is put
at the top (rounded down, infinite losses included). The cell masses are ball-arithmetic brackets of
the step's loss law (:meth:`DominatingPair.loss_cell_bracket`), of which the LOWER ends are used (the
sum has nonnegative coefficients), and the T-fold law on the lattice is the T-th power of the cell
polynomial in ball arithmetic (:class:`flint.arb_poly`), so nothing is lost but the rounding itself;
the lattice is placed where it matters, between ε − (T − 1)·top and the top of the loss law, with
``cells`` cells (about h·T·δ'(ε) of slack).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, arb_poly

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Measure, Side
from verifier.errors import NotApplicable
from verifier.pairs.base import DominatingPair

__all__ = ["LatticeLower", "LATTICE_CELLS", "LATTICE_TAIL"]

#: Cells of the lattice (the T-fold polynomial has T·cells coefficients).
LATTICE_CELLS = 2**14
#: Loss-law mass left above the lattice's top (it is rounded down onto the top cell, never lost).
LATTICE_TAIL = 1e-12


class LatticeLower:
    """The rounded-down T-fold loss law of ``pair`` in ``direction`` (module docstring), for queries
    near ``epsilon``: :meth:`delta` is a rigorous LOWER bound on δ(ε') of the T-fold product at any ε'."""

    def __init__(self, pair: DominatingPair, times: int, direction: Direction, epsilon: float, cells: int = LATTICE_CELLS) -> None:
        self.times = times
        pair, direction = pair.oriented(direction), Direction.REMOVE  # the law under its first distribution
        top = float(np.ravel(pair.loss_quantile(1.0 - LATTICE_TAIL, direction, Measure.P))[0])
        bottom = float(np.ravel(pair.loss_quantile(LATTICE_TAIL, direction, Measure.P))[0])
        if not math.isfinite(top):
            top = float(np.ravel(pair.loss_quantile(1.0 - 1e-3, direction, Measure.P))[0])  # an atom at +∞: rounded down onto the top
        if not (math.isfinite(top) and math.isfinite(bottom)) or top <= bottom:
            raise NotApplicable("the step's loss law has no finite span to put a lattice on")
        lo = max(bottom, epsilon - (times - 1) * top) if times > 1 else max(bottom, epsilon - (top - bottom) * 1e-3)
        lo = min(lo, top - (top - bottom) * 1e-6)
        self.h = 2.0 ** math.floor(math.log2((top - lo) / cells))  # a power of two: lo + k·h exact
        self.lo = math.floor(lo / self.h) * self.h
        # The last edge stays clearly below top, so an atom at the top of the law (Laplace's) lies
        # inside the open top cell instead of within rounding of an edge (where its ball is unresolved).
        count = int(math.floor((top - self.lo) / self.h))
        while count > 1 and self.lo + self.h * (count - 1) > top - 1e-9 * max(1.0, abs(top)):
            count -= 1
        edges = self.lo + self.h * np.arange(count)
        masses = pair.loss_cell_bracket(edges, direction, Measure.P).lower  # [<= e_0, (e_i, e_i+1], > e_n]
        # cell (e_i, e_{i+1}] → e_i; (e_n, ∞] → e_n; <= e_0 dropped
        weights = np.append(masses[1:-1], 0.0)
        weights[-1] += masses[-1]
        self._poly = arb_poly([arb(float(w)) for w in np.maximum(weights, 0.0)])
        self._mids: np.ndarray | None = None
        self._losses: np.ndarray | None = None

    @functools.cached_property
    def _power(self) -> arb_poly:
        with with_precision():
            return self._poly ** self.times

    def _float_delta(self, epsilon: float) -> float:
        """The same sum in binary64 from the balls' midpoints: only steers a search, never a bound."""
        if self._mids is None:
            self._mids = np.array([float(self._power[j].mid()) for j in range(self._power.degree() + 1)])
            self._losses = self.times * self.lo + self.h * np.arange(self._mids.size)
        keep = self._losses > epsilon
        return float(np.sum(self._mids[keep] * -np.expm1(epsilon - self._losses[keep])))

    def delta(self, epsilon: float) -> float:
        """LOWER bound on δ(ε) of the T-fold product (0 where no lattice point exceeds ε)."""
        power = self._power
        with with_precision():
            origin = self.times * arb(self.lo)
            first = max(0, int(math.floor((epsilon - self.times * self.lo) / self.h)))
            total = arb(0)
            for j in range(first, power.degree() + 1):
                gain = -(arb(epsilon) - (origin + self.h * j)).expm1()
                if gain > 0:
                    total += power[j] * gain
            return max(0.0, arb_bound(total, Side.LOWER))

    def epsilon(self, delta: float) -> float:
        """A LOWER bound on ε(δ): a point e with :meth:`delta` (e) > δ, found by bisection on the float
        twin and checked in ball arithmetic (−∞ when even the lattice's bottom does not exceed δ)."""
        lo, hi = self.times * self.lo, self.times * self.lo + self.h * (self._power.degree() + 1)
        if not self.delta(lo) > delta:
            return -math.inf
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self._float_delta(mid) > delta else (lo, mid)
        while not self.delta(lo) > delta:  # the float twin overshot by rounding: step back
            lo -= max(self.h, abs(lo) * 1e-12)
        return lo
