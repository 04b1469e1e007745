"""The PLD engine as a certification method: rigorous UPPER (DOMINATING PLD) and LOWER (DOMINATED
PLD) bounds on δ(ε) and ε(δ) for Single, Composed and Poisson schemes (and any scheme another module
registers a PLD builder for, e.g. random allocation)."""

from __future__ import annotations

import functools
import math
from typing import Sequence

from verifier._types import Bound, Bracket, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import AccuracyNotReachable, NotApplicable
from verifier.pld import PLDBracket, builder_for
from verifier.pld.fft import FFT_SAFETY_FACTOR
from verifier.pld.schemes import scheme_pld
from verifier.schemes import Composed, Poisson, Scheme, Single

__all__ = ["PLDMethod", "METHODS", "REL_ACCURACY", "START_STEP", "MAX_GRID_POINTS"]

#: Relative width of the ε (δ) bracket the adapter refines the grid toward; the returned bounds
#: are rigorous whatever the width (a wider bracket is only less informative).
REL_ACCURACY = 1e-3

#: First grid step of the refinement (halved until REL_ACCURACY or the grid limit is reached).
START_STEP = 2.0**-7

#: Grid limit of the refinement (points on the widest PLD).
MAX_GRID_POINTS = 1 << 21

_NOTE = (
    "FFT composition exact on a 64-bit fixed-point split; its exactness test uses Higham's FFT error "
    f"bound (Thm 24.2) times {FFT_SAFETY_FACTOR:g} for numpy's pocketfft"
)


class PLDMethod(Method):
    name = "pld"
    citation = (
        "PLD composition (Steinke 2022, Thm 9; Prop 7) with connect-the-dots dominating PLDs "
        "(Doroshenko et al. 2022) and gap-corrected dominated PLDs; Poisson subsampling by Balle et al. "
        "2018, Thm 2 (Feldman & Shenfeld, Claim D.3)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (Single, Composed, Poisson)

    def supports(self, scheme: Scheme) -> bool:
        """One of :attr:`scheme_types` with a registered PLD builder (for Composed, also what it
        composes). Schemes whose builders other modules register (random allocation) are answered by
        those modules' own methods, which declare them."""
        if type(scheme) not in self.scheme_types:
            return False
        try:
            builder_for(scheme)
        except NotApplicable:
            return False
        return self.supports(scheme.scheme) if isinstance(scheme, Composed) else True

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        bracket = self._refined(scheme, direction, lambda b: _delta_width(b, epsilon))
        got = bracket.delta(epsilon)
        return self._bounds(got, Quantity.DELTA, epsilon, direction, bracket)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        bracket = self._refined(scheme, direction, lambda b: _epsilon_width(b, delta))
        got = bracket.epsilon(delta)
        return self._bounds(got, Quantity.EPSILON, delta, direction, bracket)

    def _refined(self, scheme: Scheme, direction: Direction, relative_width) -> PLDBracket:
        """The coarsest grid (from START_STEP, halving) whose bracket meets REL_ACCURACY, or the finest
        one within MAX_GRID_POINTS."""
        step = START_STEP
        best = _cached(scheme, direction, step)
        while relative_width(best) > REL_ACCURACY and 2 * best.grid_size() <= MAX_GRID_POINTS:
            step /= 2.0
            try:
                best = _cached(scheme, direction, step)
            except AccuracyNotReachable:
                break
        return best

    def _bounds(self, got: Bracket, quantity: Quantity, at: float, direction: Direction, bracket: PLDBracket) -> list[Bound]:
        budget = max(bracket.dominating.error_budget, bracket.dominated.error_budget)
        note = f"{_NOTE}; grid step {bracket.step:g}, {bracket.grid_size()} points"
        return [
            Bound(float(got.lower), Side.LOWER, direction, quantity, at, self.name, self.citation, budget, True, note),
            Bound(float(got.upper), Side.UPPER, direction, quantity, at, self.name, self.citation, budget, True, note),
        ]


def _relative(b: Bracket) -> float:
    upper, lower = float(b.upper), float(b.lower)
    if math.isinf(upper):
        return math.inf
    return (upper - lower) / max(abs(upper), 1e-300)


def _delta_width(bracket: PLDBracket, epsilon: float) -> float:
    return _relative(bracket.delta(epsilon))


def _epsilon_width(bracket: PLDBracket, delta: float) -> float:
    return _relative(bracket.epsilon(delta))


def _cached(scheme: Scheme, direction: Direction, step: float) -> PLDBracket:
    try:
        hash(scheme)
    except TypeError:
        return scheme_pld(scheme, direction, step=step)
    return _cached_build(scheme, direction, step)


@functools.lru_cache(maxsize=16)
def _cached_build(scheme: Scheme, direction: Direction, step: float) -> PLDBracket:
    return scheme_pld(scheme, direction, step=step)


METHODS = [PLDMethod()]
