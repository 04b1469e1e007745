"""The antipodal Poisson pair of the Laplace mechanism: one Poisson-sampled Laplace step whose target
record is replaced by its opposite (the Laplace twin of verifier.pairs.AntipodalMixture).

With scale b, records of norm at most C and the other records at 0, a step that includes the target
with probability λ outputs P̃ = λL(C, b) + (1 − λ)L(0, b) (record +C) or Q̃ = λL(−C, b) + (1 − λ)L(0, b)
(record −C): an attained pair of replace-one neighbours, so its hockey stick is a LOWER bound on any
claim about Poisson sampling under replace-one. Unlike the Gaussian case it is not proven to dominate
every step (README, "Laplace under Poisson replace-one"); numerically it is the largest of the steps
tried (benchmarks/laplace_replace_one.md), and it is larger than the add/remove mixture (+C against 0)
that was the attained pair before.

In units z = y/b, u = C/b, the likelihood ratio R(z) = P̃/Q̃ is (1 − λ + λe^{−u})/(1 − λ + λe^{u}) on
z <= −u, (1 − λ + λe^{−u})/(1 − λ + λe^{−2z−u}) on [−u, 0], (1 − λ + λe^{2z−u})/(1 − λ + λe^{−u}) on
[0, u] and the reciprocal of the first on z >= u (from |z| − |z ∓ u| on each piece): nondecreasing,
so the optimal set of the hockey stick is {z > z*} with R(z*) = κ = e^ε (Steinke 2022, Prop 7):

    δ(ε) = P̃(Z > z*) − κ Q̃(Z > z*),   z* = (u + ln((κ(1 − λ + λe^{−u}) − (1 − λ))/λ))/2 for ε >= 0,
                                        z* = −(u + ln(((1 − λ + λe^{−u})/κ − (1 − λ))/λ))/2 for ε < 0,

δ = 0 for ε >= ℓ_max = ln R(u) and 1 − κ below −ℓ_max. z* is a ball; the difference of tails is
evaluated over it, which encloses its value at the true root. The reflection z ↦ −z swaps P̃ and
Q̃, so both directions are equal.
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

__all__ = ["LaplaceAntipodal"]

#: Bisection steps of the float loss quantile.
_BISECT_STEPS = 100


def _tail(t: arb, m: arb) -> arb:
    """P(Lap(m, 1) > t) as a ball; both pieces joined where the ball t straddles m."""
    above = (-(t - m)).exp() / 2
    below = 1 - (t - m).exp() / 2
    if t >= m:
        return above
    if t < m:
        return below
    return above.union(below)


@dataclass(frozen=True)
class LaplaceAntipodal(DominatingPair):
    """(λL(C, b) + (1 − λ)L(0, b), λL(−C, b) + (1 − λ)L(0, b)) with b = ``scale``, C = ``sensitivity``,
    λ = ``rate`` (module docstring). REMOVE and ADD are equal."""

    scale: float
    sensitivity: float
    rate: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "rate", check_rate("rate", self.rate))

    def swapped(self) -> "LaplaceAntipodal":
        return self

    def _balls(self) -> tuple[arb, arb, arb]:
        u = arb(self.sensitivity) / arb(self.scale)
        lam = arb(self.rate)
        return u, lam, 1 - lam

    def _max_loss(self) -> arb:
        u, lam, keep = self._balls()
        return (keep + lam * u.exp()).log() - (keep + lam * (-u).exp()).log()

    def _threshold(self, epsilon: arb) -> arb:
        """z* with R(z*) = e^ε, for |ε| < ℓ_max (module docstring)."""
        u, lam, keep = self._balls()
        low = keep + lam * (-u).exp()
        kappa = epsilon.exp()
        up = (u + ((kappa * low - keep) / lam).log()) / 2
        down = -(u + ((low / kappa - keep) / lam).log()) / 2
        if epsilon >= 0:
            return up
        if epsilon < 0:
            return down
        return up.union(down)  # both pieces give z* = 0 at ε = 0

    def _tails(self, t: arb) -> tuple[arb, arb]:
        """(P̃(Z > t), Q̃(Z > t)) in units of b."""
        u, lam, keep = self._balls()
        rest = keep * _tail(t, arb(0))
        return rest + lam * _tail(t, u), rest + lam * _tail(t, -u)

    def _delta_arb(self, epsilon: arb) -> arb:
        top = self._max_loss()
        if epsilon >= top:
            return arb(0)
        if epsilon <= -top:
            return -epsilon.expm1()
        first, second = self._tails(self._threshold(epsilon))
        value = first - epsilon.exp() * second
        if epsilon < top and epsilon > -top:
            return value
        return value.union(arb(0) if epsilon > 0 else -epsilon.expm1())  # within rounding of ±ℓ_max

    def _renyi_arb(self, alpha: arb) -> arb:
        raise NotApplicable("Rényi divergences of the Laplace antipodal pair are not implemented")

    def _moment_arb(self, a: arb) -> arb:
        raise NotApplicable("moments of the Laplace antipodal pair are not implemented")

    # ---- float loss laws (grid placement of the PLD, Monte Carlo) ------------------------------

    def _loss_of(self, z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        u, lam = self.sensitivity / self.scale, self.rate
        a = np.exp(np.abs(z) - np.abs(z - u))
        b = np.exp(np.abs(z) - np.abs(z + u))
        return np.log1p(lam * (a - 1)) - np.log1p(lam * (b - 1))

    def _cdf_z(self, t: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """P(Z <= t) under P̃ or Q̃."""
        u, lam = self.sensitivity / self.scale, self.rate
        shift = u if under is Measure.P else -u

        def lap(x):
            return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.maximum(x, 0)))

        return (1 - lam) * lap(t) + lam * lap(t - shift)

    def _z_of_loss(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The largest z with ℓ(z) <= x on the continuous part (bisection on the increasing ℓ)."""
        u = self.sensitivity / self.scale
        lo, hi = np.full(np.shape(x), -u), np.full(np.shape(x), u)
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            ok = self._loss_of(mid) <= x
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        return lo

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        top = float(self._loss_of(np.array([self.sensitivity / self.scale]))[0])
        inner = self._cdf_z(self._z_of_loss(np.clip(x, -top, top)), under)
        below = (x < -top) if inclusive else (x <= -top)
        above = (x >= top) if inclusive else (x > top)
        atom_low = self._cdf_z(np.full(np.shape(x), -self.sensitivity / self.scale), under)
        at_low = (x == -top) & inclusive
        return np.where(below, 0.0, np.where(above, 1.0, np.where(at_low, atom_low, inner)))

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        top = float(self._loss_of(np.array([self.sensitivity / self.scale]))[0])
        qs = np.asarray(q, dtype=float)
        lo, hi = np.full(qs.shape, -top), np.full(qs.shape, top)
        at_bottom = self._loss_cdf(lo, under, True) >= qs
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            ok = self._loss_cdf(mid, under, True) >= qs
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        return np.where(at_bottom, -top, hi)

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        u = self.sensitivity / self.scale
        shift = u if under is Measure.P else -u
        z = rng.laplace(0.0, 1.0, size=size) + np.where(rng.random(size) < self.rate, shift, 0.0)
        return self._loss_of(z)

    def max_loss(self) -> float:
        """ℓ_max = ln R(u), the largest privacy loss (float, for callers that place grids)."""
        u, lam = self.sensitivity / self.scale, self.rate
        return math.log1p(lam * math.expm1(u)) - math.log1p(lam * math.expm1(-u))
