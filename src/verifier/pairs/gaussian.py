"""The Gaussian mechanism's dominating pair P = N(Δ, σ²), Q = N(0, σ²)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt
from flint import arb, ctx

from verifier._directed import with_precision
from verifier._types import Measure
from verifier._validation import check_positive
from verifier.pairs.base import DominatingPair

__all__ = ["Gaussian"]

_ERFC = np.frompyfunc(math.erfc, 1, 1)
_NORMAL = NormalDist()


def _ndtr(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Φ(z) = erfc(−z/√2)/2 in float64 (math.erfc elementwise; agrees with scipy.special.ndtr to an
    ulp or two). Float only: it places grids and picks formulas, never enters a bound. scipy is not
    imported for it: ~0.3 s of start-up (issue 17)."""
    z = np.asarray(z, dtype=np.float64)
    return 0.5 * _ERFC(-z / math.sqrt(2.0)).astype(np.float64)


def _ndtri(q: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Φ^{-1}(q) in float64 (statistics.NormalDist, Wichura's AS241: ~1e-16 relative), ±∞ at 1 and 0.
    Float only, like :func:`_ndtr`."""
    q = np.asarray(q, dtype=np.float64)
    flat = [(-math.inf if v <= 0.0 else math.inf if v >= 1.0 else _NORMAL.inv_cdf(float(v))) for v in q.ravel()]
    return np.array(flat, dtype=np.float64).reshape(q.shape)


@functools.lru_cache(maxsize=8)
def _sqrt2(bits: int) -> arb:
    """√2 as a ball at ``bits`` of precision (the working precision when Φ is evaluated)."""
    with with_precision(bits):
        return arb(2).sqrt()


@functools.lru_cache(maxsize=64)
def _delta_constants(sigma: float, sensitivity: float, bits: int) -> tuple[arb, arb]:
    """(Δ/(2σ√2), σ/(Δ√2)) as balls at ``bits`` of precision, for :meth:`Gaussian._delta_arb` (one
    profile is evaluated at many ε: the constants are computed once per pair and precision)."""
    with with_precision(bits):
        s, d, root2 = arb(sigma), arb(sensitivity), arb(2).sqrt()
        return d / (2 * s * root2), s / (d * root2)


def _phi(z: arb) -> arb:
    """Standard normal CDF Φ(z) = erfc(−z/√2)/2 in ball arithmetic."""
    return (-z / _sqrt2(ctx.prec)).erfc() / 2

#: ρ = Δ²/(2σ²) for which binary64 methods are used: ρ and 1/ρ stay normal floats with 100 decades
#: of room (products such as αρ or t·ρ must not overflow). Outside, see Gaussian.float_range_issue.
RHO_FLOAT_RANGE = (1e-200, 1e200)


@dataclass(frozen=True)
class Gaussian(DominatingPair):
    """Gaussian mechanism with noise scale ``sigma`` and L2 sensitivity ``sensitivity``.

    Privacy loss ℓ(y) = Δ(2y − Δ)/(2σ²); under P it is N(ρ, 2ρ), under Q it is N(−ρ, 2ρ), with
    ρ = Δ²/(2σ²) (Steinke 2022, Prop 3). The pair is symmetric (reflection y ↦ Δ − y swaps P and Q),
    so both directions are equal (derivation: proofs/gaussian_hockey_stick.py).
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def rho(self) -> float:
        """ρ = Δ²/(2σ²) (float, rounded to nearest; the zCDP parameter). Never raises: +inf when
        σ/Δ is so small that ρ overflows (1e-300), 0.0 when it underflows (σ/Δ = 1e300); the
        float-based methods decline such pairs (:meth:`float_range_issue`), the ball-arithmetic
        closed forms do not need them to."""
        ratio = self.sensitivity / self.sigma  # inf, never ZeroDivisionError: sigma > 0
        return 0.5 * ratio * ratio

    def float_range_issue(self) -> str | None:
        """The loss is N(±ρ, 2ρ): outside RHO_FLOAT_RANGE, ρ or 1/ρ is not a normal binary64 number
        with room to spare (σ/Δ = 1e-300 gives ρ = 5e599: ε = ∞ in floats; σ/Δ = 1e300, ρ ≈ 0)."""
        rho = self.rho
        low, high = RHO_FLOAT_RANGE
        if low <= rho <= high:
            return None
        side = "overflows" if rho > high else "underflows"
        return (
            f"σ/Δ = {self.sigma / self.sensitivity:g}: ρ = Δ²/(2σ²) {side} the binary64 range this method "
            f"computes in ([{low:g}, {high:g}]); only the ball-arithmetic closed forms answer here"
        )

    def swapped(self) -> "Gaussian":
        return self

    def _max_loss_arb(self) -> None:
        """ℓ(y) = Δ(2y − Δ)/(2σ²) is unbounded: no ε makes a Gaussian step ε-DP."""
        return None

    def _delta_arb(self, epsilon: arb) -> arb:
        """δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) for every real ε (Steinke 2022, Cor 8;
        Balle & Wang 2018), as (erfc(εc − a) − e^ε erfc(εc + a))/2 with Φ(z) = erfc(−z/√2)/2,
        a = Δ/(2σ√2), c = σ/(Δ√2) (balls, :func:`_delta_constants`)."""
        a, c = _delta_constants(self.sigma, self.sensitivity, ctx.prec)
        b = epsilon * c
        return ((b - a).erfc() - epsilon.exp() * (b + a).erfc()) / 2

    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α = αΔ²/(2σ²) (Steinke 2022, Lemma 33.4; proofs/gaussian_renyi.py)."""
        return alpha * arb(self.sensitivity) ** 2 / (2 * arb(self.sigma) ** 2)

    def _moment_arb(self, a: arb) -> arb:
        """E_Q[(P/Q)^a] = e^{a(a−1)ρ} (the Gaussian MGF at ℓ ~ N(−ρ, 2ρ))."""
        rho = arb(self.sensitivity) ** 2 / (2 * arb(self.sigma) ** 2)
        return (a * (a - 1) * rho).exp()

    def _standardised(self, x: arb, under: Measure) -> arb:
        """(x − mean)/sd of ℓ ~ N(±ρ, 2ρ) under P (+) or Q (−), with √(2ρ) = Δ/σ."""
        s, d = arb(self.sigma), arb(self.sensitivity)
        rho = d**2 / (2 * s**2)
        mean = rho if under is Measure.P else -rho
        return (x - mean) * s / d

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """Φ((x ∓ ρ)/√(2ρ)) (no atoms: inclusive and strict agree)."""
        return _phi(self._standardised(x, under))

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """Φ(−(x ∓ ρ)/√(2ρ)), without cancellation in the upper tail."""
        return _phi(-self._standardised(x, under))

    def _standardised_float(self, x: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        rho = self.rho
        return (np.asarray(x, dtype=float) - (rho if under is Measure.P else -rho)) / np.sqrt(2.0 * rho)

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return _ndtr(self._standardised_float(x, under))

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return _ndtr(-self._standardised_float(x, under))

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        # the loss is N(±ρ, 2ρ): loc + scale·Φ^{-1}(q), as scipy.stats.norm.ppf computes it
        rho = self.rho
        return (rho if under is Measure.P else -rho) + np.sqrt(2.0 * rho) * _ndtri(q)

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        rho = self.rho
        return rng.normal(rho if under is Measure.P else -rho, np.sqrt(2.0 * rho), size=size)
