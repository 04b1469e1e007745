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

FFT (zero-padded to N >= n_a + n_b − 1, so there is no wrap-around; N = 2^L on the plain route, so
the 1/N scaling is exact, and a 5-smooth length on the exact route, where the scaling's extra
half-ulp is far inside the 1/2 margin): Higham Thm 24.2 bounds a radix-2 FFT by ‖ŷ − y‖₂ <= c‖y‖₂ with c = Lη/(1 − Lη),
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
import scipy.fft

from verifier._directed import down, up

__all__ = ["FFT_SAFETY_FACTOR", "DIRECT_LIMIT", "fft_error_bound", "convolve_one_sided"]

#: Factor applied to Higham's radix-2 FFT error bound to cover pocketfft's mixed-radix real FFT.
FFT_SAFETY_FACTOR = 4.0

#: Operands whose shorter length is at most this are convolved directly (O(n_a n_b), tighter bound).
DIRECT_LIMIT = 48

#: Fixed-point splitting of the exact route: CHUNKS integer chunks of CHUNK_BITS bits each (63 bits
#: below the largest entry). 9-bit chunks keep every chunk product's FFT error below 1/2 for the
#: PLDs met in practice (measured: 0.25 at 33k entries; checked at run time, with a fallback).
CHUNK_BITS = 9
CHUNKS = 7

_U = 2.0**-53


def _crude_sum(x: npt.NDArray[np.float64]) -> float:
    """Upper bound on Σx, x >= 0 (numpy's sum is within γ_n, any order: Higham Lemma 3.1)."""
    return up(float(np.sum(x)) * (1.0 + (x.size + 2) * _U))


def _gamma(k: int) -> float:
    return k * _U / (1.0 - k * _U)


def _norms(x: npt.NDArray[np.float64]) -> tuple[float, float]:
    """(‖x‖₁, ‖x‖₂) of a non-negative vector, rounded up (relative error of the float sums <= n·u)."""
    slack = 1.0 + (x.size + 4) * _U
    return float(np.sum(x)) * slack, math.sqrt(float(np.sum(x * x)) * slack) * (1 + 2 * _U)


def _bound_from_norms(x1: float, x2: float, y1: float, y2: float, size: int) -> float:
    """Entrywise FFT convolution error bound E of the module docstring from the operands' norms."""
    levels = max(1, int(math.ceil(math.log2(size))))
    eta = _U + _gamma(4) * (math.sqrt(2.0) + _U)
    c = levels * eta / (1.0 - levels * eta)
    root_n = math.sqrt(size)

    def bound(a1: float, a2: float, b1: float, b2: float) -> float:
        x_term = c * a1 * b2 + c * a2 * (b1 + c * root_n * b2)
        x_term += math.sqrt(2.0) * _gamma(2) * (1 + c) * (a1 + c * root_n * a2) * b2
        return c * a1 * b2 + (1 + c) * x_term

    # Both orders of the operands give valid bounds (the derivation is not symmetric).
    return up(FFT_SAFETY_FACTOR * min(bound(x1, x2, y1, y2), bound(y1, y2, x1, x2)) * (1 + 64 * _U))


def fft_error_bound(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], size: int) -> float:
    """Entrywise bound on |fl(IFFT(FFT(a)∘FFT(b))/N) − a*b| for FFT length ``size`` (see module doc),
    with the safety factor applied and every operation rounded up."""
    return _bound_from_norms(*_norms(a), *_norms(b), size)


def _fixed_point_chunks(x: npt.NDArray[np.float64]) -> tuple[int, list[npt.NDArray[np.float64]], float]:
    """x >= 0 as 2^e·Σ_j A_j 2^{-B(j+1)} with integer A_j in [0, 2^B), j < J, truncated (so the
    represented vector is <= x entrywise); returns (e, [A_j], bound on Σ(x − represented))."""
    top = float(np.max(x))
    e = math.frexp(top)[1] if top > 0 else 0
    r = np.ldexp(x, -e)  # exact (power-of-two scaling; subnormal losses are covered below)
    chunks = []
    for _ in range(CHUNKS):
        r = np.ldexp(r, CHUNK_BITS)
        t = np.floor(r)
        chunks.append(t)
        r = r - t  # exact: t is the integer part of r
    lost = x.size * (math.ldexp(1.0, e - CHUNK_BITS * CHUNKS) + 2.0**-1022)
    return e, chunks, up(lost)


def _exact_fixed_point(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], n: int):
    """Exact convolution of the fixed-point truncations of a and b (Ozaki-style splitting): every
    chunk product A_j * B_l is an integer vector whose FFT error bound (above) is checked to be below
    1/2, so rounding recovers it exactly. Returns (p', deficit) or None if a check fails."""
    size = scipy.fft.next_fast_len(n, real=True)
    ea, ca, lost_a = _fixed_point_chunks(a)
    same = a is b
    eb, cb, lost_b = (ea, ca, lost_a) if same else _fixed_point_chunks(b)
    fa = [scipy.fft.rfft(c, size) for c in ca]
    fb = fa if same else [scipy.fft.rfft(c, size) for c in cb]
    norms_a = [_norms(c) for c in ca]
    norms_b = norms_a if same else [_norms(c) for c in cb]
    total = np.zeros(n)
    for s in range(2 * CHUNKS - 1):
        terms = [(j, s - j) for j in range(CHUNKS) if 0 <= s - j < CHUNKS]
        terms = [(j, l) for j, l in terms if norms_a[j][0] > 0 and norms_b[l][0] > 0]
        if not terms:
            continue
        spectrum = sum(fa[j] * fb[l] for j, l in terms)
        approx = scipy.fft.irfft(spectrum, size)[:n]
        bound = sum(_bound_from_norms(*norms_a[j], *norms_b[l], size) for j, l in terms)
        bound += _gamma(len(terms) + 1) * 2.0 * sum(norms_a[j][0] * norms_b[l][1] + norms_a[j][1] * norms_b[l][0] for j, l in terms)
        if not bound < 0.5:
            return None
        total += np.ldexp(np.rint(approx), -CHUNK_BITS * (s + 2))  # exact integers, then one rounded sum
    total = np.maximum(total, 0.0)
    # 2J − 1 non-negative terms summed in float: relative error <= γ_{2J}.
    probs = np.maximum(down(np.ldexp(total, ea + eb) * (1.0 - 2.0 * _gamma(2 * CHUNKS))), 0.0)
    deficit = up(lost_a * _crude_sum(b) + lost_b * _crude_sum(a)) * (1 + 8 * _U)
    # y_f − p' <= y_f(1 − (1 − γ)(1 − 2γ)) <= 3γ·y_f and y_f <= Σp'/((1 − γ)(1 − 2γ)): charge 4γ·Σp'.
    deficit += up(4.0 * _gamma(2 * CHUNKS) * _crude_sum(probs) * (1 + 4 * _U)) + 2.0**-1000
    return probs, up(deficit)


def convolve_one_sided(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], float]:
    """(p', deficit) with 0 <= p' <= a*b entrywise and deficit >= Σ(a*b − p'), for non-negative a, b.

    Short operands: direct sums. Otherwise the exact fixed-point route (:func:`_exact_fixed_point`),
    whose deficit is O(n·2^-64·max + u) instead of the O(n·u·‖·‖₂) of subtracting a plain FFT bound
    from every entry; the plain route is the fallback if an exactness check fails.
    """
    n = a.size + b.size - 1
    if min(a.size, b.size) <= DIRECT_LIMIT:
        approx = np.convolve(a, b)
        gamma = _gamma(min(a.size, b.size) + 1)
        probs = np.maximum(down(approx * (1.0 - 2.0 * gamma)), 0.0)
        loose = float(np.sum(approx / (1.0 - gamma) - probs))  # y <= ŷ/(1 − γ) entrywise
    else:
        exact = _exact_fixed_point(a, b, n)
        if exact is not None:
            return exact
        size = 1 << (n - 1).bit_length()
        approx = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
        err = fft_error_bound(a, b, size)
        probs = np.maximum(down(approx - err), 0.0)
        loose = float(np.sum(np.maximum(approx + err, 0.0) - probs))
    # Σ(y − p') = Σa·Σb − Σp' exactly; fsum is correctly rounded (half an ulp each).
    exact_gap = up(up(math.fsum(a) * math.fsum(b)) * (1 + 4 * _U) - math.fsum(probs) * (1 - 2 * _U))
    loose = up(loose * (1 + (n + 4) * _U))
    return probs, max(0.0, min(exact_gap, loose))
