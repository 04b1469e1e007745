"""Slow, trusted twins of the RDP engine (mpmath; literal formulas, no cleverness).

- :func:`series_power` / :func:`series_product`: truncated power series arithmetic done naively in
  mpmath (twin of the kernel :mod:`verifier._fast.rdp_series`);
- :func:`allocation_remove_renyi`: Feldman & Shenfeld Thm 4.8 / Lemma E.1 as printed (with the
  corrected factor e^{(p−1)R_p}): a literal enumeration of the integer partitions of α with at most
  t parts, weights binom(t; C(Π))·binom(α; Π);
- :func:`shuffle_gaussian_renyi`: Liew & Takahashi's Eq. (8) as a literal sum over all compositions
  k_1 + … + k_n = λ (tiny n and λ only);
- :func:`poisson_remove_renyi`: Steinke 2022 Thm 34, the binomial sum.

Moments are passed as a function ``moment(p) -> mpf`` giving m_p = E_Q[(P/Q)^p]; for the Gaussian
pair use :func:`gaussian_moment_function`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Callable, Iterator

import mpmath

__all__ = [
    "DEFAULT_DPS",
    "partitions",
    "series_power",
    "series_product",
    "gaussian_moment_function",
    "allocation_remove_renyi",
    "shuffle_gaussian_renyi",
    "poisson_remove_renyi",
]

DEFAULT_DPS = 50


def partitions(n: int, largest: int | None = None) -> Iterator[tuple[int, ...]]:
    """The integer partitions of n as non-increasing tuples."""
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for first in range(min(n, largest), 0, -1):
        for rest in partitions(n - first, first):
            yield (first,) + rest


def series_product(a: list, b: list, n: int, dps: int = DEFAULT_DPS) -> list:
    """First n coefficients of A(x)·B(x) (plain convolution in mpmath)."""
    with mpmath.workdps(dps):
        return [mpmath.fsum(a[i] * b[m - i] for i in range(m + 1) if i < len(a) and m - i < len(b)) for m in range(n)]


def series_power(a: list, t: int, n: int, dps: int = DEFAULT_DPS) -> list:
    """First n coefficients of A(x)^t by t − 1 naive truncated multiplications (t small) — or, for
    large t, by the binomial expansion of (a_0 + R(x))^t, which needs only terms up to R^{n−1}."""
    with mpmath.workdps(dps):
        a = [mpmath.mpf(x) for x in a[:n]] + [mpmath.mpf(0)] * max(0, n - len(a))
        rest = [mpmath.mpf(0)] + a[1:]
        out = [mpmath.mpf(0)] * n
        power = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (n - 1)  # R^j
        for j in range(0, min(t, n - 1) + 1):
            coeff = mpmath.binomial(t, j) * a[0] ** (t - j)
            out = [o + coeff * p for o, p in zip(out, power)]
            power = series_product(power, rest, n, dps)
        return out


def gaussian_moment_function(sigma: float, sensitivity: float = 1.0) -> Callable[[int], mpmath.mpf]:
    """m_p = E_Q[(P/Q)^p] = e^{p(p−1)Δ²/(2σ²)} for the Gaussian pair."""

    def moment(p: int) -> mpmath.mpf:
        rho = mpmath.mpf(sensitivity) ** 2 / (2 * mpmath.mpf(sigma) ** 2)
        return mpmath.exp(p * (p - 1) * rho)

    return moment


def allocation_remove_renyi(moment: Callable[[int], mpmath.mpf], t: int, alpha: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """R_α(P̄_t ‖ Q^{⊗t}) by literal partition enumeration (Feldman & Shenfeld, Thm 4.8)."""
    with mpmath.workdps(dps):
        total = mpmath.mpf(0)
        for part in partitions(alpha):
            if len(part) > t:
                continue
            multiplicities = Counter(part).values()
            ways_t = mpmath.factorial(t) / mpmath.factorial(t - len(part))
            for c in multiplicities:
                ways_t /= mpmath.factorial(c)
            ways_alpha = mpmath.factorial(alpha)
            for p in part:
                ways_alpha /= mpmath.factorial(p)
            weight = ways_t * ways_alpha
            for p in part:
                weight *= moment(p)
            total += weight
        return mpmath.log(total / mpmath.mpf(t) ** alpha) / (alpha - 1)


def shuffle_gaussian_renyi(n: int, lam: int, sigma: float, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Liew & Takahashi, Eq. (8), literally: (1/(λ−1)) ln( e^{−λ/(2σ²)} n^{−λ}
    Σ_{k_1+…+k_n=λ} C(λ; k) e^{Σ k_i²/(2σ²)} ), summing over every composition (tiny n, λ)."""
    with mpmath.workdps(dps):
        s2 = 2 * mpmath.mpf(sigma) ** 2
        total = mpmath.mpf(0)
        for ks in itertools.product(range(lam + 1), repeat=n):
            if sum(ks) != lam:
                continue
            multinomial = mpmath.factorial(lam)
            for k in ks:
                multinomial /= mpmath.factorial(k)
            total += multinomial * mpmath.exp(sum(k * k for k in ks) / s2)
        return mpmath.log(mpmath.exp(-lam / s2) / mpmath.mpf(n) ** lam * total) / (lam - 1)


def poisson_remove_renyi(moment: Callable[[int], mpmath.mpf], rate: float, alpha: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """D_α(λP + (1−λ)Q ‖ Q) = (1/(α−1)) ln Σ_k C(α,k)(1−λ)^{α−k} λ^k m_k (Steinke 2022, Thm 34)."""
    with mpmath.workdps(dps):
        lam = mpmath.mpf(rate)
        total = mpmath.fsum(
            mpmath.binomial(alpha, k) * (1 - lam) ** (alpha - k) * lam**k * (1 if k < 2 else moment(k)) for k in range(alpha + 1)
        )
        return mpmath.log(total) / (alpha - 1)
