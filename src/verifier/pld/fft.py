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
exact): every transform is verifier's own radix-2 Cooley–Tukey kernel (:mod:`verifier.pld.radix2`,
the complex FFT of the real operand + 0i, full spectrum, real part of the inverse), so Higham's
Thm 24.2 applies as proven: ‖ŷ − y‖₂ <= c‖y‖₂ with c = Lη/(1 − Lη), η = μ + γ₄(√2 + μ), μ the
proven twiddle error (:func:`verifier.pld.radix2.twiddles`). Following A = FFT(a), B = FFT(b), the
pointwise product (textbook complex multiplication on real arrays, one rounding per numpy call,
relative error √2γ₂: Higham Lemma 3.5) and the inverse, with ‖A‖₂ = √N‖a‖₂ and ‖A‖∞ <= ‖a‖₁, the
entrywise error of y = Re(IFFT(A∘B))/N is at most

    E = c‖a‖₁‖b‖₂ + (1 + c)·X,
    X = c‖a‖₁‖b‖₂ + c‖a‖₂(‖b‖₁ + c√N‖b‖₂) + √2γ₂(1 + c)(‖a‖₁ + c√N‖a‖₂)‖b‖₂

(an ℓ2 bound, hence entrywise; taking the real part and the scaling by 2^-L are exact), plus the
gradual-underflow term left out of Thm 24.2 (f = :func:`~verifier.pld.radix2.underflow_term` per
transform): 2(1 + c)·f·(‖a‖₁ + ‖b‖₁ + c√N(‖a‖₂ + ‖b‖₂) + 2f + 1) + f. No assumption about a
library FFT is made. The test suite holds the bound against exact rational convolutions
(:mod:`verifier.reference.convolution`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier.pld.radix2 import fft_complex, higham_constant, twiddles, underflow_term

__all__ = ["DIRECT_LIMIT", "fft_error_bound", "convolve_one_sided", "Operand", "convolve_bracket"]

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


@functools.lru_cache(maxsize=64)
def _fft_constants(size: int) -> tuple[float, float]:
    """(c, f) for the double radix-2 FFT of ``size`` points: Higham's constant with the proven
    twiddle error μ, and the underflow term (both UPPER bounds, :mod:`verifier.pld.radix2`)."""
    c = higham_constant(size, _U, twiddles(size, np.float64).mu)
    return c, underflow_term(size, np.float64)


def _bound_from_norms(x1: float, x2: float, y1: float, y2: float, size: int) -> float:
    """Entrywise FFT convolution error bound E of the module docstring from the operands' norms."""
    c, f = _fft_constants(size)
    root_n = math.sqrt(size) * (1 + 2 * _U)

    def bound(a1: float, a2: float, b1: float, b2: float) -> float:
        x_term = c * a1 * b2 + c * a2 * (b1 + c * root_n * b2)
        x_term += math.sqrt(2.0) * _gamma(2) * (1 + c) * (a1 + c * root_n * a2) * b2
        return c * a1 * b2 + (1 + c) * x_term

    # Both orders of the operands give valid bounds (the derivation is not symmetric).
    under = 2 * (1 + c) * f * (x1 + y1 + c * root_n * (x2 + y2) + 2 * f + 1) + f
    return up((min(bound(x1, x2, y1, y2), bound(y1, y2, x1, x2)) + under) * (1 + 64 * _U))


def fft_error_bound(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], size: int) -> float:
    """Entrywise bound on |fl(Re IFFT(FFT(a)∘FFT(b))/N) − a*b| for verifier's radix-2 FFT of length
    ``size`` = 2^L (module docstring: Higham Thm 24.2 and Lemma 3.5), every operation rounded up."""
    return _bound_from_norms(*_norms(a), *_norms(b), size)


class Operand:
    """A non-negative vector transformed once for many convolutions of length ``size`` = 2^L: its
    radix-2 spectrum and its norms (rounded up), the inputs of :func:`convolve_bracket`.

    With ``imag`` (a second non-negative vector) the operand is the complex vector x + i·imag, one
    transform for two: convolved with a real operand a, the result's real part is a*x and its
    imaginary part a*imag. The bound of the module docstring holds for a complex second operand
    with its complex norms (Thm 24.2 and Lemma 3.5 are for complex vectors; ‖B‖₂ = √N‖b‖₂ and
    ‖B‖∞ <= ‖b‖₁ hold for complex b; each part's error is at most the complex entry's), and
    ‖x + i·y‖₁ <= ‖x‖₁ + ‖y‖₁, ‖x + i·y‖₂ = (‖x‖₂² + ‖y‖₂²)^½ (rounded up); proofs/packed_fft.py
    derives these and checks the bound against exact rational convolutions."""

    def __init__(self, x: npt.NDArray[np.float64], size: int, imag: npt.NDArray[np.float64] | None = None) -> None:
        self.length = int(x.size if imag is None else max(x.size, imag.size))
        self.size = size
        self.norms = _norms(x)
        self.complex = imag is not None
        if imag is not None:
            other = _norms(imag)
            self.norms = (up(self.norms[0] + other[0]), up(math.sqrt(up(up(self.norms[1] ** 2) + up(other[1] ** 2))) * (1 + 2 * _U)))
        self.spectrum = _spectrum(x, size, imag)


def convolve_bracket(
    a: Operand, b: Operand, *, cyclic: bool = False
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None, float]:
    """(ŷ, ẑ, E): ŷ within E of the exact linear convolution a*x at every entry (the module
    docstring's bound for verifier's radix-2 FFT), ẑ within E of a*y when ``b`` is complex x + i·y
    (:class:`Operand` with ``imag``; else None); ``a`` is real. The operands must share one
    transform length >= a.length + b.length − 1 (no wrap-around). With ``cyclic`` they need only fit
    the transform, and ŷ, ẑ (all ``size`` entries) bracket the exact cyclic convolutions of the
    zero-padded operands: Thm 24.2 bounds the computed transform against that exact cyclic product
    in any case, and it equals the linear convolution only at the indices no wrap-around reaches
    (the caller's to pick)."""
    n = a.size if cyclic else a.length + b.length - 1
    if a.complex or a.size != b.size or n > a.size or max(a.length, b.length) > a.size:
        raise ValueError(f"a real operand and one of lengths {a.length}, {b.length} need one transform length >= {n}")
    re, im = _inverse(_product(a.spectrum, b.spectrum), a.size)
    return re[:n], (im[:n] if b.complex else None), _bound_from_norms(*a.norms, *b.norms, a.size)


def _spectrum(
    x: npt.NDArray[np.float64], size: int, imag: npt.NDArray[np.float64] | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(Re, Im) of the full radix-2 FFT of x + i·imag (imag = 0 when None) zero-padded to ``size``."""
    re, im = np.zeros(size), np.zeros(size)
    re[: x.size] = x
    if imag is not None:
        im[: imag.size] = imag
    return fft_complex(re, im, inverse=False, dtype=np.float64)


def _product(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise (ac − bd) + i(ad + bc): each numpy call rounds once (no contraction), Lemma 3.5."""
    return np.subtract(a[0] * b[0], a[1] * b[1]), np.add(a[0] * b[1], a[1] * b[0])


def _inverse_real(spec: tuple[np.ndarray, np.ndarray], size: int, n: int) -> npt.NDArray[np.float64]:
    """Re(IFFT(spec))/N, first n entries (:func:`_inverse`)."""
    return _inverse(spec, size)[0][:n]


def _inverse(spec: tuple[np.ndarray, np.ndarray], size: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(Re, Im) of IFFT(spec)/N: taking the parts and the scaling by 2^-L are exact (up to 2^-1075
    per entry in gradual underflow, covered by the underflow term)."""
    re, im = fft_complex(spec[0], spec[1], inverse=True, dtype=np.float64)
    shift = -(size.bit_length() - 1)
    return np.ldexp(re, shift), np.ldexp(im, shift)


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
    size = 1 << (n - 1).bit_length()
    ea, ca, lost_a = _fixed_point_chunks(a)
    same = a is b
    eb, cb, lost_b = (ea, ca, lost_a) if same else _fixed_point_chunks(b)
    norms_a = [_norms(c) for c in ca]
    norms_b = norms_a if same else [_norms(c) for c in cb]
    fa = [_spectrum(c, size) if norms_a[j][0] > 0 else None for j, c in enumerate(ca)]
    fb = fa if same else [_spectrum(c, size) if norms_b[j][0] > 0 else None for j, c in enumerate(cb)]
    total = np.zeros(n)
    for s in range(2 * CHUNKS - 1):
        terms = [(j, s - j) for j in range(CHUNKS) if 0 <= s - j < CHUNKS]
        terms = [(j, l) for j, l in terms if norms_a[j][0] > 0 and norms_b[l][0] > 0]
        if not terms:
            continue
        products = [_product(fa[j], fb[l]) for j, l in terms]
        spectrum = (sum(p[0] for p in products), sum(p[1] for p in products))
        approx = _inverse_real(spectrum, size, n)
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
        approx = _inverse_real(_product(_spectrum(a, size), _spectrum(b, size)), size, n)
        err = fft_error_bound(a, b, size)
        probs = np.maximum(down(approx - err), 0.0)
        loose = float(np.sum(np.maximum(approx + err, 0.0) - probs))
    # Σ(y − p') = Σa·Σb − Σp' exactly; fsum is correctly rounded (half an ulp each).
    exact_gap = up(up(math.fsum(a) * math.fsum(b)) * (1 + 4 * _U) - math.fsum(probs) * (1 - 2 * _U))
    loose = up(loose * (1 + (n + 4) * _U))
    return probs, max(0.0, min(exact_gap, loose))
