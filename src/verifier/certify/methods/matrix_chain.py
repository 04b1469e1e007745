"""The chain dynamic programme on the exact Lemma 2.8 pair (:mod:`verifier.matrix.chain`) as a
certification method ("matrix-chain"): rigorous UPPER bounds on δ(ε) and ε(δ) for every strategy
with at most 2 bands (the pair dominates the mechanism), and LOWER bounds for non-negative C (the pair
is attained), for 3 <= b <= MAX_BATCHES batches and any number of epochs.

A claim is decided with the coarsest grid that decides it: CELLS_STEPS in turn, each rigorous, so
the brackets of the passes intersect. ε(δ) is found by bisection on the δ bounds of one grid."""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.certify.method import Guarantee, Method
from verifier.matrix.chain import CITATION, delta_bound, epsilon_bound
from verifier.rdp.matrix import scaled_gram
from verifier.schemes import MatrixMechanism, Scheme

__all__ = ["MatrixChain", "METHODS", "MAX_BATCHES", "CELLS_STEPS"]

#: Most batches (the cost is linear in b: about 5 s per bound at b = 10 with 64 cells on one core).
MAX_BATCHES = 100
#: Gaussian grid sizes tried in turn when deciding a claim (the partial-sum grid has 4× as many cells).
CELLS_STEPS = (24, 48, 80)
#: Grid for :meth:`MatrixChain.delta_bounds`, and the coarser one of the ε(δ) bisections (each
#: bisection step is a δ bound).
DEFAULT_CELLS = 48
EPSILON_CELLS = 24


class MatrixChain(Method):
    name = "matrix-chain"
    citation = CITATION
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (MatrixMechanism,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixMechanism) and scheme.strategy.width <= 2 and 3 <= scheme.batches <= MAX_BATCHES

    def _sides(self, scheme: MatrixMechanism) -> tuple[Side, ...]:
        return (Side.UPPER,) if scheme.strategy.signed else (Side.UPPER, Side.LOWER)  # the pair is attained only for C >= 0

    def _bound(self, value: float, side: Side, quantity: Quantity, at: float, direction: Direction, cells: int) -> Bound:
        return Bound(value, side, direction, quantity, at, self.name, self.citation, note=f"{cells} cells")

    def _delta(self, scheme: MatrixMechanism, epsilon: float, direction: Direction, cells: int) -> list[Bound]:
        gamma = scaled_gram(scheme)
        return [
            self._bound(delta_bound(gamma, epsilon, direction, side, cells, 4 * cells), side, Quantity.DELTA, epsilon, direction, cells)
            for side in self._sides(scheme)
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        assert isinstance(scheme, MatrixMechanism)
        return self._delta(scheme, check_real("epsilon", epsilon), direction, DEFAULT_CELLS)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        assert isinstance(scheme, MatrixMechanism)
        target = check_open_unit("delta", delta)
        gamma = scaled_gram(scheme)
        out = []
        for side in self._sides(scheme):
            value = epsilon_bound(gamma, target, direction, side, cells=EPSILON_CELLS, sum_cells=4 * EPSILON_CELLS)
            if side is Side.UPPER or value > 0:
                out.append(self._bound(value, side, Quantity.EPSILON, target, direction, EPSILON_CELLS))
        return out

    def claim_bounds(self, scheme: Scheme, epsilon: float, delta: float, direction: Direction) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds on δ(``epsilon``), refined through CELLS_STEPS until they decide the claim; the
        deciding side also bounds ε(``delta``) by ``epsilon`` (δ(ε) <= δ ⟺ ε(δ) <= ε)."""
        assert isinstance(scheme, MatrixMechanism)
        eps, target = check_real("epsilon", epsilon), check_open_unit("delta", delta)
        lower, upper = 0.0, 1.0
        for cells in CELLS_STEPS:
            for bound in self._delta(scheme, eps, direction, cells):
                if bound.side is Side.UPPER:
                    upper = min(upper, bound.value)
                else:
                    lower = max(lower, bound.value)
            if upper <= target or lower > target:
                break
        sides = self._sides(scheme)
        deltas = [self._bound(upper, Side.UPPER, Quantity.DELTA, eps, direction, cells)]
        if Side.LOWER in sides:
            deltas.append(self._bound(lower, Side.LOWER, Quantity.DELTA, eps, direction, cells))
        epsilons = []
        if upper <= target:
            epsilons.append(self._bound(eps, Side.UPPER, Quantity.EPSILON, target, direction, cells))
        elif lower > target and Side.LOWER in sides and math.isfinite(eps):
            epsilons.append(self._bound(eps, Side.LOWER, Quantity.EPSILON, target, direction, cells))
        return deltas, epsilons


METHODS = [MatrixChain()]
