"""Bounds for short compositions and Poisson runs of continuous pairs: the step's loss law rounded down
(LOWER) and up (UPPER) onto a lattice placed near the query, composed exactly (verifier.pairs.lattice)
— "lower bounds never trivially 0 where δ(ε) > 0" (issue 33, item 2), and an upper side as fine near
the query. It runs before the PLD engine (cost 1: one to two seconds for up to four steps), whose
refinement near the edge of the loss law can take the whole time budget; where it settles the
question, the PLD is not started."""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method, unwrap_composed
from verifier.pairs import FinitePair, Gaussian, PoissonSubsampled
from verifier.pairs.lattice import LossLattice
from verifier.schemes import Composed, Poisson, Scheme, Single

__all__ = ["LatticeMethod", "METHODS", "LATTICE_MAX_TIMES"]

#: Most steps composed on the lattice (the T-fold polynomial has T·LATTICE_CELLS coefficients).
LATTICE_MAX_TIMES = 4


def _step(scheme: Scheme):
    """(step pair, T) of a short composition or Poisson run that the exact method does not answer."""
    scheme, times = unwrap_composed(scheme)
    if isinstance(scheme, Poisson):
        times *= scheme.steps
        if isinstance(scheme.pair, FinitePair) or times == 1:
            return None  # exact: finite products, one subsampled step
        return PoissonSubsampled(scheme.pair, scheme.rate), times
    if isinstance(scheme, Single) and times > 1 and not isinstance(scheme.pair, (FinitePair, Gaussian)):
        return scheme.pair, times
    return None


class LatticeMethod(Method):
    name = "lattice"
    citation = "losses rounded down / up onto a lattice near the query (the dominated and dominating PLDs; Steinke 2022, Prop 7 with L -> floor(L), ceil(L)), T-fold law by an exact polynomial power in ball arithmetic"
    returns = frozenset({Guarantee.LOWER, Guarantee.UPPER})
    cost = 1
    scheme_types = (Composed, Poisson)

    def supports(self, scheme: Scheme) -> bool:
        found = _step(scheme)
        return found is not None and found[1] <= LATTICE_MAX_TIMES

    def _bounds(self, quantity: Quantity, at: float, direction: Direction, value_of) -> list[Bound]:
        out = []
        for side in (Side.LOWER, Side.UPPER):
            value = value_of(side)
            if math.isfinite(value):
                out.append(Bound(value, side, direction, quantity, at, self.name, self.citation))
        return out

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        pair, times = _step(scheme)
        lattice = LossLattice(pair, times, direction, epsilon)
        return self._bounds(Quantity.DELTA, epsilon, direction, lambda side: lattice.delta(epsilon, side))

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        pair, times = _step(scheme)
        lattice = LossLattice(pair, times, direction, -math.inf)
        return self._bounds(Quantity.EPSILON, delta, direction, lambda side: lattice.epsilon(delta, side))


METHODS = [LatticeMethod()]
