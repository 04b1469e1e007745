"""verifier's own radix-2 FFT: validation, proven twiddle factors and Higham's error constant.

The kernel (:mod:`verifier._fast.radix2`) is the iterative radix-2 decimation-in-time Cooley–Tukey
FFT of Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed.), §24.1, in double or
long double, with textbook complex arithmetic ((ac − bd) + i(ad + bc), compiled with
-ffp-contract=off). For it Higham's Thm 24.2 holds as proven:

    ‖fl(F_N x) − F_N x‖₂ <= c·‖F_N x‖₂,   c = Lη/(1 − Lη),   η = μ + γ₄(√2 + μ),   L = log2 N,

where γ_k = ku/(1 − ku), u the unit roundoff, and μ bounds |ŵ_k − w_k| for every computed twiddle
factor w_k = e^{−2πik/N} (:func:`higham_constant`). The same holds for the unscaled inverse, which
runs the same butterflies on the conjugate twiddles (conjugation is exact).

Twiddle factors and their error μ (:func:`twiddles`). With B = 2^⌈h/2⌉ for N/2 = 2^h, two tables
are built in ball arithmetic (python-flint arb, 128 bits) and rounded to the working precision:
T1[j] = w_j (j < B) and T2[a] = w_{aB} (a < N/(2B)). A double entry is ``float(mid)`` (nearest to
the midpoint); a long-double entry is the long-double sum of that double and the double nearest
to the rest of the midpoint (~106 bits, rounded once to 64). Either way the error of every entry
is then MEASURED rigorously: the entry is converted back to arb exactly (``as_integer_ratio``) and δ_i >= |T̂_i[j] −
T_i[j]| (complex modulus, ball upper end) is taken as the maximum over the table, so no claim about
the conversion is trusted (correct rounding gives δ_i <= u·(1 + 2^-60); a worse conversion only
gives a larger μ). Then w_{aB+b} = T̂2[a]·T̂1[b] is one complex product in the working precision,
each real operation a separate numpy call on real arrays (one rounding each, no contraction), so by
|T̂2T̂1 − T2T1| <= δ1 + δ2 + δ1δ2 and Higham Lemma 3.5 (|fl(xy) − xy| <= √2γ₂|xy|, |xy| <=
(1 + δ1)(1 + δ2); no product underflows, as |T_i| components are 0 or >= sin(2π/N)·(1 − δ)):

    μ = δ1 + δ2 + δ1δ2 + √2γ₂(1 + δ1)(1 + δ2)      (computed in arb, rounded up),

at most about 4.9u; measured 2.83u (N = 4) to 3.97u (N = 2^20) in both precisions.

Underflow, which Thm 24.2's model leaves out, is charged by :func:`underflow_term`: with gradual
underflow a real product gains an absolute error <= s/2 (s the smallest subnormal) and a sum none,
so each butterfly's complex product gains <= √2·s(1 + u) in modulus, each stage <= √(2N)·s(1 + u)²
in ℓ2, and through the remaining stages (each of norm <= √2(1 + η), Higham's proof) at most
L·N·s·(1 + u)²·(1 + η)^L <= L·N·s·(1 + u)²·(1 + c) in all.

The arithmetic this rests on: IEEE 754 binary64 round-to-nearest for double (SSE2 on x86-64), the
x87 80-bit long double with its default 64-bit precision control on x86-64 Linux (u = 2^-64, read
from ``np.finfo``, so a platform whose long double is a double stays rigorous), and no FMA
contraction inside the kernel (-ffp-contract=off).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._fast import radix2 as _kernel
from verifier._types import Side
from verifier.errors import InvalidArgument, NumericalFailure

__all__ = [
    "Twiddles",
    "twiddles",
    "higham_constant",
    "underflow_term",
    "componentwise_error",
    "unit_roundoff",
    "fft_complex",
    "rfft_power2",
    "rfft_pair_power2",
    "irfft_power2",
    "irfft_pair_power2",
    "check_power_of_two",
]

_DTYPES = (np.dtype(np.float64), np.dtype(np.longdouble))
_KERNEL_ERRORS = {
    1: "real and imaginary parts must have the same length",
    2: "the length must be a power of two",
    3: "the twiddle table must hold N/2 entries",
}


def _dtype(dtype: Any) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise InvalidArgument("dtype", dtype, "must be numpy.float64 or numpy.longdouble") from exc
    if dt not in _DTYPES:
        raise InvalidArgument("dtype", dtype, "must be numpy.float64 or numpy.longdouble")
    return dt


def unit_roundoff(dtype: Any) -> float:
    """u = eps/2 of ``dtype`` (2^-53 for double, 2^-64 for the x87 long double), from ``np.finfo``."""
    return float(np.finfo(_dtype(dtype)).eps) / 2.0


def check_power_of_two(name: str, value: Any) -> int:
    """``value`` as an int N = 2^L >= 1, or InvalidArgument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgument(name, value, "must be an integer power of two", "e.g. 1 << (n - 1).bit_length()")
    n = int(value)
    if n < 1 or n & (n - 1):
        raise InvalidArgument(name, value, "must be a power of two >= 1", f"use {1 << max(n - 1, 0).bit_length()}")
    return n


def _arb_exact(x: np.floating) -> arb:
    """The float (double or long double) ``x`` as an exact arb (power-of-two denominator)."""
    num, den = x.as_integer_ratio()
    return arb(num) / den  # den = 2^k: exact at 128 bits for 64-bit significands


def _rounded_table(count: int, size: int, step: int, dt: np.dtype) -> tuple[np.ndarray, np.ndarray, arb]:
    """(re, im, δ): w_{j·step} = e^{−2πi·j·step/N}, j < count, rounded to ``dt``, and a rigorous
    upper bound δ on max_j |ŵ − w| (complex modulus)."""
    re = np.empty(count, dtype=dt)
    im = np.empty(count, dtype=dt)
    worst = arb(0)
    for j in range(count):
        s, c = (arb(-2 * j * step) / size).sin_cos_pi()  # angle −2π·j·step/N, exact argument
        for value, out in ((c, re), (s, im)):
            high = float(value.mid())
            if dt == np.float64:
                out[j] = high
            else:  # two doubles carry ~106 bits; their long-double sum is rounded once
                out[j] = np.longdouble(high) + np.longdouble(float(value.mid() - high))
        err_re = abs(_arb_exact(re[j]) - c)
        err_im = abs(_arb_exact(im[j]) - s)
        worst = worst.max(arb((err_re**2 + err_im**2).sqrt().upper()))
    return re, im, arb(worst.upper())


@dataclass(frozen=True)
class Twiddles:
    """Twiddle table w_k = e^{−2πik/N}, k < N/2, of one (N, dtype), read-only, and ``mu``: an UPPER
    bound on max_k |ŵ_k − w_k| (see the module docstring for its derivation)."""

    size: int
    re: npt.NDArray[Any]
    im: npt.NDArray[Any]
    mu: float


@functools.lru_cache(maxsize=16)
def _twiddles(size: int, dt: np.dtype) -> Twiddles:
    half = size // 2
    if half <= 1:  # N <= 2: only w_0 = 1, exact
        re = np.ones(half, dtype=dt)
        im = np.zeros(half, dtype=dt)
        mu = 0.0
    else:
        h = half.bit_length() - 1
        block = 1 << ((h + 1) // 2)
        with with_precision():
            t1_re, t1_im, delta1 = _rounded_table(block, size, 1, dt)
            t2_re, t2_im, delta2 = _rounded_table(half // block, size, block, dt)
            u = arb(unit_roundoff(dt))
            gamma2 = 2 * u / (1 - 2 * u)
            mu_ball = delta1 + delta2 + delta1 * delta2 + arb(2).sqrt() * gamma2 * (1 + delta1) * (1 + delta2)
            mu = arb_bound(mu_ball, Side.UPPER)
        # w_{aB+b} = T2[a]·T1[b]: four products and two sums, each one rounding in ``dt``.
        rr = np.multiply.outer(t2_re, t1_re)
        ii = np.multiply.outer(t2_im, t1_im)
        ri = np.multiply.outer(t2_re, t1_im)
        ir = np.multiply.outer(t2_im, t1_re)
        re = np.subtract(rr, ii).ravel()
        im = np.add(ri, ir).ravel()
    re.flags.writeable = False
    im.flags.writeable = False
    return Twiddles(size, re, im, mu)


def twiddles(size: int, dtype: Any) -> Twiddles:
    """The cached twiddle table of an N-point radix-2 FFT in ``dtype`` with its proven error μ
    (module docstring: arb tables T1, T2, measured δ1, δ2, one complex product; Higham Lemma 3.5)."""
    return _twiddles(check_power_of_two("size", size), _dtype(dtype))


def higham_constant(size: int, u: float, mu: float) -> float:
    """UPPER bound on c = Lη/(1 − Lη), η = μ + γ₄(√2 + μ), L = log2 N (Higham Thm 24.2): the
    relative ℓ2 error of verifier's radix-2 FFT of N = ``size`` points at unit roundoff ``u`` with
    twiddle error ``mu``. Computed in arb and rounded up; N = 1 (no stage) gives 0."""
    n = check_power_of_two("size", size)
    levels = n.bit_length() - 1
    if levels == 0:
        return 0.0
    with with_precision():
        u_b, mu_b = arb(u), arb(mu)
        gamma4 = 4 * u_b / (1 - 4 * u_b)
        eta = mu_b + gamma4 * (arb(2).sqrt() + mu_b)
        if not levels * eta < 1:
            raise NumericalFailure(f"Higham's FFT bound needs L·η < 1; got L={levels}, η≈{float(eta.mid()):.3g}")
        return arb_bound(levels * eta / (1 - levels * eta), Side.UPPER)


def underflow_term(size: int, dtype: Any) -> float:
    """UPPER bound on the extra ℓ2 error of the unscaled FFT of N = ``size`` points in ``dtype`` from
    gradual underflow, L·N·s·(1 + u)²·(1 + c) (module docstring), s the smallest subnormal."""
    n = check_power_of_two("size", size)
    dt = _dtype(dtype)
    levels = n.bit_length() - 1
    if levels == 0:
        return 0.0
    info = np.finfo(dt)
    u = unit_roundoff(dt)
    c = higham_constant(n, u, twiddles(n, dt).mu)
    with with_precision():
        s = arb(2) ** (int(info.minexp) - int(info.nmant))  # smallest subnormal: 2^(emin − p + 1)
        return arb_bound(levels * n * s * (1 + arb(u)) ** 2 * (1 + arb(c)), Side.UPPER)


@functools.lru_cache(maxsize=64)
def _componentwise(n: int, dt: np.dtype) -> tuple[float, float]:
    levels = n.bit_length() - 1
    if levels == 0:
        return 0.0, 0.0
    info = np.finfo(dt)
    with with_precision():
        u = arb(unit_roundoff(dt))
        mu = arb(twiddles(n, dt).mu)
        nu = arb(2).sqrt() * 2 * u / (1 - 2 * u)  # √2γ₂, Higham Lemma 3.5
        eps = arb(0)
        for _ in range(levels):
            eps = (1 + u) * ((1 + mu) * eps + mu + nu * (1 + mu) * (1 + eps)) + u
        growth = (1 + u) * (1 + mu) * (1 + nu)
        s = arb(2) ** (int(info.minexp) - int(info.nmant))
        absolute = levels * n * s * (1 + u) ** 2 * growth**levels
        return arb_bound(eps, Side.UPPER), arb_bound(absolute, Side.UPPER)


def componentwise_error(size: int, dtype: Any) -> tuple[float, float]:
    """(ε_L, a_L), UPPER bounds such that EVERY bin of verifier's radix-2 FFT of N = ``size`` points
    in ``dtype`` (forward, or the unscaled inverse) satisfies

        |fl(F_N x)_k − (F_N x)_k| <= ε_L·‖x‖₁ + a_L        (‖x‖₁ = Σ_n |x_n|, complex modulus).

    A per-bin (componentwise) companion of Higham's normwise Thm 24.2, proved by induction over the
    stages in Higham's model (§24.1; Lemma 3.5 for the complex product): after stage ℓ every value
    y_j is a DFT of the 2^ℓ inputs S_j feeding it, |y_j| <= ‖x_{S_j}‖₁, and its computed value is
    within ε_ℓ‖x_{S_j}‖₁ (+ underflow). A butterfly a' = a ± ω·b (S_a, S_b disjoint) computes
    τ̂ = fl(ω̂·b̂) with |τ̂ − ωb| <= (1 + μ)|b̂ − b| + μ|b| + √2γ₂(1 + μ)|b̂| and then one complex
    addition (relative error u), so

        ε_{ℓ+1} = (1 + u)·[(1 + μ)ε_ℓ + μ + √2γ₂(1 + μ)(1 + ε_ℓ)] + u,   ε_0 = 0

    bounds the coefficients of both ‖x_{S_a}‖₁ and ‖x_{S_b}‖₁ (μ: the twiddles' proven error of
    :func:`twiddles`). ε_L ≈ L(μ + √2γ₂ + u), about 8·L·u. Gradual underflow adds <= √2·s(1 + u)
    per complex product (s the smallest subnormal); it doubles at most per stage through the
    butterflies' growth (1 + u)(1 + μ)(1 + √2γ₂), so a_L = L·N·s·(1 + u)²·growth^L. Computed in arb
    and rounded up; cached per (N, dtype)."""
    return _componentwise(check_power_of_two("size", size), _dtype(dtype))


def _as_array(name: str, values: Any, dt: np.dtype) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InvalidArgument(name, f"array of shape {arr.shape}", "must be one-dimensional")
    if np.iscomplexobj(arr):
        raise InvalidArgument(name, f"{arr.dtype} array", "must be real (pass real and imaginary parts separately)")
    out = np.array(arr, dtype=dt, copy=True, order="C")
    if not np.all(np.isfinite(out)):
        raise InvalidArgument(name, "array with inf or nan", "must be finite")
    return out


def _run(re: np.ndarray, im: np.ndarray, table: Twiddles, inverse: bool) -> None:
    code = _kernel.fft_inplace(re, im, table.re, table.im, inverse)
    if code:  # pragma: no cover - the Python side validated every condition first
        raise NumericalFailure(f"radix2 kernel failed with code {code}: {_KERNEL_ERRORS.get(code, '?')}")


def fft_complex(re: Any, im: Any, *, inverse: bool, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(Re, Im) of the unscaled radix-2 FFT of re + i·im in ``dtype`` (float64 or longdouble):
    forward X_k = Σ x_n e^{−2πink/N}, or with ``inverse`` the conjugate transform without the 1/N.
    Error: Higham Thm 24.2, :func:`higham_constant` with ``twiddles(N, dtype).mu``, plus
    :func:`underflow_term`. The inputs are copied (converted to ``dtype``)."""
    dt = _dtype(dtype)
    if not isinstance(inverse, (bool, np.bool_)):
        raise InvalidArgument("inverse", inverse, "must be True or False")
    re_out = _as_array("re", re, dt)
    im_out = _as_array("im", im, dt)
    if re_out.size != im_out.size:
        raise InvalidArgument("im", f"length {im_out.size}", f"must have the length of re ({re_out.size})")
    n = check_power_of_two("len(re)", re_out.size)
    _run(re_out, im_out, _twiddles(n, dt), bool(inverse))
    return re_out, im_out


def _forward_padded(parts: dict[str, Any], size: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(Re, Im) of the forward radix-2 FFT of the real vectors ``parts`` (one: real part; two: real
    and imaginary parts, named for the error messages), zero-padded to N = ``size``, in ``dtype``."""
    dt = _dtype(dtype)
    n = check_power_of_two("size", size)
    re, im = np.zeros(n, dtype=dt), np.zeros(n, dtype=dt)
    for (name, values), out in zip(parts.items(), (re, im)):
        arr = _as_array(name, values, dt)
        if arr.size > n:
            raise InvalidArgument(name, f"length {arr.size}", f"must be at most size={n}", f"raise size or shorten {name}")
        out[: arr.size] = arr
    _run(re, im, _twiddles(n, dt), False)
    return re, im


def rfft_power2(x: Any, size: int, dtype: Any) -> np.ndarray:
    """Bins 0..N/2 of the forward radix-2 FFT of the real vector ``x`` zero-padded to N = ``size``,
    as a complex array of ``dtype`` (complex128 or clongdouble). It is the complex FFT of x + 0i, so
    the error bound of :func:`fft_complex` holds for the full spectrum, a fortiori for these bins."""
    re, im = _forward_padded({"x": x}, size, dtype)
    half = re.size // 2 + 1 if re.size > 1 else 1
    out = np.empty(half, dtype=np.result_type(re.dtype, np.complex64))
    out.real = re[:half]
    out.imag = im[:half]
    return out


def rfft_pair_power2(x: Any, y: Any, size: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Bins 0..N/2 of the forward FFTs of two real vectors ``x`` and ``y`` (zero-padded to N =
    ``size``) from ONE complex transform Z of x + i·y, split by

        X_k = (Z_k + conj Z_{N−k})/2,    Y_k = (Z_k − conj Z_{N−k})/(2i)    (Z_N = Z_0),

    half the work of two transforms. Error: Ẑ = Z + E with ‖E‖₂ bounded by Higham Thm 24.2 for
    ‖Z‖₂ = √N·(‖x‖₂² + ‖y‖₂²)^½ (:func:`higham_constant`, :func:`underflow_term`). The split is one
    complex addition (componentwise relative error <= u) and exact steps (conjugation, halving,
    multiplication by −i), and X̂_{N−k} computed by the same formula is exactly conj X̂_k; so the
    full (Hermitian) spectrum X̂ satisfies ‖X̂ − X‖₂ <= ‖E‖₂ + u/(1 − u)·‖X̂‖₂ + N·s (s the smallest
    subnormal, for a halving that underflows), and likewise Y."""
    re, im = _forward_padded({"x": x, "y": y}, size, dtype)
    n = re.size
    half = n // 2 + 1 if n > 1 else 1
    mirror = (-np.arange(half)) % n  # N − k (0 for k = 0)
    re_k, im_k, re_m, im_m = re[:half], im[:half], re[mirror], im[mirror]
    ctype = np.result_type(re.dtype, np.complex64)
    first = np.empty(half, dtype=ctype)
    first.real = (re_k + re_m) / 2
    first.imag = (im_k - im_m) / 2
    second = np.empty(half, dtype=ctype)
    second.real = (im_k + im_m) / 2
    second.imag = (re_m - re_k) / 2
    return first, second


def _hermitian(name: str, half_spectrum: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(Re, Im) of the full Hermitian spectrum of length N = ``n`` >= 2 whose bins 0..N/2 are
    ``half_spectrum`` (validated), with the imaginary parts of X_0 and X_{N/2} zeroed (exact steps)."""
    spec = np.asarray(half_spectrum)
    if spec.ndim != 1 or spec.size != n // 2 + 1 and not (n == 1 and spec.size == 1):
        raise InvalidArgument(name, f"length {spec.size}", f"must hold size/2 + 1 = {n // 2 + 1} bins")
    spec = spec.astype(np.complex128, copy=False)
    if not np.all(np.isfinite(spec)):
        raise InvalidArgument(name, "array with inf or nan", "must be finite")
    if n == 1:
        return np.array([spec[0].real]), np.zeros(1)
    h = n // 2
    re = np.empty(n)
    im = np.empty(n)
    re[: h + 1] = spec.real
    im[: h + 1] = spec.imag
    im[0] = 0.0
    im[h] = 0.0
    re[h + 1 :] = spec.real[1:h][::-1]
    im[h + 1 :] = -spec.imag[1:h][::-1]
    return re, im


def irfft_power2(half_spectrum: Any, size: int) -> npt.NDArray[np.float64]:
    """Real vector z = Re(IFFT(X))/N in double for the Hermitian spectrum X of length N = ``size``
    whose bins 0..N/2 are ``half_spectrum`` (X_{N−k} = conj X_k).

    Exact steps around one double radix-2 inverse transform: the Hermitian rebuild (copies and sign
    flips), zeroing the imaginary parts of X_0 and X_{N/2} (the exact spectrum has them real, so
    this only moves X towards it), taking the real part (|Re e| <= |e|) and the scaling by 2^-L
    (exact except for gradual underflow: <= 2^-1075 per entry). Error of the inverse: Higham
    Thm 24.2 as in :func:`fft_complex`; note that the ℓ2 error of the rebuilt spectrum is up to √2
    times that of the given bins (the bins 0 < k < N/2 count twice)."""
    n = check_power_of_two("size", size)
    re, im = _hermitian("half_spectrum", half_spectrum, n)
    if n == 1:
        return re
    _run(re, im, _twiddles(n, np.dtype(np.float64)), True)
    return np.ldexp(re, -(n.bit_length() - 1))


def irfft_pair_power2(half_x: Any, half_y: Any, size: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`irfft_power2` of two Hermitian spectra X and Y from ONE complex inverse transform of
    W = X + i·Y: IFFT(W) = N(x + i·y) for the real x = IFFT(X)/N and y = IFFT(Y)/N, so x is the
    real and y the imaginary part of the result (half the work of two inverses).

    Error: forming W is one real addition or subtraction per component (Re W = Re X − Im Y,
    Im W = Im X + Re Y; relative error u each, so ‖Ŵ − W‖₂ <= u‖W‖₂ <= u(‖X‖₂ + ‖Y‖₂)); the inverse
    as in :func:`irfft_power2` for ‖Ŵ‖₂ <= (1 + u)(‖X‖₂ + ‖Y‖₂); taking the real or the imaginary
    part does not increase an error's modulus. So each of x̂, ŷ is within
    (c·(1 + u) + u)(‖X‖₂ + ‖Y‖₂)/√N + (underflow terms)/N of its exact vector in ℓ2, c Higham's
    constant of the double transform."""
    n = check_power_of_two("size", size)
    re_x, im_x = _hermitian("half_x", half_x, n)
    re_y, im_y = _hermitian("half_y", half_y, n)
    if n == 1:
        return re_x, re_y
    re = re_x - im_y
    im = im_x + re_y
    _run(re, im, _twiddles(n, np.dtype(np.float64)), True)
    shift = -(n.bit_length() - 1)
    return np.ldexp(re, shift), np.ldexp(im, shift)
