"""The Rényi-DP accountant as a certification method ("rdp", UPPER bounds only).

For each direction: the scheme's RDP curve (:func:`verifier.rdp.curve_for`: exact integer orders for
Poisson subsampling and random allocation (remove), proven bounds elsewhere; a Sequence's is the
sum of its phases' curves, Steinke 2022, Lemma 31) converted to (ε, δ)
with the improved conversion (Steinke 2022, Prop 14 / Lemma 33.8), the best order chosen over the
integers 2…256 and refined on fractional orders; every candidate is a rigorous upper bound. For the
add direction of Gaussian random allocation it also returns Feldman & Shenfeld's Cor 4.10 (add)
bound (sign corrected), which is usually much tighter than the add RDP curve. For the classes known
only through a Rényi bound (a (ξ, ρ)-zCDP step, repeat-and-select; :mod:`verifier.rdp.classes`) it is
the UPPER side of their brackets.
"""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pairs import Gaussian
from verifier.rdp import (
    Conversion,
    Converted,
    CURVES,
    allocation_add_gaussian_delta,
    allocation_add_gaussian_epsilon,
    delta_upper_for,
    epsilon_upper_for,
)
from verifier.rdp.accountant import fractional_floor
from verifier.rdp.allocation import CITATION_ADD_DELTA
from verifier.schemes import Sequence as SchemeSequence
from verifier.schemes import Allocation, CheckIn, Composed, MatrixMechanism, Poisson, PoissonReplaceOne, Scheme, Single, WithoutReplacement
from verifier.schemes import RepeatAndSelect, SampledZCDP, ZCDP

__all__ = ["RenyiAccountant", "METHODS"]


def _supported(scheme: Scheme) -> bool:
    while isinstance(scheme, Composed):
        scheme = scheme.scheme
    if isinstance(scheme, SchemeSequence):
        return all(_supported(phase) for phase in scheme.phases)
    if isinstance(scheme, RepeatAndSelect):
        return _supported(scheme.scheme)
    return type(scheme) in CURVES


def _gaussian_allocation(scheme: Scheme) -> Allocation | None:
    if isinstance(scheme, Allocation) and isinstance(scheme.pair, Gaussian):
        return scheme
    return None


class RenyiAccountant(Method):
    name = "rdp"
    citation = "Renyi DP accountant: Steinke 2022 Thm 34/35 + Prop 14; WBK 2019 Thm 9; Feldman & Shenfeld Thm 4.8/4.9; Schuchardt & Kalinin Alg 1-2"
    returns = frozenset({Guarantee.UPPER})
    cost = 1
    scheme_types = (Single, Composed, Poisson, Allocation, SchemeSequence, MatrixMechanism, CheckIn, WithoutReplacement, PoissonReplaceOne, ZCDP, SampledZCDP, RepeatAndSelect)

    def supports(self, scheme: Scheme) -> bool:
        return _supported(scheme)

    def _bound(self, found: Converted, quantity: Quantity, at: float, direction: Direction) -> Bound:
        kind = "exact" if found.exact_order else "an upper bound on the"
        note = f"best order alpha={found.order:g} ({kind} RDP there), {found.conversion.value} conversion"
        return Bound(found.value, Side.UPPER, direction, quantity, at, self.name, f"{self.citation}; {found.conversion.citation}", note=note)

    def _collect(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction, fractional: bool = True) -> list[Bound]:
        if quantity is Quantity.DELTA:
            found = delta_upper_for(scheme, at, direction, Conversion.IMPROVED, fractional=fractional)
        else:
            found = epsilon_upper_for(scheme, at, direction, Conversion.IMPROVED, fractional=fractional)
        bounds = [self._bound(found, quantity, at, direction)]
        alloc = _gaussian_allocation(scheme)
        if alloc is not None and direction is Direction.ADD:
            direct = allocation_add_gaussian_delta if quantity is Quantity.DELTA else allocation_add_gaussian_epsilon
            value = direct(alloc.pair, alloc.steps, at, alloc.k, alloc.epochs)
            bounds.append(Bound(value, Side.UPPER, direction, quantity, at, "rdp:cor4.10-add", CITATION_ADD_DELTA))
        return bounds

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.EPSILON, delta, direction)

    def claim_bounds(
        self, scheme: Scheme, epsilon: float, delta: float, direction: Direction
    ) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds on δ(``epsilon``) and ε(``delta``) for deciding the claim: the integer orders' bounds
        where they decide it or where the search over fractional orders could not reach it
        (:func:`fractional_floor` above the claimed ε: at each order, the δ conversion is <= δ exactly
        when the ε conversion is <= ε); otherwise both searched over fractional orders (Opacus-style
        claim: 0.07 s instead of 0.5 s where the integer orders decide at ε = 2, or cannot at 1.0)."""
        coarse = (
            self._collect(scheme, Quantity.DELTA, epsilon, direction, fractional=False),
            self._collect(scheme, Quantity.EPSILON, delta, direction, fractional=False),
        )
        decided = any(b.value <= delta for b in coarse[0]) or any(b.value <= epsilon for b in coarse[1])
        if decided or fractional_floor(scheme, delta, direction) > epsilon:
            return coarse
        return self._collect(scheme, Quantity.DELTA, epsilon, direction), self._collect(scheme, Quantity.EPSILON, delta, direction)


METHODS = [RenyiAccountant()]
