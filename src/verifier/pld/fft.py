"""Convolution of non-negative mass vectors with a rigorous round-off bound, moved to the safe side.

:func:`convolve_one_sided` returns masses p' with 0 <= p'_i <= y_i entrywise, y = a * b the exact
linear convolution, and an upper bound on the deficit Σ(y_i − p'_i). A DOMINATING caller sends the
deficit to +∞ (stochastically larger), a DOMINATED one drops it (entrywise smaller): either way the
floating-point error cannot cross to the unsafe side.

Error bounds
------------
Direct summation (short operands): each y_i is a sum of at most k = min(n_a, n_b) products of
non-negative numbers, so |ŷ_i − y_i| <= γ_k·y_i with γ_k = k·u/(1 − k·u) (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., §3.1 and Lemma 3.1); p'_i = ŷ_i(1 − 2γ_k) rounded down.

FFT (zero-padded to N = 2^L >= n_a + n_b − 1, so there is no wrap-around and the 1/N scaling is
exact): Higham Thm 24.2 bounds a radix-2 FFT by ‖ŷ − y‖₂ <= c‖y‖₂ with c = Lη/(1 − Lη),
η = μ + γ₄(√2 + μ), μ the twiddle-factor error (taken as u). Following A = FFT(a), B = FFT(b), the
pointwise product (complex multiplication, relative error √2γ₂) and the inverse, with
‖A‖₂ = √N‖a‖₂ and ‖A‖∞ <= ‖a‖₁, the entrywise error of y = IFFT(A∘B)/N is at most

    E = c‖a‖₁‖b‖₂ + (1 + c)·X,
    X = c‖a‖₁‖b‖₂ + c‖a‖₂(‖b‖₁ + c√N‖b‖₂) + √2γ₂(1 + c)(‖a‖₁ + c√N‖a‖₂)‖b‖₂

(an ℓ2 bound, hence entrywise). numpy's pocketfft is a mixed-radix real FFT rather than the
radix-2 complex FFT of the theorem, so E is multiplied by :data:`FFT_SAFETY_FACTOR`; this rests on
pocketfft's documented accuracy being of the same order, an assumption stated in every bound that
uses it. The test suite holds the bound against exact rational convolutions
(:mod:`verifier.reference.convolution`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up

__all__ = ["FFT_SAFETY_FACTOR", "DIRECT_LIMIT", "fft_error_bound", "convolve_one_sided"]

#: Factor applied to Higham's radix-2 FFT error bound to cover pocketfft's mixed-radix real FFT.
FFT_SAFETY_FACTOR = 4.0

#: Operands whose shorter length is at most this are convolved directly (O(n_a n_b), tighter bound).
DIRECT_LIMIT = 48

_U = 2.0**-53


def _gamma(k: int) -> float:
    return k * _U / (1.0 - k * _U)


def fft_error_bound(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], size: int) -> float:
    """Entrywise bound on |fl(IFFT(FFT(a)∘FFT(b))/N) − a*b| for FFT length ``size`` (see module doc),
    with the safety factor applied and every operation rounded up."""
    levels = max(1, int(math.ceil(math.log2(size))))
    eta = _U + _gamma(4) * (math.sqrt(2.0) + _U)
    c = levels * eta / (1.0 - levels * eta)
    root_n = math.sqrt(size)

    def bound(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
        x1, y1 = float(np.sum(x)) * (1 + 4 * _U), float(np.sum(y)) * (1 + 4 * _U)
        x2, y2 = float(np.linalg.norm(x)) * (1 + 4 * _U), float(np.linalg.norm(y)) * (1 + 4 * _U)
        x_term = c * x1 * y2 + c * x2 * (y1 + c * root_n * y2)
        x_term += math.sqrt(2.0) * _gamma(2) * (1 + c) * (x1 + c * root_n * x2) * y2
        return c * x1 * y2 + (1 + c) * x_term

    # Both orders of the operands give valid bounds (the derivation is not symmetric).
    return up(FFT_SAFETY_FACTOR * min(bound(a, b), bound(b, a)) * (1 + 64 * _U))


def convolve_one_sided(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], float]:
    """(p', deficit) with 0 <= p' <= a*b entrywise and deficit >= Σ(a*b − p'), for non-negative a, b."""
    n = a.size + b.size - 1
    if min(a.size, b.size) <= DIRECT_LIMIT:
        approx = np.convolve(a, b)
        shrink = 1.0 - 2.0 * _gamma(min(a.size, b.size) + 1)
        probs = np.maximum(down(approx * shrink), 0.0)
        loose = float(np.sum(approx)) * 2.0 * _gamma(min(a.size, b.size) + 1)
    else:
        size = 1 << (n - 1).bit_length()
        approx = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
        err = fft_error_bound(a, b, size)
        probs = np.maximum(down(approx - err), 0.0)
        loose = float(np.sum(np.maximum(approx + err, 0.0) - probs))
    # Σ(y − p') = Σa·Σb − Σp' exactly; fsum is correctly rounded (half an ulp each).
    exact_gap = up(up(math.fsum(a) * math.fsum(b)) * (1 + 4 * _U) - math.fsum(probs) * (1 - 2 * _U))
    loose = up(loose * (1 + (n + 4) * _U))
    return probs, max(0.0, min(exact_gap, loose))
