"""The conditional-composition accountant for matrix mechanisms (:mod:`verifier.matrix.conditional`,
Schuchardt & Kalinin Algorithm 4 with the union-bound schedule) as a certification method
("matrix-cc", UPPER bounds): δ(ε) <= δ_PLD(ε) + δ_E, ε(δ) <= ε_PLD(δ − δ_E).

δ_E: for ε(δ) queries δ_E = δ/2 (the paper's choice, App. B.2); for δ(ε) queries the target δ is not
known, so δ_E = DELTA_E (the paper's 0.5e-5, made for δ = 1e-5 claims). The per-step pairs depend
on δ_E (through β), so each δ_E is its own run, cached per (scheme, direction, δ_E).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from verifier._directed import up
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.matrix.conditional import CITATION_CC, cc_pld
from verifier.rdp.matrix import scaled_means
from verifier.schemes import MatrixMechanism, Scheme

__all__ = ["ConditionalComposition", "METHODS", "DELTA_E", "MAX_STEPS"]

#: Failure budget of the bad events for δ(ε) queries.
DELTA_E = 5e-6
#: Largest N·b the method takes on in a certification run (the per-step PLDs dominate the cost).
MAX_STEPS = 1 << 14


@lru_cache(maxsize=8)
def _bracket(scheme: MatrixMechanism, direction: Direction, delta_e: float):
    return cc_pld(scaled_means(scheme), direction, delta_e)


class ConditionalComposition(Method):
    name = "matrix-cc"
    citation = CITATION_CC
    returns = frozenset({Guarantee.UPPER})
    cost = 3
    scheme_types = (MatrixMechanism,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixMechanism) and scheme.strategy.size * scheme.batches <= MAX_STEPS

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        bracket = _bracket(scheme, direction, DELTA_E)
        pld = 0.0 if bracket is None else float(bracket.delta(epsilon).upper)
        value = min(1.0, float(up(pld + DELTA_E)))
        return [Bound(value, Side.UPPER, direction, Quantity.DELTA, epsilon, self.name, self.citation, error_budget=DELTA_E, note=f"delta_E={DELTA_E:g}")]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        delta_e = delta / 2
        bracket = _bracket(scheme, direction, delta_e)
        value = 0.0 if bracket is None else float(bracket.epsilon(delta - delta_e).upper)
        return [Bound(value, Side.UPPER, direction, Quantity.EPSILON, delta, self.name, self.citation, error_budget=delta_e, note=f"delta_E={delta_e:g}")]


METHODS = [ConditionalComposition()]
