"""The Poisson-subsampled pair: one step that includes the element with probability λ.

With (P, Q) the base pair, the step's output law is M = λP + (1 − λ)Q with the element and Q
without it (Steinke 2022, §6.2, mixture representation). REMOVE is H(M‖Q), ADD is H(Q‖M); the
exact profiles follow from generalised advanced joint convexity (Balle, Barthe & Gaboardi 2018,
Thm 2; Feldman & Shenfeld, Claim D.3; random-allocation notes §1.5), written here for every κ = e^ε:

- REMOVE: H_κ(M‖Q) = 1 − κ for κ <= 1 − λ (M >= (1 − λ)Q >= κQ pointwise), and
  λ·H_{κ'}(P‖Q) with κ' = 1 + (κ − 1)/λ for κ > 1 − λ (since M − κQ = λ(P − κ'Q)). This is the
  composition-notes formula §13 D3, also for κ < 1 (checked numerically in tests/pld).
- ADD: H_κ(Q‖M) = sup_S (1 − κ(1 − λ))Q(S) − κλP(S) = β·H_{κ''}(Q‖P) with β = 1 − κ(1 − λ) and
  κ'' = κλ/β when β > 0, and 0 when β <= 0 (Claim D.3's second form with the roles of P and Q
  as in this pair).

The privacy loss is ℓ' = ln(1 − λ + λe^ℓ) with ℓ = ln(P/Q) of the base pair (Lemma A.4 of the
random-allocation PLD paper); its laws come from the base pair's laws under P and Q.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb, ctx

from verifier._directed import with_precision
from verifier._types import Measure
from verifier._validation import check_unit
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs.base import DominatingPair

__all__ = ["PoissonSubsampled"]

#: Bisection steps of the numeric loss quantile (float accuracy, like every loss law): 64 halvings
#: take the starting interval (width < 10^4) below 10^-15.
_QUANTILE_STEPS = 64


@functools.lru_cache(maxsize=64)
def _rate_balls(rate: float, bits: int) -> tuple[arb, arb, arb, arb]:
    """(λ, −λ, 1 − λ, ln λ) as balls at ``bits`` of precision, computed once per rate: a profile is
    evaluated at many ε (the rate is validated to lie in (0, 1], so ln λ is finite)."""
    with with_precision(bits):
        lam = arb(rate)
        return lam, -lam, 1 - lam, lam.log()


@dataclass(frozen=True)
class PoissonSubsampled(DominatingPair):
    """The pair (λP + (1 − λ)Q, Q) of a Poisson-subsampled step of ``pair`` at rate λ = ``rate``
    (REMOVE orientation). :meth:`swapped` is the ADD pair (Q, λP + (1 − λ)Q)."""

    pair: DominatingPair
    rate: float
    add_orientation: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.pair, DominatingPair):
            raise InvalidArgument("pair", self.pair, "must be a DominatingPair (e.g. Gaussian(sigma=1.0))")
        rate = check_unit("rate", self.rate)
        if rate == 0.0:
            raise InvalidArgument("rate", self.rate, "must lie in (0, 1] (rate 0 releases nothing)")
        object.__setattr__(self, "rate", rate)
        if not isinstance(self.add_orientation, bool):
            raise InvalidArgument("add_orientation", self.add_orientation, "must be a bool")

    def swapped(self) -> "PoissonSubsampled":
        return PoissonSubsampled(self.pair, self.rate, not self.add_orientation)

    # ---- profiles ------------------------------------------------------------------------------

    def _delta_arb(self, epsilon: arb) -> arb:
        lam, neg_lam, keep, log_lam = _rate_balls(self.rate, ctx.prec)
        if self.add_orientation:
            return self._add_delta(epsilon, keep, log_lam)
        return self._remove_delta(epsilon, lam, neg_lam)

    def _remove_delta(self, epsilon: arb, lam: arb, neg_lam: arb) -> arb:
        """H_κ(M‖Q): 1 − κ for κ <= 1 − λ, else λ·H_{κ'}(P‖Q), ln κ' = log1p(expm1(ε)/λ)."""
        shifted = epsilon.expm1()  # κ − 1
        if shifted <= neg_lam:
            return -shifted
        inner = lam * self.pair._delta_arb((shifted / lam).log1p())
        if shifted > neg_lam:
            return inner
        return inner.union(-shifted)  # the two forms agree (= λ) at κ = 1 − λ

    def _add_delta(self, epsilon: arb, keep: arb, log_lam: arb) -> arb:
        """H_κ(Q‖M) = β·H_{κ''}(Q‖P), β = 1 − κ(1 − λ), ln κ'' = ε + ln λ − ln β; 0 for β <= 0
        (``keep`` = 1 − λ, ``log_lam`` = ln λ)."""
        kappa = epsilon.exp()
        beta = 1 - kappa * keep
        if beta <= 0:
            return arb(0)
        base = self.pair.swapped()
        inner = beta * base._delta_arb(epsilon + log_lam - beta.log())
        if beta > 0:
            return inner
        return inner.union(arb(0))  # both forms tend to 0 as β → 0

    def _infinite_loss_mass_arb(self) -> arb:
        """REMOVE: M(Q = 0) = λ·P(Q = 0). ADD: Q(M = 0) = Q(P = 0 and Q = 0) = 0 for λ < 1."""
        if self.add_orientation:
            return self.pair.swapped()._infinite_loss_mass_arb() if self.rate == 1.0 else arb(0)
        return arb(self.rate) * self.pair._infinite_loss_mass_arb()

    def _max_loss_arb(self) -> arb | None:
        """ℓ' = ln(1 − λ + λe^ℓ) is increasing in ℓ, so REMOVE: ln(1 + λ(e^L − 1)) with L the base
        pair's largest loss (+∞ with it); ADD: the loss ln(Q/M) = −ln(1 − λ + λe^ℓ) is largest at
        the smallest ℓ under Q, −L' with L' the base pair's largest ADD loss: −ln(1 − λ(1 − e^{−L'})),
        and −ln(1 − λ) where L' = +∞ (+∞ at λ = 1). (The ε0-DP amplification of Balle et al. 2018, Thm 8,
        in both directions.)"""
        lam = arb(self.rate)
        if not self.add_orientation:
            top = self.pair._max_loss_arb()
            return None if top is None else (lam * top.expm1()).log1p()
        top = self.pair.swapped()._max_loss_arb()
        if top is None:
            return None if self.rate == 1.0 else -(-lam).log1p()
        return -(lam * (-top).expm1()).log1p()

    def _moment_arb(self, a: arb) -> arb:
        """REMOVE, integer a: E_Q[(1 − λ + λX)^a] = Σ_k C(a,k)(1 − λ)^{a−k}λ^k E_Q[X^k], X = P/Q."""
        order = _integer_order(a, "moment order a")
        if self.add_orientation:
            raise NotApplicable("moments of the ADD subsampled pair are not implemented (use the RDP module)")
        lam = arb(self.rate)
        total = arb(0)
        for k in range(order + 1):
            total += arb(math.comb(order, k)) * (1 - lam) ** (order - k) * lam**k * self.pair._moment_arb(arb(k))
        return total

    def _renyi_arb(self, alpha: arb) -> arb:
        """REMOVE, integer α: D_α(M‖Q) = ln E_Q[(M/Q)^α]/(α − 1) (Steinke 2022, Thm 34's exact sum);
        +∞ when M has mass where Q = 0."""
        if self.add_orientation:
            raise NotApplicable("Rényi divergence of the ADD subsampled pair is not implemented (use the RDP module)")
        if self._infinite_loss_mass_arb() > 0:
            return arb.pos_inf()
        return self._moment_arb(alpha).log() / (alpha - 1)

    # ---- loss laws (float accuracy) ------------------------------------------------------------

    def _base_threshold(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """ℓ' <= x ⇔ ℓ <= ln((e^x − 1 + λ)/λ) (−∞ where e^x <= 1 − λ)."""
        lam = self.rate
        with np.errstate(divide="ignore", invalid="ignore"):
            arg = np.expm1(x) / lam
            out = np.where(arg > -1.0, np.log1p(np.maximum(arg, -1.0)), -np.inf)
        return out

    def _remove_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        """P(ℓ' <= x) (or < x) under M (``Measure.P``) or Q, for the REMOVE loss ℓ'."""
        lam = self.rate
        t = self._base_threshold(x)
        below = np.asarray(x) < math.log1p(-lam) if lam < 1 else np.zeros(np.shape(x), dtype=bool)
        under_q = self.pair._loss_cdf(t, Measure.Q, inclusive)
        if under is Measure.Q:
            out = under_q
        else:
            out = lam * self.pair._loss_cdf(t, Measure.P, inclusive) + (1 - lam) * under_q
        return np.where(below, 0.0, np.clip(out, 0.0, 1.0))

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        if not self.add_orientation:
            return self._remove_cdf(x, under, inclusive)
        # ADD loss −ℓ' with (P, Q) of this pair = (Q, M): P(−ℓ' <= x) = 1 − P(ℓ' < −x).
        swapped = Measure.Q if under is Measure.P else Measure.P
        return 1.0 - self._remove_cdf(-np.asarray(x), swapped, not inclusive)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _remove_law_arb(self, x: arb, under: Measure, below: bool, inclusive: bool) -> arb:
        """P(ℓ' <= x) (``below``, or < x) or P(ℓ' >= x) (or > x) for the REMOVE loss ℓ', as a ball
        from the base pair's balls at the threshold ln(1 + (e^x − 1)/λ) (ℓ' is increasing in ℓ);
        ℓ' >= ln(1 − λ) always, so below that point the CDF is 0."""
        lam = arb(self.rate)
        arg = x.expm1() / lam
        if arg < -1:
            return arb(0) if below else arb(1)
        if not arg > -1:
            return arb(0).union(arb(1))  # x within rounding of ln(1 − λ): the law is not resolved
        threshold = arg.log1p()
        law = self.pair._loss_cdf_arb if below else self.pair._loss_sf_arb
        under_q = law(threshold, Measure.Q, inclusive)
        if under is Measure.Q:
            return under_q
        return lam * law(threshold, Measure.P, inclusive) + (1 - lam) * under_q

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        if not self.add_orientation:
            return self._remove_law_arb(x, under, True, inclusive)
        # ADD loss −ℓ' with (P, Q) = (Q, M): P(−ℓ' <= x) = P(ℓ' >= −x) under the swapped measure
        return self._remove_law_arb(-x, _other(under), False, inclusive)

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        if not self.add_orientation:
            return self._remove_law_arb(x, under, False, inclusive)
        return self._remove_law_arb(-x, _other(under), True, inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """Smallest x with P(L <= x) >= q, by bisection on the CDF (float accuracy)."""
        qs = np.asarray(q, dtype=float)
        base = self.pair._loss_quantile(np.array([1e-300, 1 - 1e-16]), Measure.P)
        span = float(np.max(np.abs(base[np.isfinite(base)]))) if np.isfinite(base).any() else 50.0
        lo = np.full(qs.shape, -(span + 50.0))
        hi = np.full(qs.shape, span + 50.0)
        for _ in range(_QUANTILE_STEPS):
            mid = 0.5 * (lo + hi)
            ok = self._loss_cdf(mid, under, True) >= qs
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return hi

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        lam = self.rate
        first = (under is Measure.P) != self.add_orientation  # drawing from M?
        if first:
            from_p = rng.random(size) < lam
            base = np.where(
                from_p,
                self.pair._sample_loss(size, rng, Measure.P),
                self.pair._sample_loss(size, rng, Measure.Q),
            )
        else:
            base = self.pair._sample_loss(size, rng, Measure.Q)
        with np.errstate(over="ignore"):
            loss = np.log1p(lam * np.expm1(base))  # ln(1 − λ + λe^ℓ)
        return -loss if self.add_orientation else loss


def _other(under: Measure) -> Measure:
    return Measure.Q if under is Measure.P else Measure.P


def _integer_order(a: arb, name: str) -> int:
    """The integer value of a ball that is exactly an integer, else NotApplicable."""
    if not a.is_exact() or not a.is_integer():
        raise NotApplicable(f"{name}={a} is not an integer; only integer orders are implemented here")
    return int(a.unique_fmpz())
