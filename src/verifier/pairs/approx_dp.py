"""The canonical dominating pair of an (ε₀, δ₀)-DP mechanism: (ε₀, δ₀)-randomized response.

Every pair (P, Q) with P(S) <= e^{ε₀} Q(S) + δ₀ and Q(S) <= e^{ε₀} P(S) + δ₀ for all S is a
post-processing of this four-point pair (Steinke 2022, Lemma 23 and Cor 24; Kairouz, Oh &
Viswanath 2015), so it dominates every (ε₀, δ₀)-DP mechanism in both directions, and composing T
copies through the PLD engine is the *optimal* composition of T (ε₀, δ₀)-DP mechanisms (Steinke
2022, §7: the Kairouz–Oh–Viswanath closed form is the hockey-stick curve of this product).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._validation import check_half_open_unit, check_nonnegative
from verifier.pairs.finite import FinitePair

__all__ = ["ApproxDP"]


@dataclass(frozen=True)
class ApproxDP(FinitePair):
    """(ε₀, δ₀)-randomized response, the worst case of every (ε₀, δ₀)-DP mechanism (module doc).

    Outcomes (Steinke 2022, Cor 24, with ⊤/⊥ as in notes §12 item 5) and their privacy losses
    ℓ = ln(P/Q):

    ========  ==========================  ==========================  ======
    outcome   P                           Q                           ℓ
    ========  ==========================  ==========================  ======
    (0, ⊥)    δ₀                          0                           +∞
    (0, ⊤)    (1−δ₀) e^{ε₀}/(1+e^{ε₀})    (1−δ₀)/(1+e^{ε₀})           ε₀
    (1, ⊤)    (1−δ₀)/(1+e^{ε₀})           (1−δ₀) e^{ε₀}/(1+e^{ε₀})    −ε₀
    (1, ⊥)    0                           δ₀                          −∞
    ========  ==========================  ==========================  ======

    For every real ε (proofs/approx_dp.py),
    δ(ε) = 1 − (1−δ₀)e^ε for ε < −ε₀, δ₀ + (1−δ₀)(e^{ε₀} − e^ε)/(1+e^{ε₀}) for −ε₀ <= ε < ε₀, and
    δ₀ for ε >= ε₀. Relabelling swaps P and Q, so both directions are equal. D_α = +∞ for δ₀ > 0
    (P has mass where Q has none); for δ₀ = 0 the pair is binary randomized response with ε₀ and
    the ⊥ outcomes are left out.
    """

    epsilon0: float
    delta0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon0", check_nonnegative("epsilon0", self.epsilon0))
        object.__setattr__(self, "delta0", check_half_open_unit("delta0", self.delta0))

    def swapped(self) -> "ApproxDP":
        return self

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        big = arb(self.epsilon0).exp()
        rest = 1 - arb(self.delta0)
        top, bottom = rest * big / (1 + big), rest / (1 + big)
        if self.delta0 == 0.0:
            return [top, bottom], [bottom, top]
        d0, zero = arb(self.delta0), arb(0)
        return [d0, top, bottom, zero], [zero, bottom, top, d0]

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        big = math.exp(self.epsilon0)
        rest = 1.0 - self.delta0
        top, bottom = rest * big / (1.0 + big), rest / (1.0 + big)
        if self.delta0 == 0.0:
            return np.array([top, bottom]), np.array([bottom, top])
        return np.array([self.delta0, top, bottom, 0.0]), np.array([0.0, bottom, top, self.delta0])

    def _loss_order(self, x: arb) -> list[int | None]:
        """The losses are exactly +∞, ε₀, −ε₀, −∞ (the float ε₀ is exact): compared exactly."""
        e0 = arb(self.epsilon0)
        finite = [1 if v > x else -1 if v < x else 0 if v == x else None for v in (e0, -e0)]
        return finite if self.delta0 == 0.0 else [1, *finite, -1]
