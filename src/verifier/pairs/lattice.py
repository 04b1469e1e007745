"""Rigorous bounds on δ(ε) of a T-fold composition from the step's privacy loss rounded onto a lattice.

δ(ε) = E_P[(1 − e^{ε−L})_+] (Steinke 2022, Prop 7) with L = ℓ_1 + … + ℓ_T the composed loss, the ℓ_i
independent with the step's loss law under its first distribution. The integrand grows with L, so
replacing every ℓ_i by the lower end of its lattice cell can only lower the expectation and replacing
it by the upper end can only raise it: a LOWER and an UPPER bound (the optimistic and pessimistic
discretisations of dp_accounting's PLDs; the dominated and dominating PLDs). Below the lattice,
mass is dropped (LOWER) or put on the bottom point (UPPER); above it, mass is put on the top point
(LOWER) or at +∞ (UPPER, where it counts in full: P(some step is infinite) <= T·mass, a union
bound). With the bottom at ε − (T − 1)·top, a step below it cannot reach ε whatever the others do,
so neither rule loses anything there. The cell masses are ball-arithmetic brackets of the step's loss
law (:meth:`DominatingPair.loss_cell_bracket`): the LOWER sum uses their lower ends, the UPPER sum
their upper ends (every sum has nonnegative coefficients). The T-fold law on the lattice is the T-th
power of the cell polynomial in ball arithmetic (:class:`flint.arb_poly`), so nothing is lost but the
rounding itself, about h·T·|δ'(ε)| for a lattice of width h placed near the query. Atoms of the
loss law (Laplace's at ±ε0) are kept strictly inside cells, where their balls are resolved.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb, arb_poly

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Measure, Side
from verifier.errors import NotApplicable
from verifier.pairs.base import DominatingPair

__all__ = ["LossLattice", "LATTICE_CELLS", "LATTICE_TAIL"]

#: Cells of the lattice (the T-fold polynomial has T·cells coefficients).
LATTICE_CELLS = 2**14
#: Loss-law mass left outside the lattice's span (rounded as in the module docstring, never lost).
LATTICE_TAIL = 1e-12


def _clear_of(points: list[float], lo: float, h: float) -> bool:
    """Whether every point of the lattice's range lies clearly inside a cell of lo + k·h: at least
    h/1000 and 1e-13 (relative) from an edge, far beyond the float error of a quantile."""
    for x in points:
        offset = (x - lo) / h
        if offset < 0:
            continue
        if abs(offset - round(offset)) * h < max(h * 1e-3, 1e-13 * max(1.0, abs(x))):
            return False
    return True


class LossLattice:
    """The T-fold loss law of ``pair`` in ``direction`` rounded onto a lattice placed for queries near
    ``epsilon`` (module docstring; −∞: the whole span, for ε(δ)): :meth:`delta` and :meth:`epsilon`
    give rigorous bounds on either side at any query."""

    def __init__(self, pair: DominatingPair, times: int, direction: Direction, epsilon: float, cells: int = LATTICE_CELLS) -> None:
        self.times = times
        pair, direction = pair.oriented(direction), Direction.REMOVE  # the law under its first distribution
        quantile = lambda q: float(np.ravel(pair.loss_quantile(q, direction, Measure.P))[0])
        top, bottom = quantile(1.0 - LATTICE_TAIL), quantile(LATTICE_TAIL)
        if not math.isfinite(top):
            top = quantile(1.0 - 1e-3)  # an atom at +∞: above the lattice (UPPER: counted in full)
        if not (math.isfinite(top) and math.isfinite(bottom)) or top <= bottom:
            raise NotApplicable("the step's loss law has no finite span to put a lattice on")
        lo = max(bottom, epsilon - (times - 1) * top) if times > 1 else max(bottom, epsilon - (top - bottom) * 1e-3)
        lo = min(lo, top - (top - bottom) * 1e-6)
        h = 2.0 ** math.floor(math.log2((top - lo) / cells))  # a power of two: lo + k·h is exact
        lo = math.floor(lo / h) * h
        for _ in range(3):  # keep the ends of the law (Laplace's atoms) off the edges (else: wider balls, still rigorous)
            if _clear_of([top, bottom], lo, h):
                break
            h /= 2
            lo -= h
        self.h, self.lo = h, lo
        count = int(math.floor((top - lo) / h)) + 2  # edges e_0 … e_n with e_{n−1} < top < e_n
        edges = lo + h * np.arange(count)
        masses = pair.loss_cell_bracket(edges, direction, Measure.P)  # [<= e_0, (e_i, e_{i+1}] …, > e_n]
        low, high = np.maximum(masses.lower, 0.0), masses.upper
        # LOWER: cell (e_i, e_{i+1}] → e_i, above e_n → e_n, below e_0 dropped
        weights_low = np.append(low[1:-1], low[-1])
        # UPPER: below e_0 → e_0, cell (e_{i−1}, e_i] → e_i, above e_n → +∞
        weights_high = high[:-1]
        self._infinite = float(high[-1])
        self._polys = {
            Side.LOWER: arb_poly([arb(float(w)) for w in weights_low]),
            Side.UPPER: arb_poly([arb(float(w)) for w in weights_high]),
        }
        self._powers: dict[Side, arb_poly] = {}
        self._mids: dict[Side, np.ndarray] = {}

    def _power(self, side: Side) -> arb_poly:
        if side not in self._powers:
            with with_precision():
                self._powers[side] = self._polys[side] ** self.times
        return self._powers[side]

    def _float_delta(self, epsilon: float, side: Side) -> float:
        """The same sum in binary64 from the balls' ends on ``side``: only steers a search, never a bound."""
        if side not in self._mids:
            power = self._power(side)
            end = (lambda ball: ball.lower()) if side is Side.LOWER else (lambda ball: ball.upper())
            self._mids[side] = np.array([float(end(power[j])) for j in range(power.degree() + 1)])
        mids = self._mids[side]
        losses = self.times * self.lo + self.h * np.arange(mids.size)
        keep = losses > epsilon
        tail = self.times * self._infinite if side is Side.UPPER else 0.0
        return float(np.sum(mids[keep] * -np.expm1(epsilon - losses[keep]))) + tail

    def delta(self, epsilon: float, side: Side) -> float:
        """A rigorous bound on δ(ε) of the T-fold product on ``side``."""
        power = self._power(side)
        with with_precision():
            origin = self.times * arb(self.lo)
            first = max(0, int(math.floor((epsilon - self.times * self.lo) / self.h)) - 1)  # the balls decide the rest
            total = arb(0) if side is Side.LOWER else self.times * arb(self._infinite)
            for j in range(first, power.degree() + 1):
                gain = -(arb(epsilon) - (origin + self.h * j)).expm1()
                if gain > 0:
                    total += power[j] * gain
                elif not gain < 0 and side is Side.UPPER:  # a ball straddling 0: its positive part
                    total += power[j] * gain.nonnegative_part()
            return max(0.0, arb_bound(total, side))

    def epsilon(self, delta: float, side: Side) -> float:
        """A bound on ε(δ) on ``side``: LOWER, a point e with a LOWER δ(e) > δ (so ε(δ) >= e; −∞ if
        none); UPPER, a point e with an UPPER δ(e) <= δ (+∞ if none). Bisection on the float twin,
        checked in ball arithmetic."""
        lo, hi = self.times * self.lo, self.times * self.lo + self.h * (self._power(side).degree() + 1)
        holds = (lambda e: self.delta(e, side) > delta) if side is Side.LOWER else (lambda e: not self.delta(e, side) <= delta)
        if side is Side.LOWER and not holds(lo):
            return -math.inf
        if side is Side.UPPER and holds(hi):
            return math.inf
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            above = self._float_delta(mid, side) > delta
            lo, hi = (mid, hi) if above else (lo, mid)
        step = max(self.h, abs(lo) * 1e-12)
        if side is Side.LOWER:
            while not holds(lo):  # the float twin overshot by rounding: step back, further each time
                lo, step = lo - step, 2 * step
            return lo
        while holds(hi):
            hi, step = hi + step, 2 * step
        return hi
