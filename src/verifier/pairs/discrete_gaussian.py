"""The discrete Gaussian mechanism on the integers, sensitivity 1 (Canonne, Kamath & Steinke 2020)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._validation import check_positive
from verifier.errors import InvalidArgument
from verifier.pairs.finite import FinitePair

__all__ = ["DiscreteGaussian"]

#: Decimal digits of the Gaussian tail left outside the explicit outcomes (bounded, never dropped).
_TAIL_DIGITS = 45


def _tail_upper(m: int, sigma: arb) -> arb:
    """An upper bound on Σ_{x >= m} e^{−x²/(2σ²)} for an integer m >= 0: consecutive terms shrink by
    e^{−(2x+1)/(2σ²)} <= r = e^{−(2m+1)/(2σ²)}, so the sum is at most e^{−m²/(2σ²)} / (1 − r)."""
    two_var = 2 * sigma * sigma
    ratio = (-(arb(2 * m + 1)) / two_var).exp()
    return arb((arb(-(m * m)) / two_var).exp() / (1 - ratio)).upper()


def _up_to(bound: arb) -> arb:
    """A ball holding the whole interval [0, bound]."""
    return arb(0).union(bound)


@dataclass(frozen=True)
class DiscreteGaussian(FinitePair):
    """P = N_ℤ(0, σ²) against Q = N_ℤ(1, σ²), mass e^{−x²/(2σ²)}/Z at each integer x, Z = Σ_ℤ e^{−x²/(2σ²)}
    (the same Z for both: ℤ is shift invariant). dp_accounting's DiscreteGaussianDpEvent(σ, 1, dimension=1).

    Outcomes: the integers −K..K+1 (K ≈ 14.4σ + 1) with their masses as balls (Z bracketed by its
    explicit terms |x| <= K + 2 plus the tail bound of :func:`_tail_upper`), and the two tails x <= −K−1
    and x >= K+2 as one outcome each whose masses are the balls [0, tail bound]. A tail outcome's
    term (p − e^ε q)_+ is then a ball holding [0, P(tail)], which holds the tail's true contribution
    Σ_tail (P − e^ε Q)_+; the same for the loss laws (the tail's loss is undecided, its mass widens
    the ball) and for D_α (q's ball holds 0: +∞, safe). The tails are below 10^{−45}·(σ + 1).
    Symmetric (x ↦ 1 − x swaps P and Q); the privacy loss (1 − 2x)/(2σ²) is unbounded.
    proofs/discrete_gaussian.py derives the tail bound and checks it against 40-digit sums."""

    sigma: float

    #: Largest σ: the explicit outcomes number about 29σ, each a ball in every evaluation.
    MAX_SIGMA = 1000.0

    def __post_init__(self) -> None:
        sigma = check_positive("sigma", self.sigma)
        if sigma > self.MAX_SIGMA:
            raise InvalidArgument("sigma", sigma, f"must be <= {self.MAX_SIGMA:g} (the pair holds about 29σ explicit outcomes)")
        object.__setattr__(self, "sigma", sigma)

    def swapped(self) -> "DiscreteGaussian":
        return self

    @property
    def reach(self) -> int:
        """K: the explicit outcomes are −K..K+1, e^{−K²/(2σ²)} <= 10^{−45}."""
        return math.ceil(self.sigma * math.sqrt(2 * _TAIL_DIGITS * math.log(10))) + 1

    def _max_loss_arb(self) -> None:
        """The loss (1 − 2x)/(2σ²) is unbounded above (x → −∞)."""
        return None

    @cached_property
    def _balls(self) -> tuple[list[arb], list[arb]]:
        sigma, k = arb(self.sigma), self.reach
        two_var = 2 * sigma * sigma
        weight = {x: (arb(-(x * x)) / two_var).exp() for x in range(-k - 2, k + 3)}
        z = sum(weight.values(), arb(0)) + _up_to(2 * _tail_upper(k + 3, sigma))
        z_low = arb(z.lower())
        core = range(-k, k + 2)
        near, far = _tail_upper(k + 1, sigma) / z_low, _tail_upper(k + 2, sigma) / z_low
        # left tail x <= −K−1: P sums w from K+1, Q = w(x − 1) from K+2; the right tail x >= K+2 mirrors it
        p = [weight[x] / z for x in core] + [_up_to(near), _up_to(far)]
        q = [weight[x - 1] / z for x in core] + [_up_to(far), _up_to(near)]
        return p, q

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        return self._balls

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        p, q = self._balls
        return np.array([float(v.mid()) for v in p]), np.array([float(v.mid()) for v in q])
