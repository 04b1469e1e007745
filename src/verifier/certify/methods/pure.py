"""ε(0), the largest privacy loss, as a certification method: pure DP (δ = 0).

δ(ε) = E_P[(1 − e^{ε−L})_+] for the privacy loss L of the scheme's pair (Steinke 2022, Prop 7), so
δ(ε) = 0 exactly when ε >= ε* = ess sup L and δ(ε) > 0 below it: ε(0) = ε*. The method computes ε*
in ball arithmetic for

- a step (Single): the pair's :meth:`~verifier.pairs.DominatingPair.max_loss` (Laplace: Δ/b;
  randomized response: ε0; a finite pair: max ln(P/Q), +∞ with P-mass where Q = 0; Gaussian: +∞);
- an m-fold composition and a Sequence: the sum of the steps' ε* (the loss of a product is the sum
  of independent losses, whose essential supremum is the sum of theirs; Steinke 2022, Thm 9);
- Poisson sampling (add/remove): the subsampled pair's ε*, ln(1 + λ(e^{ε*} − 1)) removing and
  −ln(1 − λ(1 − e^{−ε*})) adding (Balle, Barthe & Gaboardi 2018, Thm 8), times the steps;
- the shuffle model (n reports of the step, replace-one): the step's ε*, no better and no worse.
  Upper: the shuffled reports are a post-processing of the changed user's report (the others'
  reports do not depend on it). Lower: on the datasets (x, x', …, x') against (x', …, x') the shuffled
  multiset {y_1, …, y_n} has likelihood ratio (1/n)·Σ_i P(y_i)/Q(y_i), which is >= e^{ε* − η} where every
  report lies in A = {ℓ >= ε* − η}, an event of positive probability under both laws for every
  η > 0 (Q >= e^{−ε*}·P on it); where ε* = +∞ (a Gaussian step), a report in {ℓ >= L} for any L
  does the same, or one in {Q = 0, P > 0}, which the second dataset never shows. So δ(ε) > 0 for
  every ε < ε*, δ(ε) = 0 for ε >= ε*, and a Gaussian randomizer is decided at once (ε(0) = +∞).

Rounded outward, ε* gives δ(ε) = 0 (both sides) for ε at or above its upper end, ε(0) in
[lower end, upper end], and ε(δ) <= upper end for every δ. The pairs are attained (the mechanism on
two neighbouring datasets), so the lower end is a bound on the scheme too, as for the PLD method.
"""

from __future__ import annotations

import math
from typing import Sequence

from flint import arb

from verifier._directed import arb_bracket, with_precision
from verifier._types import Bound, Bracket, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.pairs import DominatingPair, PoissonSubsampled
from verifier.schemes import Composed, Poisson, Scheme, Shuffle, Single
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["MaxLoss", "METHODS", "max_loss_bracket"]


def _steps(scheme: Scheme) -> list[tuple[DominatingPair, int]] | None:
    """(step pair, how many times it runs) for every step of the scheme, or None where the scheme is
    not built from Single, Shuffle, Composed, Poisson (add/remove) and Sequence."""
    times = 1
    while isinstance(scheme, Composed):
        times *= scheme.times
        scheme = scheme.scheme
    if isinstance(scheme, (Single, Shuffle)):
        return [(scheme.pair, times)]
    if isinstance(scheme, Poisson):
        return [(PoissonSubsampled(scheme.pair, scheme.rate), times * scheme.steps)]
    if isinstance(scheme, SchemeSequence):
        runs = [_steps(phase) for phase in scheme.phases]
        if any(run is None for run in runs):
            return None
        return [(pair, times * count) for run in runs for pair, count in run]  # type: ignore[union-attr]
    return None


def max_loss_bracket(scheme: Scheme, direction: Direction) -> Bracket:
    """ε(0), the scheme's largest privacy loss in ``direction``, as a rigorous bracket ([+∞, +∞]
    where some step's loss is unbounded); NotApplicable where the scheme or a pair is not covered
    (module doc)."""
    steps = _steps(scheme)
    if steps is None:
        raise NotApplicable(f"the largest privacy loss of {type(scheme).__name__} is not known")
    balls: list[arb] = []
    with with_precision():
        for pair, count in steps:
            top = pair.oriented(direction)._max_loss_arb()
            if top is None:
                return Bracket(math.inf, math.inf)
            balls.append(top * count)
        return arb_bracket(sum(balls, arb(0)), clip=(0.0, math.inf))


class MaxLoss(Method):
    name = "max_loss"
    citation = (
        "ε(0) = ess sup of the privacy loss (Steinke 2022, Prop 7), summed over compositions (Thm 9); "
        "Poisson sampling of an ε0-DP step by Balle, Barthe & Gaboardi 2018, Thm 8; a shuffle of ε0-DP reports is "
        "ε0-DP exactly (post-processing; the pair (x, x', ..., x') vs (x', ..., x') attains it); ball arithmetic"
    )
    returns = frozenset({Guarantee.EXACT})
    cost = 0
    scheme_types = (Single, Shuffle, Composed, Poisson, SchemeSequence)
    needs_float_range = False  # ball arithmetic
    answers_pure_dp = True

    def supports(self, scheme: Scheme) -> bool:
        steps = _steps(scheme)
        if steps is None:
            return False
        try:
            for pair, _ in steps:
                for direction in (Direction.REMOVE, Direction.ADD):
                    pair.oriented(direction)._max_loss_arb()
        except NotApplicable:
            return False
        return True

    def _bound(self, value: float, side: Side, quantity: Quantity, at: float, direction: Direction) -> Bound:
        return Bound(value, side, direction, quantity, at, self.name, self.citation)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        """δ(ε) = 0 exactly where ε >= the upper end of ε(0); nothing below it."""
        if epsilon < max_loss_bracket(scheme, direction).upper:
            return []
        return [self._bound(0.0, side, Quantity.DELTA, epsilon, direction) for side in (Side.LOWER, Side.UPPER)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        """ε(0) bracketed at δ = 0; for δ > 0, ε(δ) <= ε(0) (δ(·) is non-increasing)."""
        found = max_loss_bracket(scheme, direction)
        if delta == 0.0:
            return [self._bound(found.lower, Side.LOWER, Quantity.EPSILON, delta, direction), self._bound(found.upper, Side.UPPER, Quantity.EPSILON, delta, direction)]
        if math.isinf(found.upper):
            return []
        return [self._bound(found.upper, Side.UPPER, Quantity.EPSILON, delta, direction)]


METHODS = [MaxLoss()]
