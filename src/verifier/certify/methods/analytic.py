"""The random-allocation paper's analytic bounds (verifier.analytic) as certification methods.

Feldman & Shenfeld 2025: decomposition (Thm 4.6), truncated Poisson (Thm 4.1), recursive
(Thm 4.2); and the Chua et al. event lower bound. (The direct bounds, Thm 4.8 and Cor 4.10, are
the RDP adapter's.)
A theorem whose conditions fail for a case raises NotApplicable (the portfolio lists it as
skipped), never returns ∞.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, ClassVar, Sequence

from verifier._directed import down, up
from verifier._types import Bound, Direction, Side
from verifier.analytic import (
    chua_lower,
    chua_lower_delta,
    chua_lower_epsilon,
    decomposition,
    decomposition_delta,
    decomposition_epsilon,
    recursive,
    recursive_delta,
    recursive_epsilon,
    truncated_poisson,
    truncated_poisson_delta,
    truncated_poisson_epsilon,
)
from verifier.certify.method import Guarantee, Method
from verifier.pairs import Gaussian
from verifier.schemes import Allocation, Scheme

__all__ = ["AnalyticMethod", "METHODS"]


@dataclass(frozen=True)
class AnalyticMethod(Method):
    """One analytic theorem: ``applies`` refines "an Allocation scheme"; ``delta``/``epsilon``
    are the math-layer functions (scheme, at, direction) -> Bound."""

    name: str  # type: ignore[misc]
    citation: str  # type: ignore[misc]
    returns: frozenset  # type: ignore[misc]
    cost: int  # type: ignore[misc]
    applies: Callable[[Allocation], bool]
    delta: Callable[[Allocation, float, Direction], Bound]
    epsilon: Callable[[Allocation, float, Direction], Bound]
    scheme_types: ClassVar[tuple[type, ...]] = (Allocation,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Allocation) and self.applies(scheme)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        if epsilon < 0.0:  # the theorems are stated for ε >= 0; extend by the identity below
            return [_at_negative_epsilon(self.delta(scheme, 0.0, direction), epsilon)]
        return [self.delta(scheme, epsilon, direction)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return [self.epsilon(scheme, delta, direction)]


def _at_negative_epsilon(at_zero: Bound, epsilon: float) -> Bound:
    """A bound on δ(ε) for ε < 0 from one on δ(0), for any pair and direction: with x = P/Q,
    (x − e^ε)_+ <= (x − 1)_+ + (1 − e^ε) when e^ε <= 1, so δ(ε) <= δ(0) + 1 − e^ε (UPPER, rounded
    up); δ is nonincreasing and δ(ε) >= 1 − e^ε (TV >= 0), so δ(ε) >= max(δ(0), 1 − e^ε) (LOWER,
    rounded down)."""
    gap = -math.expm1(epsilon)  # 1 − e^ε in (0, 1], correctly rounded to within an ulp
    if at_zero.side is Side.UPPER:
        value = min(1.0, up(at_zero.value + up(gap)))
    else:
        value = max(at_zero.value, down(gap))
    note = (at_zero.note + "; " if at_zero.note else "") + "ε < 0: from δ(0) by δ(ε) <= δ(0) + 1 − e^ε, δ(ε) >= max(δ(0), 1 − e^ε)"
    return replace(at_zero, value=value, at=epsilon, note=note)


def _one_round(scheme: Allocation) -> bool:
    return scheme.k == 1 and scheme.epochs == 1


def _gaussian(scheme: Allocation) -> bool:
    return isinstance(scheme.pair, Gaussian)


UPPER = frozenset({Guarantee.UPPER})
METHODS = [
    AnalyticMethod(
        "chua-lower", chua_lower.CITATION, frozenset({Guarantee.LOWER}), 1,
        lambda s: _gaussian(s) and _one_round(s), chua_lower_delta, chua_lower_epsilon,
    ),
    AnalyticMethod(
        "decomposition", decomposition.CITATION, UPPER, 2, _one_round, decomposition_delta, decomposition_epsilon
    ),
    AnalyticMethod(
        "truncated-poisson", truncated_poisson.CITATION, UPPER, 3, lambda s: True,
        truncated_poisson_delta, truncated_poisson_epsilon,
    ),
    AnalyticMethod(
        "recursive", recursive.CITATION, UPPER, 3, lambda s: s.steps // s.k >= 2, recursive_delta, recursive_epsilon
    ),
]
