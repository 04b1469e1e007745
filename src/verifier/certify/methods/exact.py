"""The exact closed forms of a single mechanism step (and of Gaussian compositions, which are
Gaussian with σ/√m: Steinke 2022, Cor 10) as a certification method."""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pairs import Gaussian
from verifier.schemes import Composed, Scheme, Single

__all__ = ["ExactPair", "METHODS"]


def _reduce(scheme: Scheme):
    """The single pair equivalent to the scheme, or None: Single(pair) is the pair; an m-fold
    composition of a Gaussian is the Gaussian with σ/√m (Steinke 2022, Cor 10)."""
    times = 1
    while isinstance(scheme, Composed):
        times *= scheme.times
        scheme = scheme.scheme
    if not isinstance(scheme, Single):
        return None
    if times == 1:
        return scheme.pair
    if isinstance(scheme.pair, Gaussian):
        return Gaussian(scheme.pair.sigma / math.sqrt(times), scheme.pair.sensitivity)
    return None


class ExactPair(Method):
    name = "exact"
    citation = "closed form of the pair (Steinke 2022, Prop 7 / Cor 8 / Cor 10), ball arithmetic"
    returns = frozenset({Guarantee.EXACT})
    cost = 0
    scheme_types = (Single, Composed)

    def supports(self, scheme: Scheme) -> bool:
        return _reduce(scheme) is not None

    def _bounds(self, bracket, quantity: Quantity, at: float, direction: Direction, pair) -> list[Bound]:
        method = f"exact:{type(pair).__name__.lower()}"
        return [
            Bound(bracket.lower, Side.LOWER, direction, quantity, at, method, self.citation),
            Bound(bracket.upper, Side.UPPER, direction, quantity, at, method, self.citation),
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        pair = _reduce(scheme)
        return self._bounds(pair.delta(epsilon, direction), Quantity.DELTA, epsilon, direction, pair)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        pair = _reduce(scheme)
        return self._bounds(pair.epsilon(delta, direction), Quantity.EPSILON, delta, direction, pair)


METHODS = [ExactPair()]
