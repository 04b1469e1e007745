"""The canonical dominating pair of an (ε₀, δ₀)-DP mechanism: (ε₀, δ₀)-randomized response.

Every pair (P, Q) with P(S) <= e^{ε₀} Q(S) + δ₀ and Q(S) <= e^{ε₀} P(S) + δ₀ for all S is a
post-processing of this four-point pair (Steinke 2022, Lemma 23 and Cor 24; Kairouz, Oh &
Viswanath 2015), so it dominates every (ε₀, δ₀)-DP mechanism in both directions, and composing T
copies through the PLD engine is the *optimal* composition of T (ε₀, δ₀)-DP mechanisms (Steinke
2022, §7: the Kairouz–Oh–Viswanath closed form is the hockey-stick curve of this product).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb, ctx


from verifier._validation import check_half_open_unit, check_integer, check_nonnegative
from verifier.pairs.base import eps0_range_issue
from verifier.pairs.finite import FinitePair

__all__ = ["ApproxDP", "ApproxDPComposition"]


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

    def float_range_issue(self) -> str | None:
        """Float methods need e^ε0 finite (:func:`eps0_range_issue`)."""
        return eps0_range_issue("ε0", self.epsilon0)

    def swapped(self) -> "ApproxDP":
        return self

    def _max_loss_arb(self) -> arb | None:
        """ε₀ for δ₀ = 0; +∞ (None) otherwise (the (0, ⊥) outcome)."""
        return arb(self.epsilon0) if self.delta0 == 0.0 else None

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

    def composed(self, times: int) -> "ApproxDPComposition":
        """The ``times``-fold product of this pair, as one finite pair (its exact hockey-stick
        curve is the Kairouz–Oh–Viswanath optimal composition)."""
        return ApproxDPComposition(self.epsilon0, self.delta0, times)


@functools.lru_cache(maxsize=8)
def _composition_masses(epsilon0: float, delta0: float, times: int, bits: int) -> tuple[list[arb], list[arb]]:
    """(P, Q) of :class:`ApproxDPComposition` as balls at ``bits`` of precision (memoised: every
    δ(ε) evaluation of a bisection reuses them)."""
    big = arb(epsilon0).exp()
    kept = (1 - arb(delta0)) ** times
    scale = kept / (1 + big) ** times
    p = [scale * arb.bin_uiui(times, l) * big**l for l in range(times + 1)]
    q = p[::-1]
    if delta0 == 0.0:
        return p, q
    zero = arb(0)
    return [1 - kept, *p, zero], [zero, *q, 1 - kept]


@dataclass(frozen=True)
class ApproxDPComposition(FinitePair):
    """The T-fold product of ApproxDP(ε₀, δ₀), grouped by privacy loss: T + 1 outcomes
    l = 0 … T with loss (2l − T)ε₀ and masses P_l = (1−δ₀)^T C(T,l) e^{lε₀}/(1+e^{ε₀})^T,
    Q_l = (1−δ₀)^T C(T,l) e^{(T−l)ε₀}/(1+e^{ε₀})^T, and for δ₀ > 0 the outcomes "some step fell
    on ⊥" with P-mass (resp. Q-mass) 1 − (1−δ₀)^T and loss +∞ (resp. −∞). (The rare outcomes
    where both (0, ⊥) and (1, ⊥) occur have P = Q = 0 and are left out.)

    Its δ(ε) is the Kairouz–Oh–Viswanath optimal composition of T (ε₀, δ₀)-DP mechanisms
    (Steinke 2022, §7; notes §7, D9; proofs/approx_dp.py checks it against the product for T = 2, 3),
    evaluated as an exact finite sum in ball arithmetic: O(T) per query.
    """

    epsilon0: float
    delta0: float
    times: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon0", check_nonnegative("epsilon0", self.epsilon0))
        object.__setattr__(self, "delta0", check_half_open_unit("delta0", self.delta0))
        object.__setattr__(self, "times", check_integer("times", self.times, minimum=1))

    def swapped(self) -> "ApproxDPComposition":
        return self

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        return _composition_masses(self.epsilon0, self.delta0, self.times, ctx.prec)

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        from scipy import special

        t, l = self.times, np.arange(self.times + 1)
        log_kept = t * math.log1p(-self.delta0)
        log_p = (log_kept + special.gammaln(t + 1) - special.gammaln(l + 1) - special.gammaln(t - l + 1)
                 + l * self.epsilon0 - t * np.logaddexp(0.0, self.epsilon0))
        p = np.exp(log_p)
        if self.delta0 == 0.0:
            return p, p[::-1].copy()
        lost = -math.expm1(log_kept)
        return np.concatenate([[lost], p, [0.0]]), np.concatenate([[0.0], p[::-1], [lost]])

    def _loss_order(self, x: arb) -> list[int | None]:
        """The losses are exactly +∞, (2l − T)ε₀ for l = 0 … T, −∞: compared exactly."""
        e0 = arb(self.epsilon0)
        finite = [(2 * l - self.times) * e0 for l in range(self.times + 1)]
        signs = [1 if v > x else -1 if v < x else 0 if v == x else None for v in finite]
        return signs if self.delta0 == 0.0 else [1, *signs, -1]
