"""zCDP as a certification method ("zcdp", cost 1): UPPER bounds on δ(ε) and ε(δ) from the scheme's ρ
(:func:`verifier.rdp.zcdp.rho_upper`) by the chapter's two conversions, and bounds on ρ itself for
zCDP claims.

- δ(ε), ε(δ): Steinke 2022, Prop 14 with the best t (``zcdp:prop14``) and the standard
  ε = ρ + 2√(ρ ln(1/δ)) of Remark 15 (``zcdp:standard``), both rigorous UPPER bounds, in either
  direction (ρ-zCDP bounds both). The first is never above the second.
- ρ (:meth:`ZCDP.rho_bounds`): UPPER ρ from the registry (closed forms: Gaussian Lemma 12, pure DP
  Prop 16, composition Thm 13, also of a Sequence's phases), and LOWER max_α D_α/α over a grid of orders from rigorous lower
  bounds on D_α (Def 11: a ρ-zCDP scheme has D_α <= αρ at every order, so one order where
  D_α > αρ refutes the claim; D_α = +∞, e.g. ApproxDP with δ₀ > 0, refutes every ρ).
"""

from __future__ import annotations

import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.rdp.conversion import Conversion, Converted
from verifier.rdp.zcdp import RHO_CITATION, delta_from_rho, epsilon_from_rho, rho_lower_at, rho_upper
from verifier.schemes import Sequence as SchemeSequence
from verifier.schemes import Composed, PoissonReplaceOne, Scheme, Single, WithoutReplacement, ZCDP

__all__ = ["ZCDP", "METHODS", "RHO_ORDERS"]

#: Orders at which D_α/α is bounded from below for the ρ lower bound (D_α/α of a Gaussian is the
#: same at every order; other pairs peak at small or large orders, so the grid spans both; a Laplace or
#: randomized-response pair peaks at α → 1, its KL divergence, which 1.0001 reaches to ~1e-4).
RHO_ORDERS = (1.0001, 1.001, 1.01, 1.1, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0, 256.0)

_CONVERSIONS = {
    Conversion.IMPROVED: ("zcdp:prop14", "Steinke 2022, Prop 14 (inf over t)"),
    Conversion.CLASSICAL: ("zcdp:standard", "Steinke 2022, Remark 15 (eps = rho + 2 sqrt(rho ln(1/delta)))"),
}


class ZCDP(Method):
    name = "zcdp"
    citation = RHO_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 1  # closed forms, but never tighter than the exact method (cost 0) where both apply
    scheme_types = (Single, Composed, SchemeSequence, WithoutReplacement, PoissonReplaceOne, ZCDP)

    def supports(self, scheme: Scheme) -> bool:
        """Schemes with a known ρ, or (for zCDP claims) a Rényi lower bound."""
        if type(scheme) not in self.scheme_types:
            return False
        try:
            rho_upper(scheme)
            return True
        except NotApplicable:
            pass
        try:
            rho_lower_at(scheme, 2.0, Direction.REMOVE)
            return True
        except NotApplicable:
            return False

    def _bound(self, found: Converted, quantity: Quantity, at: float, direction: Direction, rho: float) -> Bound:
        method, source = _CONVERSIONS[found.conversion]
        note = f"rho <= {rho!r}; order alpha = {found.order:.6g}"
        return Bound(found.value, Side.UPPER, direction, quantity, at, method, f"{self.citation}; {source}", note=note)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        rho = rho_upper(scheme)
        return [self._bound(delta_from_rho(rho, epsilon, c), Quantity.DELTA, epsilon, direction, rho) for c in _CONVERSIONS]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        rho = rho_upper(scheme)
        return [self._bound(epsilon_from_rho(rho, delta, c), Quantity.EPSILON, delta, direction, rho) for c in _CONVERSIONS]

    def rho_bounds(self, scheme: Scheme, direction: Direction) -> Sequence[Bound]:
        """UPPER ρ where known (``at`` = +∞: every order) and the best LOWER D_α/α over
        :data:`RHO_ORDERS` (``at`` = that order)."""
        bounds = []
        try:
            bounds.append(Bound(rho_upper(scheme), Side.UPPER, direction, Quantity.RHO, math.inf, self.name, self.citation))
        except NotApplicable:
            pass
        lowers = [(rho_lower_at(scheme, a, direction), a) for a in RHO_ORDERS]
        value, order = max(lowers)
        note = f"D_alpha/alpha at alpha = {order:g} from a rigorous lower bound on D_alpha (Def 11)"
        bounds.append(Bound(value, Side.LOWER, direction, Quantity.RHO, order, self.name, self.citation, note=note))
        return bounds


METHODS = [ZCDP()]
