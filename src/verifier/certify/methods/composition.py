"""Composition theorems for T generic (ε_j, δ_j)-DP steps as cheap UPPER certification methods.

They apply to runs made only of (ε_j, δ_j)-DP steps: ``Composed(... Single(ApproxDP(ε₀, δ₀)) ...)``
(T = the product of the ``times``; T = 1 for the Single itself) and Sequences of such phases, whose
steps may differ. Both directions are equal (the pair is symmetric). Below, sums run over all steps.

- ``basic-composition``: the steps are (Σε_j, Σδ_j)-DP (Steinke 2022, Thm 1 for δ_j = 0; for
  δ_j > 0 the first term of the minimum in Thm 22, where its proof's 1 − Π(1 − δ_j) <= Σδ_j gives
  δ = Σδ_j; Dwork, Kenthapadi, McSherry, Mironov & Naor 2006).
- ``advanced-composition``: Steinke 2022, Thm 22 (advanced composition starting with approximate
  DP, adaptive; Dwork, Rothblum & Vadhan 2010, with the chapter's ½Σε_j² in place of DRV's
  Σε_j(e^{ε_j} − 1), footnote 15): for every δ > Σδ_j, with δ' = δ − Σδ_j and S = Σε_j²,
  ε = min{Σε_j, S/2 + √(2 S ln(1/δ'))}. Solved for δ at a given ε > S/2:
  δ = Σδ_j + exp(−(ε − S/2)²/(2S)); for ε >= Σε_j every δ > Σδ_j works, so δ(ε) <= Σδ_j.

Neither is tight: the PLD engine on the same scheme composes the four-point pair exactly, which is
the optimal composition (Kairouz, Oh & Viswanath 2015; Steinke 2022, §7), and both theorems lie
above it. Every value is evaluated in ball arithmetic and rounded up. A query where a theorem says
nothing (ε below its threshold, δ <= Σδ_j) gives no bound.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Sequence

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.certify.method import Guarantee, Method
from verifier.pairs import ApproxDP
from verifier.schemes import Composed, Scheme, Single
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["approx_dp_steps", "BasicComposition", "AdvancedComposition", "METHODS"]


def approx_dp_steps(scheme: Scheme) -> tuple[tuple[ApproxDP, int], ...] | None:
    """The runs (step pair, count) of a scheme made only of ApproxDP steps, else None: one run of T
    for a (Composed of a) Single ApproxDP step, the phases' runs for a Sequence."""
    if isinstance(scheme, SchemeSequence):
        runs = [approx_dp_steps(phase) for phase in scheme.phases]
        return None if any(r is None for r in runs) else tuple(run for r in runs for run in r)
    times = 1
    while isinstance(scheme, Composed):
        times *= scheme.times
        scheme = scheme.scheme
    if isinstance(scheme, Single) and isinstance(scheme.pair, ApproxDP):
        return ((scheme.pair, times),)
    return None


@dataclass(frozen=True)
class _Totals:
    """T, Σε_j, Σε_j² and Σδ_j over every step of the runs (balls; call inside with_precision)."""

    steps: int
    eps: arb
    eps_squared: arb
    delta: arb

    @classmethod
    def of(cls, runs: tuple[tuple[ApproxDP, int], ...]) -> "_Totals":
        zero = arb(0)
        return cls(
            sum(count for _, count in runs),
            sum((count * arb(pair.epsilon0) for pair, count in runs), zero),
            sum((count * arb(pair.epsilon0) ** 2 for pair, count in runs), zero),
            sum((count * arb(pair.delta0) for pair, count in runs), zero),
        )


class _Composition(Method):
    """Shared plumbing: support test and the Bound of one closed-form value (a ball)."""

    returns = frozenset({Guarantee.UPPER})
    cost = 0
    scheme_types = (Single, Composed, SchemeSequence)

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
        runs = approx_dp_steps(scheme)
        with with_precision():
            totals = _Totals.of(runs)
            return self._bound(self._delta(totals, arb(eps)), Quantity.DELTA, eps, direction, totals.steps)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        target = check_open_unit("delta", delta)
        runs = approx_dp_steps(scheme)
        with with_precision():
            totals = _Totals.of(runs)
            return self._bound(self._epsilon(totals, arb(target)), Quantity.EPSILON, target, direction, totals.steps)

    @abc.abstractmethod
    def _delta(self, t: _Totals, eps: arb) -> arb | None:
        """The theorem's δ at ε for the steps summed in ``t``, or None where it says nothing."""

    @abc.abstractmethod
    def _epsilon(self, t: _Totals, delta: arb) -> arb | None:
        """The theorem's ε at δ, or None where it says nothing."""


class BasicComposition(_Composition):
    name = "basic-composition"
    citation = (
        "basic composition: (eps_j, delta_j)-DP steps are (sum eps_j, sum delta_j)-DP (Steinke 2022, Thm 1; "
        "Thm 22, first term, with 1 - prod(1 - delta_j) <= sum delta_j from its proof)"
    )

    def _delta(self, t: _Totals, eps: arb) -> arb | None:
        return t.delta if eps >= t.eps else None

    def _epsilon(self, t: _Totals, delta: arb) -> arb | None:
        return t.eps if delta >= t.delta else None


class AdvancedComposition(_Composition):
    name = "advanced-composition"
    citation = (
        "advanced composition from approximate DP (Steinke 2022, Thm 22; Dwork, Rothblum & Vadhan 2010): "
        "eps = min{sum eps_j, S/2 + sqrt(2 S ln(1/delta'))}, S = sum eps_j^2, delta' = delta - sum delta_j"
    )

    def _delta(self, t: _Totals, eps: arb) -> arb | None:
        if eps >= t.eps:
            return t.delta
        s = t.eps_squared
        if not eps > s / 2:
            return None
        return t.delta + (-((eps - s / 2) ** 2) / (2 * s)).exp()

    def _epsilon(self, t: _Totals, delta: arb) -> arb | None:
        rest = delta - t.delta
        if not rest > 0:
            return None
        s = t.eps_squared
        advanced = s / 2 + (2 * s * (1 / rest).log()).sqrt()
        return advanced.min(t.eps) if s > 0 else t.eps


METHODS = [BasicComposition(), AdvancedComposition()]
