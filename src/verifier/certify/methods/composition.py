"""Composition theorems for T generic (ε₀, δ₀)-DP steps as cheap UPPER certification methods.

They apply to ``Composed(... Single(ApproxDP(ε₀, δ₀)) ...)``: T = the product of the ``times``
(T = 1 for the Single itself). Both directions are equal (the pair is symmetric).

- ``basic-composition``: T (ε₀, δ₀)-DP steps are (Tε₀, Tδ₀)-DP (Steinke 2022, Thm 1 for δ₀ = 0; for
  δ₀ > 0 the first term of the minimum in Thm 22, where its proof's 1 − Π(1 − δ_j) <= Σδ_j gives
  δ = Σδ_j; Dwork, Kenthapadi, McSherry, Mironov & Naor 2006).
- ``advanced-composition``: Steinke 2022, Thm 22 (advanced composition starting with approximate
  DP, adaptive; Dwork, Rothblum & Vadhan 2010, with the chapter's ½Σε_j² in place of DRV's
  Σε_j(e^{ε_j} − 1), footnote 15): for every δ > Tδ₀, with δ' = δ − Tδ₀ and S = Tε₀²,
  ε = min{Tε₀, S/2 + √(2 S ln(1/δ'))}. Solved for δ at a given ε > S/2:
  δ = Tδ₀ + exp(−(ε − S/2)²/(2S)); for ε >= Tε₀ every δ > Tδ₀ works, so δ(ε) <= Tδ₀.

Neither is tight: the PLD engine on the same scheme composes the four-point pair exactly, which is
the optimal composition (Kairouz, Oh & Viswanath 2015; Steinke 2022, §7), and both theorems lie
above it. Every value is evaluated in ball arithmetic and rounded up. A query where a theorem says
nothing (ε below its threshold, δ <= Tδ₀) gives no bound.
"""

from __future__ import annotations

import abc
from typing import Sequence

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.certify.method import Guarantee, Method
from verifier.pairs import ApproxDP
from verifier.schemes import Composed, Scheme, Single

__all__ = ["approx_dp_steps", "BasicComposition", "AdvancedComposition", "METHODS"]


def approx_dp_steps(scheme: Scheme) -> tuple[ApproxDP, int] | None:
    """(step pair, T) when ``scheme`` composes T copies of one ApproxDP step, else None."""
    times = 1
    while isinstance(scheme, Composed):
        times *= scheme.times
        scheme = scheme.scheme
    if isinstance(scheme, Single) and isinstance(scheme.pair, ApproxDP):
        return scheme.pair, times
    return None


class _Composition(Method):
    """Shared plumbing: support test and the Bound of one closed-form value (a ball)."""

    returns = frozenset({Guarantee.UPPER})
    cost = 0
    scheme_types = (Single, Composed)

    def supports(self, scheme: Scheme) -> bool:
        return approx_dp_steps(scheme) is not None

    def _bound(self, ball: arb | None, quantity: Quantity, at: float, direction: Direction, steps: int) -> list[Bound]:
        if ball is None:
            return []
        value = arb_bound(ball, Side.UPPER)
        if quantity is Quantity.DELTA:
            value = min(value, 1.0)
        return [Bound(value, Side.UPPER, direction, quantity, at, self.name, self.citation, note=f"T = {steps} steps")]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        eps = check_real("epsilon", epsilon)
        pair, steps = approx_dp_steps(scheme)
        with with_precision():
            ball = self._delta(arb(pair.epsilon0), arb(pair.delta0), steps, arb(eps))
            return self._bound(ball, Quantity.DELTA, eps, direction, steps)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        target = check_open_unit("delta", delta)
        pair, steps = approx_dp_steps(scheme)
        with with_precision():
            ball = self._epsilon(arb(pair.epsilon0), arb(pair.delta0), steps, arb(target))
            return self._bound(ball, Quantity.EPSILON, target, direction, steps)

    @abc.abstractmethod
    def _delta(self, e0: arb, d0: arb, steps: int, eps: arb) -> arb | None:
        """The theorem's δ at ε for T = ``steps`` (ε₀, δ₀)-DP steps, or None where it says nothing."""

    @abc.abstractmethod
    def _epsilon(self, e0: arb, d0: arb, steps: int, delta: arb) -> arb | None:
        """The theorem's ε at δ, or None where it says nothing."""


class BasicComposition(_Composition):
    name = "basic-composition"
    citation = (
        "basic composition: T (eps0, delta0)-DP steps are (T eps0, T delta0)-DP (Steinke 2022, Thm 1; "
        "Thm 22, first term, with 1 - prod(1 - delta_j) <= sum delta_j from its proof)"
    )

    def _delta(self, e0: arb, d0: arb, steps: int, eps: arb) -> arb | None:
        return steps * d0 if eps >= steps * e0 else None

    def _epsilon(self, e0: arb, d0: arb, steps: int, delta: arb) -> arb | None:
        return steps * e0 if delta >= steps * d0 else None


class AdvancedComposition(_Composition):
    name = "advanced-composition"
    citation = (
        "advanced composition from approximate DP (Steinke 2022, Thm 22; Dwork, Rothblum & Vadhan 2010): "
        "eps = min{T eps0, S/2 + sqrt(2 S ln(1/delta'))}, S = T eps0^2, delta' = delta - T delta0"
    )

    def _delta(self, e0: arb, d0: arb, steps: int, eps: arb) -> arb | None:
        if eps >= steps * e0:
            return steps * d0
        s = steps * e0**2
        if not eps > s / 2:
            return None
        return steps * d0 + (-((eps - s / 2) ** 2) / (2 * s)).exp()

    def _epsilon(self, e0: arb, d0: arb, steps: int, delta: arb) -> arb | None:
        rest = delta - steps * d0
        if not rest > 0:
            return None
        s = steps * e0**2
        advanced = s / 2 + (2 * s * (1 / rest).log()).sqrt()
        return advanced.min(steps * e0) if s > 0 else steps * e0


METHODS = [BasicComposition(), AdvancedComposition()]
