"""The dyadic-partition bounds on the exact Lemma 2.8 pair (:mod:`verifier.matrix.partition`) as a
certification method ("matrix-partition"): rigorous UPPER bounds on δ(ε) and ε(δ) for every strategy
(the pair dominates the mechanism), and LOWER bounds for non-negative C (the pair is attained), for
schemes with at most ``MAX_DIMENSION`` batches (the span of the means has dimension <= b)."""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.matrix.partition import CITATION, MAX_DIMENSION, delta_bracket, epsilon_bracket
from verifier.rdp.matrix import scaled_gram
from verifier.schemes import MatrixMechanism, Scheme

__all__ = ["MatrixPartition", "METHODS"]


class MatrixPartition(Method):
    name = "matrix-partition"
    citation = CITATION
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (MatrixMechanism,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixMechanism) and scheme.batches <= MAX_DIMENSION

    def _bounds(self, scheme: MatrixMechanism, pair: tuple[float, float], quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        lower, upper = pair
        out = [Bound(upper, Side.UPPER, direction, quantity, at, self.name, self.citation)]
        if not scheme.strategy.signed:  # the pair is attained only for C >= 0
            out.append(Bound(lower, Side.LOWER, direction, quantity, at, self.name, self.citation))
        return out

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        assert isinstance(scheme, MatrixMechanism)
        return self._bounds(scheme, delta_bracket(scaled_gram(scheme), epsilon, direction), Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        assert isinstance(scheme, MatrixMechanism)
        return self._bounds(scheme, epsilon_bracket(scaled_gram(scheme), delta, direction), Quantity.EPSILON, delta, direction)


METHODS = [MatrixPartition()]
