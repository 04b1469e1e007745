"""Exact convolution of PLD masses (rational arithmetic), the slow twin of :mod:`verifier.pld.fft`
and of :func:`verifier.pld.compose`.

Every double is a rational number, so the convolution of two float mass vectors is computed
exactly with :class:`fractions.Fraction`; tests hold the fast one-sided results against it
(0 <= fast <= exact entrywise, and the reported deficit >= the exact one).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import mpmath

__all__ = ["exact_convolution", "exact_self_convolution", "exact_pld_delta"]


def exact_convolution(a: Sequence[float], b: Sequence[float]) -> list[Fraction]:
    """(a * b)_k = Σ_i a_i b_{k−i}, exactly (O(n_a·n_b) rational operations)."""
    return _convolve_fractions([Fraction(float(x)) for x in a], [Fraction(float(x)) for x in b])


def exact_self_convolution(a: Sequence[float], times: int) -> list[Fraction]:
    """The ``times``-fold convolution of a with itself, exactly (repeated :func:`exact_convolution`)."""
    out = [Fraction(float(x)) for x in a]
    for _ in range(times - 1):
        out = _convolve_fractions(out, [Fraction(float(x)) for x in a])
    return out


def _convolve_fractions(fa: list[Fraction], fb: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(fa) + len(fb) - 1)
    for i, x in enumerate(fa):
        if x:
            for j, y in enumerate(fb):
                if y:
                    out[i + j] += x * y
    return out


def exact_pld_delta(
    offset: int, step: float, masses: Sequence[Fraction | float], infinite_mass: Fraction | float, epsilon: float, dps: int = 50
) -> mpmath.mpf:
    """δ(ε) = Σ_i p_i (1 − e^{ε − (offset+i)·step})_+ + p_∞ for exact masses, in mpmath at ``dps`` digits
    (Steinke 2022, Prop 7, form 7.2)."""
    with mpmath.workdps(dps):
        eps = mpmath.mpf(epsilon)
        total = mpmath.mpf(0)
        for i, p in enumerate(masses):
            loss = mpmath.mpf(offset + i) * mpmath.mpf(step)
            if p and loss > eps:
                total += _mpf(p) * (1 - mpmath.exp(eps - loss))
        return total + _mpf(infinite_mass)


def _mpf(x: Fraction | float) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)
