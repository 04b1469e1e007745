# cython: language_level=3
"""Iterative radix-2 decimation-in-time Cooley–Tukey FFT, in place, on separate real/imag arrays.

    forward:  X_k = Σ_n x_n w^{nk},  inverse (unscaled): x_n = Σ_k X_k w̄^{nk},  w = e^{−2πi/N}

This is the algorithm of Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed.),
§24.1 and Thm 24.2: a bit-reversal permutation (exact), then L = log2 N stages of butterflies
(y_j, y_{j+h}) = (x_j + ω x_{j+h}, x_j − ω x_{j+h}) with ω = w_{j·N/(2h)} read from a twiddle table
passed in by the caller (its error μ is the caller's to bound: :mod:`verifier.pld.radix2`). The
complex product is the textbook (ac − bd) + i(ad + bc) (Higham Lemma 3.5: relative error <= √2γ₂);
the module is compiled with -ffp-contract=off, so no fused multiply-add merges two roundings. The
inverse uses the conjugate twiddles (negating the imaginary part is exact) and does NOT divide by N.
Two liberties change no computed value (a test compares against a stage-by-stage numpy twin value
for value): within a stage, blocks are walked in memory order; a butterfly whose x_b is zero only
copies x_a (ω·0 = ±0 and x_a ± 0 = x_a), and one with both operands zero writes nothing.

Called through :mod:`verifier.pld.radix2`, which validates and allocates; these kernels never
allocate, touch Python objects or read global state, and report failure by a return code:
0 success, 1 length mismatch, 2 N not a power of two, 3 twiddle table of the wrong length.
"""

from libc.stdint cimport uint16_t, uint64_t
from libc.string cimport memcpy

ctypedef fused real_t:
    double
    long double


cdef int _check(Py_ssize_t n, Py_ssize_t n_im, Py_ssize_t n_twr, Py_ssize_t n_twi) noexcept nogil:
    if n_im != n:
        return 1
    if n < 1 or (n & (n - 1)) != 0:
        return 2
    if n_twr != n_twi or n_twr != (n // 2 if n > 1 else 0):
        return 3
    return 0


cdef void _bit_reverse(real_t[::1] re, real_t[::1] im) noexcept nogil:
    """Permute x into bit-reversed index order (exact: only swaps)."""
    cdef Py_ssize_t n = re.shape[0], i, j = 0, bit
    cdef real_t t
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            t = re[i]
            re[i] = re[j]
            re[j] = t
            t = im[i]
            im[i] = im[j]
            im[j] = t


cdef inline bint _is_zero(const real_t* p) noexcept nogil:
    """Whether *p is ±0, read as integers (no x87 load): a double is ±0 iff its bits other than the
    sign are 0; an x87 80-bit long double iff its 64-bit significand (explicit integer bit) and its
    15-bit exponent are 0 (x86-64 little-endian layout; the only encodings of zero)."""
    cdef uint64_t bits
    cdef uint16_t top
    memcpy(&bits, p, 8)
    if real_t is double:
        return (bits << 1) == 0
    else:
        memcpy(&top, (<const char*> p) + 8, 2)
        return bits == 0 and (top & 0x7FFF) == 0


cdef inline void _butterfly(real_t* pr, real_t* pi, Py_ssize_t a, Py_ssize_t b,
                            const real_t* twr, const real_t* twi, Py_ssize_t k, bint inverse) noexcept nogil:
    """(x_a, x_b) <- (x_a + ω·x_b, x_a − ω·x_b), ω = w_k (conjugated for the inverse), textbook
    complex product.

    When x_b = 0 the arithmetic is skipped: ω·0 is ±0 and x_a ± (±0) equals x_a as a number (only the
    sign of a zero may differ, which changes no later value), so x_a is copied bit for bit to x_b and
    the result is the one of the full butterfly, which Thm 24.2 describes; when x_a is 0 too, nothing
    is written. Zero-padded inputs and sparse spectra skip most butterflies of their first stages."""
    cdef real_t ar, ai, xr, xi, tr, ti, wr, wi
    if _is_zero(pr + b) and _is_zero(pi + b):
        if not (_is_zero(pr + a) and _is_zero(pi + a)):
            memcpy(pr + b, pr + a, sizeof(real_t))
            memcpy(pi + b, pi + a, sizeof(real_t))
        return
    wr = twr[k]
    wi = -twi[k] if inverse else twi[k]  # conjugate: negation is exact
    ar = pr[a]
    ai = pi[a]
    xr = pr[b]
    xi = pi[b]
    tr = wr * xr - wi * xi
    ti = wr * xi + wi * xr
    pr[b] = ar - tr
    pi[b] = ai - ti
    pr[a] = ar + tr
    pi[a] = ai + ti


cdef void _stage(real_t* pr, real_t* pi, const real_t* twr, const real_t* twi, Py_ssize_t n,
                 Py_ssize_t half, bint inverse) noexcept nogil:
    """One radix-2 stage: butterflies (start + j, start + j + half), ω = w_{j·N/(2·half)}."""
    cdef Py_ssize_t stride = n // (2 * half), start = 0, j
    while start < n:  # blocks outer, butterflies inner: contiguous memory access
        for j in range(half):
            _butterfly(pr, pi, start + j, start + j + half, twr, twi, j * stride, inverse)
        start += 2 * half


def fft_inplace(
    real_t[::1] re,
    real_t[::1] im,
    const real_t[::1] tw_re,
    const real_t[::1] tw_im,
    bint inverse,
) -> int:
    """Radix-2 DIT FFT of (re + i·im), in place, length N = 2^L; ``tw_re``/``tw_im`` hold the
    N/2 twiddles w_k = e^{−2πik/N} (conjugated here when ``inverse``). Returns 0, or the failure
    code of the module docstring (arrays untouched then)."""
    cdef Py_ssize_t n = re.shape[0], half
    cdef int code = _check(n, im.shape[0], tw_re.shape[0], tw_im.shape[0])
    if code:
        return code
    if n == 1:
        return 0
    with nogil:
        _bit_reverse(re, im)
        half = 1
        while half < n:
            _stage(&re[0], &im[0], &tw_re[0], &tw_im[0], n, half, inverse)
            half *= 2
    return 0


def bit_reverse(real_t[::1] re, real_t[::1] im) -> int:
    """The bit-reversal permutation alone, in place (for tests). Returns 0, 1 or 2 as above."""
    cdef Py_ssize_t n = re.shape[0]
    if im.shape[0] != n:
        return 1
    if n < 1 or (n & (n - 1)) != 0:
        return 2
    with nogil:
        _bit_reverse(re, im)
    return 0
