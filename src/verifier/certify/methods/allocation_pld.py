"""Random allocation by privacy-ratio convolution on geometric grids, as a certification method.

"Efficient computation of the privacy loss distribution for random allocation" (S1), Cor 3.3 and
Thm 3.4 / Alg. 3–5, with the corrections of notes/random-allocation.md §3.8, in the convex-order
form of :mod:`verifier.pld.allocation`; k > 1 by Lemma 3.2 of Feldman & Shenfeld (⌊t/k⌋ steps per
round) and epochs by PLD composition. Works for every dominating pair.
"""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Bracket, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pld.allocation import allocation_bracket
from verifier.pld.bracket import PLDBracket
from verifier.schemes import Allocation, Scheme

__all__ = ["AllocationPLD", "METHODS"]

#: Loss-grid step of δ(ε) queries.
_DELTA_STEP = 2.0**-12
#: Loss-grid step of the first, coarse ε(δ) pass (it locates ε; the second pass resolves it).
_FIRST_STEP = 2.0**-8
#: Relative width of the ε bracket the second pass aims at (its grid step is chosen from the first).
_EPSILON_TARGET = 4e-3
#: Finest grid step used, and the most grid points one PLD (after composition) may take.
_FINEST_STEP = 2.0**-24
_MAX_REFINEMENTS = 5
_MAX_POINTS = 1 << 21

_NOTE = (
    "convex-order bounds (mean-preserving spread / contraction on geometric grids) are exact in real "
    "arithmetic; float64 mass rounding is covered by a tracked relative allowance, and the base masses "
    "assume the pair's scipy loss CDF accurate to 1e-13 relative"
)


class AllocationPLD(Method):
    name = "allocation-pld"
    citation = (
        "S1 (random-allocation PLD) Cor 3.3, Thm 3.4, Alg. 3-5 (corrected, convex-order form); "
        "Feldman & Shenfeld 2025, Lemma 3.2 (floor t/k)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Allocation)

    def _bracket(self, scheme: Allocation, direction: Direction, step: float) -> PLDBracket:
        bracket = allocation_bracket(scheme, direction, step)
        span = bracket.losses_span()
        points = (span[1] - span[0]) / step
        if points > _MAX_POINTS:  # a coarser grid: fewer points, wider bracket, never invalid
            coarser = 2.0 ** math.ceil(math.log2((span[1] - span[0]) / _MAX_POINTS))
            bracket = allocation_bracket(scheme, direction, coarser)
        return bracket

    def _bounds(self, bracket: Bracket, quantity: Quantity, at: float, direction: Direction, step: float) -> list[Bound]:
        note = f"{_NOTE}; loss grid step {step:g}"
        return [
            Bound(float(bracket.lower), Side.LOWER, direction, quantity, at, self.name, self.citation, rigorous=False, note=note),
            Bound(float(bracket.upper), Side.UPPER, direction, quantity, at, self.name, self.citation, rigorous=False, note=note),
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        bracket = self._bracket(scheme, direction, _DELTA_STEP)
        return self._bounds(bracket.delta(epsilon), Quantity.DELTA, epsilon, direction, bracket.step)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        """A coarse pass locates ε; then the grid (and with it the lattice) is refined, first to a
        step of a quarter of the target width, then by halving, until the bracket is
        _EPSILON_TARGET wide (relative) or the finest step is reached. Each pass is a rigorous
        bracket; the result is their intersection."""
        bracket = self._bracket(scheme, direction, _FIRST_STEP)
        found = bracket.epsilon(delta)
        step = bracket.step
        if math.isfinite(found.upper) and found.upper > 0:
            wanted = 2.0 ** math.floor(math.log2(max(found.upper * _EPSILON_TARGET / 4.0, _FINEST_STEP)))
            step = min(wanted, step)
            for _ in range(_MAX_REFINEMENTS):
                if found.relative_width <= _EPSILON_TARGET or step < _FINEST_STEP:
                    break
                bracket = self._bracket(scheme, direction, step)
                again = bracket.epsilon(delta)
                found = Bracket(max(found.lower, again.lower), min(found.upper, again.upper))
                step /= 2.0
        return self._bounds(found, Quantity.EPSILON, delta, direction, bracket.step)


METHODS = [AllocationPLD()]
