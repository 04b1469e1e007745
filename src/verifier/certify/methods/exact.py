"""The exact closed forms of a single mechanism step (and of Gaussian compositions, which are
Gaussian with σ/√m: Steinke 2022, Cor 10; and of compositions of an (ε₀, δ₀)-DP step, the
Kairouz–Oh–Viswanath optimal composition: Steinke 2022, §7) as a certification method."""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pairs import ApproxDP, Gaussian
from verifier.schemes import Composed, Scheme, Single

__all__ = ["ExactPair", "METHODS", "KOV_MAX_TIMES"]

#: Most compositions of an ApproxDP step answered by the exact KOV sum (O(T) balls per δ(ε); about
#: 0.1 s for an ε(δ) bisection at this size); longer ones are left to the PLD engine.
KOV_MAX_TIMES = 4096


def _reduce(scheme: Scheme):
    """The single pair equivalent to the scheme, or None: Single(pair) is the pair; an m-fold
    composition of a Gaussian is the Gaussian with σ/√m (Steinke 2022, Cor 10); of an ApproxDP step,
    the grouped product pair whose δ(ε) is the KOV closed form (pairs.ApproxDPComposition)."""
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
    if isinstance(scheme.pair, ApproxDP) and times <= KOV_MAX_TIMES:
        return scheme.pair.composed(times)  # Kairouz-Oh-Viswanath optimal composition (Steinke 2022, §7)
    return None


class ExactPair(Method):
    name = "exact"
    citation = "closed form of the pair (Steinke 2022, Prop 7 / Cor 8 / Cor 10; §7 KOV for (eps0, delta0)-DP compositions), ball arithmetic"
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
