"""The antipodal lattice pair: a record that enters a Gaussian sum K times, K drawn from a law w
independent of the data, the record +C on one dataset and −C on the other, every other record 0:

    P = Σ_k w_k N(kC, σ²),   Q = Σ_k w_k N(−kC, σ²)   (k = 0, 1, …).

It is the output law of an actual pair of replace-one neighbours under sampling with replacement
(K the record's multiplicity in the batch), so its profile is a LOWER bound on that scheme
(:mod:`verifier.pairs.batch_sampling`). With w_k = (1 − λ, λ) it is
:class:`~verifier.pairs.AntipodalMixture`.

With z = y/σ, c = C/σ and f(z) = Σ_k w_k e^{kcz − k²c²/2}, the densities are p = φ(z)f(z) and
q = φ(z)f(−z), so the privacy loss ℓ(z) = ln f(z) − ln f(−z) is increasing (f increases, f(−z)
decreases) and odd; H_κ(P‖Q) = max_t F(t), F(t) = P(Z > t) − κQ(Z > t), attained at the root t* of
p − κq (Steinke 2022, Prop 7, a threshold set). The root is found in floating point and bracketed
[t₋, t₊] by a sign change of p − κq verified in ball arithmetic; then

    F(t₋) <= H_κ <= F(t₋) + (1 + κ)·W·(t₊ − t₋)²/(2√(2πe))   (W = Σ_k w_k)

(the slope of κq − p is at most (1 + κ)·W·max|φ'|; :meth:`AntipodalMixture._slack` with W).

Only the components k <= K are listed; the others hold mass at most ``tail`` (a rigorous bound on
P(K > K_max)). For the listed part (P₀, Q₀) and the rest (P₁, Q₁) of mass τ₁ <= ``tail`` each,
H_κ(P₀‖Q₀) − κτ₁ <= H_κ(P‖Q) <= H_κ(P₀‖Q₀) + τ₁ (split any event S), so the ball of the listed
part is widened by [−κ·tail, +tail]; the listed part's loss is monotone as above (its weights need
not sum to one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_nonnegative, check_positive, check_real_array
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs.antipodal import AntipodalMixture
from verifier.pairs.base import DominatingPair
from verifier.pairs.gaussian import _phi

__all__ = ["AntipodalLattice"]

#: Bisection steps of the float root and quantile searches.
_BISECT_STEPS = 200
#: Half-width of the first verified bracket around the float root (z units, relative to max(1, |t|)).
_ROOT_WIDTH = 1e-12


@dataclass(frozen=True)
class AntipodalLattice(DominatingPair):
    """(Σ_k w_k N(kC, σ²), Σ_k w_k N(−kC, σ²)), k = 0..len(weights) − 1, with C = ``shift``, each
    true weight within ``radius`` of ``weights``[k] and the unlisted components' mass in
    [0, ``tail``] (see the module docstring). Symmetric: REMOVE and ADD are equal."""

    sigma: float
    shift: float
    weights: tuple
    radius: float = 0.0
    tail: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "shift", check_positive("shift", self.shift))
        w = check_real_array("weights", self.weights)
        if w.ndim != 1 or w.size < 2 or np.any(w < 0) or not np.any(w[1:] > 0):
            raise InvalidArgument("weights", list(np.ravel(w)), "must be >= 0, the law of K = 0, 1, …, with some mass at K >= 1")
        object.__setattr__(self, "weights", tuple(float(x) for x in w))
        object.__setattr__(self, "radius", check_nonnegative("radius", self.radius))
        object.__setattr__(self, "tail", check_nonnegative("tail", self.tail))

    def swapped(self) -> "AntipodalLattice":
        return self

    def _max_loss_arb(self) -> None:
        """ℓ grows without bound (the largest K against the smallest)."""
        return None

    @property
    def _c(self) -> float:
        return self.shift / self.sigma

    def _balls(self) -> list[arb]:
        return [arb(w, self.radius) for w in self.weights]

    # ---- profile in ball arithmetic -------------------------------------------------------------

    def _part(self, t: arb, kappa: arb) -> arb:
        """F(t) of the listed part: Σ_k w_k (Φ̄(t − kc) − κΦ̄(t + kc))."""
        c = arb(self.shift) / arb(self.sigma)
        return sum((w * (_phi(k * c - t) - kappa * _phi(-t - k * c)) for k, w in enumerate(self._balls())), arb(0))

    def _density_gap(self, t: arb, kappa: arb) -> arb:
        """(p − κq)/φ(t) of the listed part: f(t) − κf(−t)."""
        c = arb(self.shift) / arb(self.sigma)
        return sum((w * (-(k * c) ** 2 / 2).exp() * ((k * c * t).exp() - kappa * (-k * c * t).exp()) for k, w in enumerate(self._balls())), arb(0))

    def _delta_arb(self, epsilon: arb) -> arb:
        kappa = epsilon.exp()
        t_hat = float(self._root(float(epsilon.mid())))
        width = _ROOT_WIDTH * max(1.0, abs(t_hat))
        value = self._part(arb(t_hat), kappa)
        main = value.union(arb(1))  # no verified bracket: F(t̂) <= H <= 1
        for _ in range(30):
            lo, hi = arb(t_hat - width), arb(t_hat + width)
            if self._density_gap(lo, kappa) < 0 and self._density_gap(hi, kappa) > 0:
                value = self._part(lo, kappa)
                total = sum(self._balls(), arb(0))
                main = value.union(value + total * AntipodalMixture._slack(kappa, hi - lo))
                break
            width *= 8.0
        tail = arb(self.tail)
        return main.union(main - kappa * tail).union(main + tail)

    def _renyi_arb(self, alpha: arb) -> arb:
        raise NotApplicable("Renyi divergence of the antipodal lattice pair is not implemented")

    def _moment_arb(self, a: arb) -> arb:
        raise NotApplicable("moments of the antipodal lattice pair are not implemented")

    # ---- loss law (float accuracy; places grid points only) ------------------------------------

    def _log_f(self, z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        c, w = self._c, np.array(self.weights)
        k = np.nonzero(w > 0)[0]
        terms = np.asarray(z, dtype=float)[..., None] * (k * c) - (k * c) ** 2 / 2 + np.log(w[k])
        top = terms.max(axis=-1)
        return top + np.log(np.exp(terms - top[..., None]).sum(axis=-1))

    def _loss(self, z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        z = np.asarray(z, dtype=float)
        return self._log_f(z) - self._log_f(-z)

    def _inverse(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """z with ℓ(z) = x by bisection (ℓ is increasing and unbounded both ways)."""
        x = np.asarray(x, dtype=float)
        finite = np.where(np.isfinite(x), x, 0.0)
        span = 60.0 + len(self.weights) * self._c + np.abs(finite) / self._c
        lo, hi = -span, span.copy()
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            below = self._loss(mid) < finite
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return np.where(np.isposinf(x), np.inf, np.where(np.isneginf(x), -np.inf, 0.5 * (lo + hi)))

    def _root(self, level: float) -> float:
        return float(self._inverse(np.array([level]))[0])

    def _z_cdf(self, z: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        from scipy.special import ndtr

        sign = 1.0 if under is Measure.P else -1.0
        w = np.array(self.weights)
        k = np.arange(w.size)
        return (ndtr(np.asarray(z, dtype=float)[..., None] - sign * k * self._c) * w).sum(axis=-1) / w.sum()

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return np.clip(self._z_cdf(self._inverse(x), under), 0.0, 1.0)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        qs = np.asarray(q, dtype=float)
        span = 60.0 + len(self.weights) * self._c
        lo, hi = np.full(qs.shape, -span), np.full(qs.shape, span)
        for _ in range(_BISECT_STEPS // 2):
            mid = 0.5 * (lo + hi)
            ok = self._z_cdf(mid, under) >= qs
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        return np.where(qs <= 0.0, -np.inf, np.where(qs >= 1.0, np.inf, self._loss(hi)))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        sign = 1.0 if under is Measure.P else -1.0
        w = np.array(self.weights)
        k = rng.choice(w.size, size=size, p=w / w.sum())
        return self._loss(rng.standard_normal(size) + sign * k * self._c)

