"""Independent Poisson-subsampled Gaussian profiles used as oracles by the analytic-bound tests.

- :class:`ExactPoissonT2`: t = 2 steps of Poisson(λ)-subsampled Gaussian, exact up to quadrature
  error (~1e-12): the inner expectation over the second step is a closed form (a log-normal partial
  expectation), the outer one a scipy quadrature. Checked against notes/random-allocation.md §7.5.
- :func:`dp_accounting_profiles`: Google dp_accounting's pessimistic PLD (a peer library), used
  only where the project's PLD engine is not installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, stats

from verifier._types import Direction
from verifier.pairs import Gaussian


def _partial(a: float, b: float, m: float, v: float) -> float:
    """E[(a + b·e^ℓ)_+] for ℓ ~ N(m, v)."""
    s = math.sqrt(v)
    mean_exp = math.exp(m + v / 2)
    if b > 0:
        if a >= 0:
            return a + b * mean_exp
        cut = math.log(-a / b)
        return a * stats.norm.sf((cut - m) / s) + b * mean_exp * stats.norm.sf((cut - m - v) / s)
    if a <= 0:
        return 0.0
    cut = math.log(a / -b)
    return a * stats.norm.cdf((cut - m) / s) + b * mean_exp * stats.norm.cdf((cut - m - v) / s)


@dataclass(frozen=True)
class ExactPoissonT2:
    """Profile of 2 steps of Poisson(rate)-subsampled N(0,σ²) vs N(1,σ²) in one direction."""

    sigma: float
    rate: float
    direction: Direction

    def delta_upper(self, epsilon: float) -> float:
        lam, s2 = self.rate, self.sigma**2
        m, v = -1.0 / (2 * s2), 1.0 / s2  # ℓ = ln(P/Q) under Q
        a0, b0 = 1 - lam, lam  # per-step ratio r = a0 + b0·e^ℓ of the subsampled pair under Q
        e = math.exp(epsilon)

        def inner(l1: float) -> float:
            r1 = a0 + b0 * math.exp(l1)
            if self.direction is Direction.REMOVE:  # E_Q[(r1 r2 − e^ε)_+]
                return _partial(r1 * a0 - e, r1 * b0, m, v)
            return _partial(1 - e * r1 * a0, -e * r1 * b0, m, v)  # E_Q[(1 − e^ε r1 r2)_+]

        dens = stats.norm(m, math.sqrt(v))
        lo, hi = m - 40 * math.sqrt(v), m + 40 * math.sqrt(v)
        pts = list(np.linspace(lo, hi, 41))
        total = 0.0
        for x0, x1 in zip(pts[:-1], pts[1:]):
            total += integrate.quad(lambda x: inner(x) * dens.pdf(x), x0, x1, epsabs=1e-15, epsrel=1e-12, limit=200)[0]
        return total

    def epsilon_upper(self, delta: float) -> float:
        lo, hi = 0.0, 1.0
        if self.delta_upper(0.0) <= delta:
            return 0.0
        while self.delta_upper(hi) > delta:
            lo, hi = hi, 2 * hi
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if self.delta_upper(mid) <= delta else (mid, hi)
        return hi


def exact_t2_profiles(pair, rate, steps, direction):
    """A ProfileSource for Gaussian Poisson with 2 steps (the only case it supports)."""
    assert isinstance(pair, Gaussian) and pair.sensitivity == 1.0 and steps == 2, (pair, steps)
    return ExactPoissonT2(pair.sigma, rate, direction)


@dataclass(frozen=True)
class _DpAccountingProfile:
    pld: object

    def delta_upper(self, epsilon: float) -> float:
        return float(self.pld.get_delta_for_epsilon(epsilon))

    def epsilon_upper(self, delta: float) -> float:
        return float(self.pld.get_epsilon_for_delta(delta))


def dp_accounting_profiles(pair, rate, steps, direction):
    """A ProfileSource from dp_accounting's pessimistic Gaussian PLD (peer library)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    assert isinstance(pair, Gaussian)
    base = pld_lib.from_gaussian_mechanism(
        standard_deviation=pair.sigma / pair.sensitivity, value_discretization_interval=1e-4,
        pessimistic_estimate=True, sampling_prob=rate, use_connect_dots=True,
    )
    zero = pld_lib.pld_pmf.create_pmf({0: 1.0}, 1e-4, 0.0, True)
    if direction is Direction.REMOVE:
        single = pld_lib.PrivacyLossDistribution(pmf_remove=base._pmf_remove, pmf_add=zero)
    else:
        single = pld_lib.PrivacyLossDistribution(pmf_remove=zero, pmf_add=base._pmf_add)
    return _DpAccountingProfile(single.self_compose(steps))
