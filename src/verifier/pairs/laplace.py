"""The Laplace mechanism's dominating pair P = Laplace(Δ, b), Q = Laplace(0, b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_positive
from verifier.pairs.base import DominatingPair, eps0_range_issue

__all__ = ["Laplace"]


@dataclass(frozen=True)
class Laplace(DominatingPair):
    """Laplace mechanism with scale ``scale`` (b) and L1 sensitivity ``sensitivity`` (Δ); ε0 = Δ/b.

    Privacy loss ℓ(y) = (abs(y) − abs(y − Δ))/b ∈ [−ε0, ε0]: atoms at −ε0 (y <= 0) and +ε0 (y >= Δ), linear in
    between (Steinke 2022 §2.1; composition notes §13 D5). Symmetric under y ↦ Δ − y, so both
    directions are equal (proofs/laplace_hockey_stick.py).
    """

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def epsilon0(self) -> float:
        """Pure-DP parameter ε0 = Δ/b."""
        return self.sensitivity / self.scale

    def float_range_issue(self) -> str | None:
        """e^{ε0} must be a finite binary64 number for the float methods (ε0 = Δ/b <= EPS0_FLOAT_MAX),
        and ε0 a normal one (>= 1e-200)."""
        if self.epsilon0 < 1e-200:
            return f"ε0 = Δ/b = {self.epsilon0:g} underflows the binary64 range this method computes in (>= 1e-200)"
        return eps0_range_issue("ε0 = Δ/b", self.epsilon0)

    def _eps0(self) -> arb:
        return arb(self.sensitivity) / arb(self.scale)

    def swapped(self) -> "Laplace":
        return self

    def _max_loss_arb(self) -> arb:
        """ℓ <= ε0 = Δ/b, attained with P-mass 1/2 (y >= Δ)."""
        return self._eps0()

    def _delta_arb(self, epsilon: arb) -> arb:
        """δ(ε) = 1 − e^ε for ε <= −ε0; 1 − e^{(ε−ε0)/2} for |ε| <= ε0; 0 for ε >= ε0
        (derived by piecewise integration in proofs/laplace_hockey_stick.py)."""
        e0 = self._eps0()
        if epsilon >= e0:
            return arb(0)
        if epsilon <= -e0:
            return -epsilon.expm1()
        if epsilon > -e0 and epsilon < e0:
            return -((epsilon - e0) / 2).expm1()
        # ε within rounding of ±ε0 (the ball straddles a breakpoint): both pieces, joined
        return (-((epsilon - e0) / 2).expm1()).union(-epsilon.expm1() if epsilon < 0 else arb(0))

    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α = (1/(α−1)) ln(α/(2α−1) e^{(α−1)ε0} + (α−1)/(2α−1) e^{−αε0}) (Mironov 2017, Prop 6;
        proofs/laplace_renyi.py)."""
        return self._moment_arb(alpha).log() / (alpha - 1)

    def _moment_arb(self, a: arb) -> arb:
        """E_Q[(P/Q)^a] = ½e^{−aε0} + ½e^{(a−1)ε0} + ½e^{−aε0}(e^{(2a−1)ε0} − 1)/(2a−1), the last
        factor read as ε0 at a = ½ (direct integration over the three pieces of ℓ)."""
        e0 = self._eps0()
        c = 2 * a - 1
        ratio = e0 if c == 0 else (c * e0).expm1() / c
        return ((-a * e0).exp() * (1 + ratio) + ((a - 1) * e0).exp()) / 2

    # Loss law: under P, P(ℓ = −ε0) = e^{−ε0}/2, P(ℓ = ε0) = 1/2, CDF e^{(x−ε0)/2}/2 on [−ε0, ε0);
    # under Q, Q(ℓ = −ε0) = 1/2, Q(ℓ = ε0) = e^{−ε0}/2, CDF 1 − e^{−(x+ε0)/2}/2 on [−ε0, ε0).
    def _continuous_cdf(self, x: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        e0 = self.epsilon0
        if under is Measure.P:
            return 0.5 * np.exp((x - e0) / 2)
        return 1.0 - 0.5 * np.exp(-(x + e0) / 2)

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """The closed form above in ball arithmetic; where x cannot be told apart from an atom at ±ε0
        (or the atom is the point itself, ``inclusive`` deciding), both values are joined."""
        e0 = self._eps0()
        inner = (x - e0) / 2 if under is Measure.P else -(x + e0) / 2
        inner = inner.exp() / 2 if under is Measure.P else 1 - inner.exp() / 2
        if x < -e0 or (not inclusive and x <= -e0):
            return arb(0)
        if x > e0 or (inclusive and x >= e0):
            return arb(1)
        if (x > -e0 or (inclusive and x >= -e0)) and (x < e0 or (not inclusive and x <= e0)):
            return inner
        return inner.union(arb(0) if x < 0 else arb(1))  # within rounding of an atom: both sides

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """P(ℓ >= x) = 1 − P(ℓ < x) (the atoms keep every value away from 0, so no cancellation)."""
        return 1 - self._loss_cdf_arb(x, under, not inclusive)

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        e0 = self.epsilon0
        xc = np.clip(x, -e0, e0)
        inner = self._continuous_cdf(xc, under)
        below = (x < -e0) if inclusive else (x <= -e0)
        above = (x >= e0) if inclusive else (x > e0)
        return np.where(below, 0.0, np.where(above, 1.0, inner))

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        e0 = self.epsilon0
        with np.errstate(divide="ignore", invalid="ignore"):
            if under is Measure.P:
                inner = e0 + 2.0 * np.log(2.0 * q)
                atom_low, atom_high = 0.5 * np.exp(-e0), 0.5
            else:
                inner = -e0 - 2.0 * np.log(2.0 * (1.0 - q))
                atom_low, atom_high = 0.5, 1.0 - 0.5 * np.exp(-e0)
        return np.where(q <= atom_low, -e0, np.where(q > atom_high, e0, np.clip(inner, -e0, e0)))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        loc = self.sensitivity if under is Measure.P else 0.0
        y = rng.laplace(loc, self.scale, size=size)
        return (np.abs(y) - np.abs(y - self.sensitivity)) / self.scale
