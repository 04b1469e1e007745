"""The antipodal Poisson pair: one Poisson-sampled Gaussian step whose target record is replaced by
its opposite, the pair dp_accounting's PLD accountant uses for REPLACE_ONE.

With noise σ, records of norm at most C and every other record contributing 0, a step that
includes the target with probability λ outputs

    P̃ = λN(C, σ²) + (1 − λ)N(0, σ²)   (target x, contribution +C),
    Q̃ = λN(−C, σ²) + (1 − λ)N(0, σ²)  (target replaced by x', contribution −C),

an attained pair of replace-one neighbours (so its profile is a LOWER bound on any claim about
Poisson sampling under replace-one). It is also the worst case: every step of such a run, given the
history and the other records, is ((1 − λ)N(0) + λN(x), (1 − λ)N(0) + λN(x')) up to translation with
‖x‖, ‖x'‖ <= C, and its hockey stick is at most this pair's at every κ >= 0 (it falls as ⟨x, x'⟩
grows: Plackett's identity; proofs/antipodal_dominance.py), so the pair DOMINATES and verifier uses
it for both sides (verifier.pld.schemes). It is symmetric: the reflection y ↦ −y swaps P̃ and Q̃.

With z = y/σ and c = C/σ the privacy loss is
ℓ(z) = ln(1 − λ + λe^{cz − c²/2}) − ln(1 − λ + λe^{−cz − c²/2}), odd and increasing in z, so the
hockey-stick divergence is attained by a threshold set (Steinke 2022, Prop 7):
H_κ(P̃‖Q̃) = max_t F(t), F(t) = P̃(Z > t) − κQ̃(Z > t), at the root t* of
g(t) = (1 − λ + λe^{ct − c²/2}) − κ(1 − λ + λe^{−ct − c²/2}) (increasing in t). In ball arithmetic:
g = 0 is a quadratic in e^{ct}, so t* is a closed form evaluated as a ball [t₋, t₊], and

    F(t₋) <= H_κ <= F(t₋) + (1 + κ)(t₊ − t₋)²/(2√(2πe))

(H − F(t₋) integrates p̃ − κq̃ from t₋ to t*, where it vanishes; its slope is at most
(1 + κ)·max|φ'| = (1 + κ)/√(2πe) in z units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_positive, check_rate
from verifier.errors import NotApplicable
from verifier.pairs.base import DominatingPair
from verifier.pairs.gaussian import Gaussian
from verifier.pairs.laplace import Laplace
from verifier.pairs.laplace_antipodal import LaplaceAntipodal
from verifier.pairs.subsampled import PoissonSubsampled

__all__ = ["AntipodalMixture", "poisson_replace_one_step"]

#: Bisection steps of the float quantile search (the interval shrinks to ~1e-34 of its width).
_BISECT_STEPS = 120


@dataclass(frozen=True)
class AntipodalMixture(DominatingPair):
    """(λN(C, σ²) + (1 − λ)N(0, σ²), λN(−C, σ²) + (1 − λ)N(0, σ²)) with C = ``sensitivity``,
    λ = ``rate`` (see the module docstring). REMOVE and ADD are equal (symmetric pair)."""

    sigma: float
    sensitivity: float
    rate: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "rate", check_rate("rate", self.rate))

    @property
    def _c(self) -> float:
        return self.sensitivity / self.sigma

    def swapped(self) -> "AntipodalMixture":
        return self

    def _max_loss_arb(self) -> None:
        """P/Q grows without bound as y → +∞ (the λN(C) component against λN(−C) + (1 − λ)N(0))."""
        return None

    # ---- profile in ball arithmetic -------------------------------------------------------------

    def _tail(self, t: arb, sign: int) -> arb:
        """P̃(Z > t) (sign = +1) or Q̃(Z > t) (sign = −1)."""
        lam, c = arb(self.rate), arb(self.sensitivity) / arb(self.sigma)
        root2 = arb(2).sqrt()
        upper = ((t - sign * c) / root2).erfc() / 2
        middle = (t / root2).erfc() / 2
        return lam * upper + (1 - lam) * middle

    def _threshold_arb(self, kappa: arb) -> arb:
        """The root t* of g as a ball: with u = e^{ct}, a = λe^{−c²/2} and b = (1 − λ)(1 − κ),
        g = 0 is a·u² + b·u − κa = 0, whose positive root is u = (−b + √(b² + 4a²κ))/(2a)
        = 2κa/(b + √(b² + 4a²κ)) (the second form where b > 0, without cancellation)."""
        lam, c = arb(self.rate), arb(self.sensitivity) / arb(self.sigma)
        a = lam * (-(c * c) / 2).exp()
        b = (1 - lam) * (1 - kappa)
        disc = (b * b + 4 * a * a * kappa).sqrt()
        u = 2 * kappa * a / (b + disc) if b > 0 else (disc - b) / (2 * a)
        return u.log() / c

    def _delta_arb(self, epsilon: arb) -> arb:
        kappa = epsilon.exp()
        t = self._threshold_arb(kappa)
        lo = arb(t.lower())
        value = self._tail(lo, 1) - kappa * self._tail(lo, -1)
        return value.union(value + self._slack(kappa, arb(t.upper()) - lo))

    @staticmethod
    def _slack(kappa: arb, width: arb) -> arb:
        """H − F(t₋) = ∫_{t₋}^{t*} (κq̃ − p̃): the integrand vanishes at t* and its slope is at most
        (1 + κ)·max|φ'| = (1 + κ)/√(2πe), so the integral is at most that times width²/2."""
        return (1 + kappa) * width * width / (2 * (2 * arb.pi() * arb(1).exp()).sqrt())

    def _renyi_arb(self, alpha: arb) -> arb:
        raise NotApplicable("Renyi divergence of the antipodal Poisson pair is not implemented")

    def _moment_arb(self, a: arb) -> arb:
        raise NotApplicable("moments of the antipodal Poisson pair are not implemented")

    # ---- loss law (float accuracy; places grid points only) ------------------------------------

    def _loss(self, z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        lam, c = self.rate, self._c
        log_rest = math.log1p(-lam) if lam < 1.0 else -math.inf
        up = np.logaddexp(log_rest, math.log(lam) + c * z - c * c / 2)
        down = np.logaddexp(log_rest, math.log(lam) - c * z - c * c / 2)
        return up - down

    def _loss_inverse(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """z with ℓ(z) = x, by the closed form of :meth:`_threshold_arb` in floats (κ = e^x)."""
        x = np.asarray(x, dtype=float)
        lam, c = self.rate, self._c
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            kappa = np.exp(x)
            a = lam * math.exp(-c * c / 2)
            b = (1 - lam) * (1 - kappa)
            disc = np.sqrt(b * b + 4 * a * a * kappa)
            u = np.where(b > 0, 2 * kappa * a / (b + disc), (disc - b) / (2 * a))
            z = np.log(u) / c
        return np.where(np.isposinf(x), np.inf, np.where(np.isneginf(x), -np.inf, z))

    def _z_cdf(self, z: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        from scipy.special import ndtr

        sign = 1.0 if under is Measure.P else -1.0
        return self.rate * ndtr(z - sign * self._c) + (1 - self.rate) * ndtr(z)

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        """P(ℓ <= x) = P(Z <= z(x)) (continuous law: inclusive or not is the same)."""
        return np.clip(self._z_cdf(self._loss_inverse(np.asarray(x, dtype=float)), under), 0.0, 1.0)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """The mixture's z-quantile by bisection, mapped through the increasing loss."""
        qs = np.asarray(q, dtype=float)
        lo = np.full(qs.shape, -60.0 - self._c)
        hi = np.full(qs.shape, 60.0 + self._c)
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            ok = self._z_cdf(mid, under) >= qs
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        out = self._loss(hi)
        return np.where(qs <= 0.0, -np.inf, np.where(qs >= 1.0, np.inf, out))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        sign = 1.0 if under is Measure.P else -1.0
        included = rng.random(size) < self.rate
        z = rng.standard_normal(size) + np.where(included, sign * self._c, 0.0)
        return self._loss(z)


def poisson_replace_one_step(pair: DominatingPair, rate: float) -> tuple[DominatingPair, bool]:
    """The attained pair of one Poisson-sampled step under replace-one (``pair`` the add/remove pair
    of one record, ``rate`` λ), and whether it also dominates every such step: for a Gaussian step
    the antipodal pair, records +C and −C (dominating: module docstring); for a Laplace step its
    Laplace twin (verifier.pairs.LaplaceAntipodal: attained, larger than the add/remove mixture,
    dominance not proven); for any other step the add/remove mixture (λP + (1 − λ)Q, Q), +C against
    a record of norm 0 (attained only). The PLD
    builder and Monte Carlo both take the pair and its role from here."""
    if isinstance(pair, Gaussian):
        return AntipodalMixture(pair.sigma, pair.sensitivity, rate), True
    if isinstance(pair, Laplace):
        return LaplaceAntipodal(pair.scale, pair.sensitivity, rate), False  # attained, dominance unproven
    return PoissonSubsampled(pair, rate), False
