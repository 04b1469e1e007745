"""The tight dominating pair of the ε-bounded-range class (the exponential mechanism).

A mechanism is ε-bounded range (ε-BR) when, for every pair of neighbours, its privacy loss takes
values in an interval [a, a + ε] (Durfee & Rogers 2019, arXiv 1905.04273; the exponential mechanism
with weights e^{ε u/(2Δ)} is ε-BR: each score moves by at most Δ, so each log-ratio lies within ε/2
of the log-ratio of the normalisers; Dong, Durfee & Rogers 2020, arXiv 1909.13830).
Its worst single-step hockey-stick divergence is (proofs/selection_mechanisms.py, steps 1-3)::

    sup over ε-BR pairs of H_{e^x}(P‖Q) = (e^{ε/2} − e^{x/2})² / (e^ε − 1)   for |x| <= ε,

(x = 0: tanh(ε/4)), 1 − e^x below −ε and 0 above ε. The pair
below has exactly this divergence at every x, in both directions, so it dominates every ε-BR step
and nothing smaller does: under Q the privacy loss ℓ has density e^{ε/2} e^{−ℓ/2} / (2(e^ε − 1)) on
[−ε, ε] (under P, the same with e^{+ℓ/2}). It is not itself ε-BR (its loss spans [−ε, ε]): each
x is attained by a different two-candidate exponential mechanism, so the pair's composition is an
UPPER bound for compositions of ε-BR steps, not an attained one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_positive
from verifier.pairs.base import DominatingPair, eps0_range_issue

__all__ = ["BoundedRange"]


@dataclass(frozen=True)
class BoundedRange(DominatingPair):
    """The ε-BR class's tight dominating pair (module docstring), ε = ``epsilon0``. Symmetric (ℓ ↦ −ℓ
    swaps P and Q), so both directions are equal."""

    epsilon0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon0", check_positive("epsilon0", self.epsilon0))

    def float_range_issue(self) -> str | None:
        """Float methods need e^ε finite and ε a normal binary64 number."""
        if self.epsilon0 < 1e-200:
            return f"epsilon0 = {self.epsilon0:g} underflows the binary64 range this method computes in (>= 1e-200)"
        return eps0_range_issue("epsilon0", self.epsilon0)

    def _eps(self) -> arb:
        return arb(self.epsilon0)

    def _norm(self) -> arb:
        """2 sinh(ε/2) = e^{ε/2} − e^{−ε/2}: the CDFs below are differences of e^{±x/2} over it."""
        return 2 * (self._eps() / 2).sinh()

    def swapped(self) -> "BoundedRange":
        return self

    def _max_loss_arb(self) -> arb:
        """ℓ <= ε, the density reaching it (no atom)."""
        return self._eps()

    def _delta_arb(self, epsilon: arb) -> arb:
        """(1 − e^{(x−ε)/2})² / (1 − e^{−ε}) for |x| <= ε (the module's formula with e^ε factored out),
        1 − e^x below −ε, 0 above ε; the pieces agree at ±ε, so a ball straddling them is joined."""
        e = self._eps()
        if epsilon >= e:
            return arb(0)
        if epsilon <= -e:
            return -epsilon.expm1()
        inner = ((epsilon - e) / 2).expm1() ** 2 / (-(-e).expm1())
        if epsilon > -e and epsilon < e:
            return inner
        return inner.union(-epsilon.expm1() if epsilon < 0 else arb(0))

    def _moment_arb(self, a: arb) -> arb:
        """E_Q[e^{aℓ}] = sinh(bε) / (2b sinh(ε/2)) with b = a − ½ (ε / (2 sinh(ε/2)) at b = 0)."""
        e = self._eps()
        b = a - arb(0.5)
        half = (e / 2).sinh()
        if b == 0:
            return e / (2 * half)
        return (b * e).sinh() / (2 * b * half)

    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α = ln E_Q[e^{αℓ}] / (α − 1)."""
        return self._moment_arb(alpha).log() / (alpha - 1)

    # Loss law (no atoms): P(ℓ <= x) = (e^{x/2} − e^{−ε/2}) / (2 sinh(ε/2)),
    #                      Q(ℓ <= x) = (e^{ε/2} − e^{−x/2}) / (2 sinh(ε/2)) on [−ε, ε].
    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        e = self._eps()
        if x <= -e:
            return arb(0)
        if x >= e:
            return arb(1)
        if under is Measure.P:
            inner = ((x / 2).exp() - (-e / 2).exp()) / self._norm()
        else:
            inner = ((e / 2).exp() - (-x / 2).exp()) / self._norm()
        if x > -e and x < e:
            return inner
        return inner.union(arb(0) if x < 0 else arb(1))

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """P(ℓ > x) written as its own difference (no cancellation against 1 in the upper tail)."""
        e = self._eps()
        if x <= -e:
            return arb(1)
        if x >= e:
            return arb(0)
        if under is Measure.P:
            inner = ((e / 2).exp() - (x / 2).exp()) / self._norm()
        else:
            inner = ((-x / 2).exp() - (-e / 2).exp()) / self._norm()
        if x > -e and x < e:
            return inner
        return inner.union(arb(0) if x > 0 else arb(1))

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        e = self.epsilon0
        xc = np.clip(x, -e, e)
        norm = 2.0 * np.sinh(e / 2)
        if under is Measure.P:
            return (np.exp(xc / 2) - np.exp(-e / 2)) / norm
        return (np.exp(e / 2) - np.exp(-xc / 2)) / norm

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        e = self.epsilon0
        xc = np.clip(x, -e, e)
        norm = 2.0 * np.sinh(e / 2)
        if under is Measure.P:
            return (np.exp(e / 2) - np.exp(xc / 2)) / norm
        return (np.exp(-xc / 2) - np.exp(-e / 2)) / norm

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        e = self.epsilon0
        norm = 2.0 * np.sinh(e / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            if under is Measure.P:
                x = 2.0 * np.log(np.exp(-e / 2) + norm * q)
            else:
                x = -2.0 * np.log(np.exp(e / 2) - norm * q)
        return np.clip(x, -e, e)

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        return self._loss_quantile(rng.random(size), under)
