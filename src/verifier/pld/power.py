"""m-fold self-composition of a discrete PLD by one FFT power, with a rigorous one-sided error.

The PLD of the m-fold composition of a mechanism is the m-fold convolution of its PLD (Steinke
2022, Thm 9): finite part y = p^{*m}, mass at +∞ T^m − S^m (S = Σp, T = S + p_∞). Instead of
⌊log2 m⌋ + popcount(m) − 1 rigorous convolutions (binary exponentiation, each ~20 FFTs on the exact
fixed-point route of :mod:`verifier.pld.fft`), :func:`power_self_compose` computes

    z = irfft( complex128( rfft_longdouble(p, N) ** m ), N )

with one forward FFT in ``np.longdouble``, a binary powering loop written here (so that the number
of roundings is known), a cast and one inverse FFT in double. That is the CIRCULAR m-fold convolution
of length N, so the result is moved to the safe side twice:

1. Wrap-around. A Chernoff bound (valid for a measure of any total mass), for s = t·h > 0,

       Σ_{j >= B} y_j <= e^{−sB}·M(s)^m,   M(s) = Σ_i p_i e^{s·i}   (relative grid indices),

   and the same on the reversed vector for the lower tail, picks a window [w0, w0 + N) of the
   support [0, m(n − 1)] outside which at most ``tail_mass`` lies on each side (the tilt s is found
   by a float search; the bound is then evaluated rigorously at that s: e^{−s} as an arb ball
   rounded up, powers by ``np.cumprod`` with each product charged (1 − u)^{-1} and 2^-1074
   absolute for underflow). Window entry k holds Σ_{x ≡ w0 + k (mod N)} y_x (``np.roll``).
   DOMINATING: mass from above the window wraps DOWN (unsafe): the upper-tail bound τ_hi is added
   to the mass at +∞. DOMINATED: mass from below wraps UP (unsafe): τ_lo is removed from the top of
   the result (highest losses first), which lowers every survival sum S(x) = Σ_{i >= x} by min(τ_lo,
   S(x)). Mass wrapping the other way only moves the result towards its own side.
2. Round-off, bounded in ℓ2 over the full (Hermitian) spectrum and turned into an ℓ1 bound E1 on
   the result; the model is Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed.),
   Thm 24.2 for the FFT (‖fl(Fx) − Fx‖₂ <= c·‖Fx‖₂, c = Lη/(1 − Lη), η = μ + γ₄(√2 + μ), μ the
   proven twiddle error of :mod:`verifier.pld.radix2`), which applies as proven because both
   transforms are verifier's own radix-2 Cooley–Tukey kernels on N = 2^L points, and Lemma 3.5 for
   complex multiplication (relative error ν = √2·γ₂):

   - forward FFT (long double, unit roundoff u_ld from ``np.finfo``; the complex FFT of p + 0i):
     ‖Â − A‖₂ <= e_A = c_ld√N‖p‖₂ + (underflow term of :func:`~verifier.pld.radix2.underflow_term`);
   - power: |Â_k^m − A_k^m| <= m·R^{m−1}|Â_k − A_k| with R = ‖p‖₁ + e_A >= max(|A_k|, |Â_k|).
     Only bins 0..N/2 are powered and the full spectrum is their Hermitian rebuild, in which the
     bins 0 < k < N/2 count twice, so D1 = √2·m·R^{m−1}·e_A. Per bin, the same mean-value bound with
     R_k = |Â_k| + e_k and the componentwise FFT error e_k >= |Â_k − A_k|
     (:func:`~verifier.pld.radix2.componentwise_error`) gives D1' = ‖(m·R_k^{m−1}·e_k)_k‖₂ over the
     full spectrum (:func:`_binwise_power_error`); D1 = min of the two. R_k^{m−1} vanishes wherever
     the characteristic function has decayed, so D1' grows like √m where the normwise D1 grows like
     m: at T = 10⁵ the normwise E1 (~2.4e-10 for the issue-17 Poisson workload) exceeded
     :data:`POWER_ERROR_LIMIT` and forced the binary fallback; with D1' it is ~4e-12, and ~5e-11 at
     T = 10⁶. The powering loop multiplies m factors
     in some tree, so
     fl(Â_k^m) = Â_k^m(1 + θ_k), |θ_k| <= (1 + ν)^{m−1} − 1, giving D2 = θ·‖Â^m‖₂ (plus an
     absolute long-double underflow term);
   - the cast to complex128: D3 = u·‖W‖₂ + √N·2^-1074;
   - the inverse FFT in double (unscaled, error c_d·√N‖P̂‖₂ + f_d, f_d its underflow term), then the
     real part and the scaling by 2^-L, both exact (up to 2^-1075 per entry for gradual underflow):
     c_d·‖P̂‖₂/√N + f_d/N in ℓ2;
   - ℓ1 <= √N·ℓ2, so E1 = D1 + D2 + D3 + c_d‖P̂‖₂ + f_d/√N + N·2^-1074 (rounded up). For a pair
     (:func:`power_self_compose_pair`) the two inverses are one transform of P̂ + i·Q̂
     (:func:`~verifier.pld.radix2.irfft_pair_power2`), charged (c_d(1 + u) + u)(‖P̂‖₂ + ‖Q̂‖₂)
     instead of c_d‖P̂‖₂ on each side.

   The result is max(ẑ, 0) (clipping moves every entry towards the exact, non-negative one).
   DOMINATING: E1 joins the mass at +∞ (then Σ_{i>=x} ours >= Σ_{i>=x} exact for every x).
   DOMINATED: E1 is removed from the top, like τ_lo.

No assumption about a library FFT is left. The bound relies on: IEEE 754 binary64 arithmetic
with round-to-nearest for double; on x86-64 Linux, the x87 80-bit long double with its default
64-bit precision control (eps = 2^-63) for the forward transform and the powering; no FMA
contraction inside the kernels (compiled with -ffp-contract=off). Every constant is derived from
``np.finfo``, so a platform whose long double is a double stays rigorous, only looser (and then
usually takes the binary fallback below). The window is chosen as before; its length is rounded up
to the next power of two.

:func:`self_compose` uses this route and falls back to binary exponentiation of the rigorous
:func:`verifier.pld.distribution.compose` when E1 exceeds :data:`POWER_ERROR_LIMIT` (e.g. a
DOMINATING PLD of total mass well above one, whose R^{m−1} explodes) or is not finite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._budget import Cost, refusal
from verifier._directed import arb_bound, up, with_precision
from verifier._types import Dominance, Side
from verifier._validation import check_integer, check_nonnegative
from verifier.errors import AccuracyNotReachable, InvalidArgument, NotApplicable, NumericalFailure
from verifier.pld.binary_power import binary_power
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD, _truncate, compose, sum_down, sum_up
from verifier.pld.fft import _norms
from verifier.pld.radix2 import (
    componentwise_error,
    higham_constant,
    irfft_pair_power2,
    irfft_power2,
    rfft_pair_power2,
    rfft_power2,
    twiddles,
    underflow_term,
)

__all__ = [
    "POWER_ERROR_LIMIT",
    "PowerReport",
    "power_self_compose",
    "power_self_compose_pair",
    "self_compose",
    "self_compose_pair",
    "self_compose_pair_routed",
]

#: Largest certified ℓ1 round-off E1 the power route may charge before :func:`self_compose` uses
#: binary exponentiation instead: 1e-10 is four orders below the smallest δ the certifiers report
#: (1e-6 .. 1e-10 targets are compared against budgets of 1e-11 .. 1e-9 the PLD construction
#: already carries after 10^3..10^4 compositions).
POWER_ERROR_LIMIT = 1e-10

_U = 2.0**-53  # unit roundoff of double
_U_LD = float(np.finfo(np.longdouble).eps) / 2.0  # unit roundoff of long double (2^-64 on x86-64)
_TINY_LD = np.finfo(np.longdouble).smallest_normal
_SUB = 2.0**-1074  # smallest positive double: the absolute error of one underflowing operation

#: Spectrum bins with |Â_k|^m below this are not powered but set to 0 and charged (√N of them at
#: most in ℓ2): 2^-200 is ~10^-60, far below every other term of E1.
NEGLIGIBLE_POWER = 2.0**-200


@dataclass(frozen=True)
class PowerReport:
    """What the power route charged (all UPPER bounds, informational): the FFT length ``size``, the
    first window index ``start`` (relative to m·offset), the Chernoff tail bounds ``tau_low`` (mass
    below the window) and ``tau_high`` (mass above), and the ℓ1 round-off bound ``e1``."""

    size: int
    start: int
    tau_low: float
    tau_high: float
    e1: float


def _upper(x: arb) -> float:
    return arb_bound(x, Side.UPPER)


def _lower(x: arb) -> float:
    return arb_bound(x, Side.LOWER)


def _gamma(k: int, u: arb) -> arb:
    return k * u / (1 - k * u)


# ---- Chernoff window ---------------------------------------------------------------------------


def _power_of_two(length: int) -> int:
    """The smallest power of two >= ``length`` (the radix-2 FFT length for a window)."""
    return 1 << max(length - 1, 0).bit_length()


def _tilt_search(q: npt.NDArray[np.float64], times: int, log_inv_tail: float) -> tuple[float, float]:
    """Float search (not rigorous) for the tilt s > 0 minimising B(s) = (m·K(s) + Λ)/s, K(s) = ln Σ q_i e^{s i},
    the first index B with e^{−sB}M(s)^m <= e^{−Λ}. Returns (s, B(s)); B(s) = inf if no tilt helps.

    B is quasi-convex: B'(s) has the sign of g(s) = m(sK'(s) − K(s)) − Λ, increasing (g' = m·s·K'' >= 0),
    so a safeguarded Newton iteration on g finds its root.
    """
    top = float(q.size - 1)
    nonzero = np.flatnonzero(q)  # zero masses add nothing (tail-coarsened PLDs are mostly zeros)
    idx = nonzero.astype(np.float64)
    dist = top - idx  # shifted exponents −s·(n−1−i) <= 0: no overflow
    log_q = np.log(q[nonzero])
    if nonzero.size == 0:
        return 1.0, math.inf

    def moments(s: float) -> tuple[float, float, float]:
        # Weights in the log domain, scaled by their largest one; those below e^-700 relative are
        # dropped (avoids slow subnormal arithmetic; the search need not be exact).
        e = log_q - s * dist
        shift = float(np.max(e))
        e -= shift
        e[e < -700.0] = -np.inf
        w = np.exp(e)
        z = float(np.sum(w))
        # elementwise products and sums, not np.dot: a threaded BLAS dot of a few 10^4 entries took
        # ~25 ms on a loaded machine (thread hand-off), 1000× the arithmetic (issue 17 profile)
        mean = float(np.sum(w * idx)) / z
        second = float(np.sum(w * (idx * idx))) / z
        return s * top + shift + math.log(z), mean, max(second - mean * mean, 0.0)

    k0, mean0, var0 = moments(0.0)
    if var0 <= 0.0:
        return 1.0, math.inf
    s = math.sqrt(2.0 * max(log_inv_tail + times * k0, 1.0) / (times * var0))
    lo, hi = 0.0, math.inf
    for _ in range(60):
        k, mean, var = moments(s)
        g = times * (s * mean - k) - log_inv_tail
        if g < 0:
            lo = s
        else:
            hi = s
        slope = times * s * var
        step = s - g / slope if slope > 0 else math.nan
        if not (lo < step < hi) or not math.isfinite(step):
            step = 2.0 * s if math.isinf(hi) else math.sqrt(max(lo, hi * 1e-12) * hi)
        if abs(step - s) <= 1e-3 * s or s > 1e6:  # B(s) is flat at its minimum
            break
        s = step
    if not (s > 0.0 and math.isfinite(s)):  # t so large (1e30) that the tilt underflows: no window
        raise NumericalFailure(f"no Chernoff window for {times:.3g} compositions (the tilt s = {s!r} underflows)")
    k = moments(s)[0]
    return s, (times * k + log_inv_tail) / s


def _chernoff_tail(q: npt.NDArray[np.float64], times: int, s: float, start: int, total_up: float) -> float:
    """Rigorous UPPER bound on Σ_{j >= start} (q^{*m})_j, e^{−s·start}·(Σ_i q_i e^{s i})^m (Chernoff),
    for a tilt s > 0 chosen by anyone. M(s) = e^{s(n−1)}·Σ_k q_{n−1−k} r^k with r = e^{−s} <= r_up
    (an arb ball rounded up); r_up^k <= (fl(r_up^k) + k·2^-1074)/(1 − u)^k for the cumulative
    product (one rounding per step, Higham's model with underflow), and the dot product is charged
    (n + 2)u by :func:`sum_up` plus (1 − u)^{-1} and n·2^-1074 for its products."""
    n = q.size
    with with_precision():
        s_arb = arb(s)
        r_up = _upper((-s_arb).exp())
        if n > 1:
            powers = np.cumprod(np.concatenate(([1.0], np.full(n - 1, r_up))))
            dot = sum_up(q[::-1] * powers)
        else:
            dot = float(q[0])
        one_minus_u = arb(1.0 - _U)
        sigma = (arb(dot) + n * _SUB * (1 + arb(total_up))) / one_minus_u ** (n + 1)
        log_bound = times * (s_arb * (n - 1) + sigma.log()) - s_arb * start
        return _upper(log_bound.exp())


#: Peak bytes per point of the FFT length: long-double complex spectra (32 bytes) and their
#: temporaries, about three of them.
BYTES_PER_POINT = 96


def _window(
    q: npt.NDArray[np.float64], times: int, tail: float, total_up: float, min_size: int = 1
) -> tuple[int, int, float, float]:
    """:func:`_window_unchecked`, refused (AccuracyNotReachable, with the figure) when its FFT length
    needs more memory than the machine has to spare (t = 1e30 compositions: a support of 1e30 points)."""
    found = _window_unchecked(q, times, tail, total_up, min_size)
    reason = refusal(Cost(bytes=float(found[0]) * BYTES_PER_POINT, what=f"{times:.3g} compositions"), None)
    if reason:
        raise AccuracyNotReachable(f"power route {reason}")
    return found


def _window_unchecked(
    q: npt.NDArray[np.float64], times: int, tail: float, total_up: float, min_size: int = 1
) -> tuple[int, int, float, float]:
    """(N, w0, τ_low, τ_high): FFT length (a power of two, at least ``min_size``), first window
    index, and rigorous bounds on the mass of q^{*m} below w0 and at or above w0 + N (both 0 when
    the whole support fits)."""
    n = q.size
    support = times * (n - 1) + 1
    full = (_power_of_two(max(support, min_size)), 0, 0.0, 0.0)
    if tail <= 0.0 or n == 1:
        return full
    log_inv = math.log(2.0 / tail)  # aim at tail/2: the rigorous bound then passes with room
    for _ in range(4):
        s_hi, b_hi = _tilt_search(q, times, log_inv)
        s_lo, b_lo = _tilt_search(q[::-1], times, log_inv)
        if not (b_hi < support and b_lo < support):
            return full
        first = support - math.ceil(b_lo)  # indices below: lower tail
        width = math.ceil(b_hi) + 1 - first
        if width >= support:
            return full
        size = _power_of_two(max(width, n, min_size))
        if size >= support:
            return full
        start = min(max(first - (size - width) // 2, 0), support - size)
        tau_hi = _chernoff_tail(q, times, s_hi, start + size, total_up) if start + size < support else 0.0
        tau_lo = _chernoff_tail(q[::-1], times, s_lo, support - start, total_up) if start > 0 else 0.0
        if tau_hi <= tail and tau_lo <= tail:
            return size, start, tau_lo, tau_hi
        log_inv += math.log(16.0)  # the float search was too optimistic: aim lower
    return full  # pragma: no cover - the rigorous bound missed four times


# ---- round-off ---------------------------------------------------------------------------------


def _spectrum_norm_up(values: np.ndarray, indices: npt.NDArray[np.int64], size: int) -> float:
    """UPPER bound on the ℓ2 norm of the full (Hermitian) spectrum of length ``size`` whose half (the
    rfft layout, bins 0..⌊N/2⌋) is zero except ``values`` at ``indices``: |X_0|² + 2Σ_{0<k<N/2}|X_k|²
    (+ |X_{N/2}|² for even N). Summed in the array's precision (relative error <= γ_{N+4} at that unit
    roundoff, Higham Lemma 3.1) and rounded up; each underflowing |X_k|² costs at most the smallest
    normal number of that precision."""
    u = float(np.finfo(values.real.dtype).eps) / 2.0
    sq = values.real * values.real + values.imag * values.imag
    single = (indices == 0) | ((indices == size // 2) & (size % 2 == 0))  # bins counted once
    total = 2 * np.sum(sq) - np.sum(sq[single])  # the subtracted terms are exact halves of added ones
    tiny = float(np.finfo(values.real.dtype).smallest_normal) * (size + 4)
    with with_precision():
        bound = (arb(float(total)) * (1 + 2 * _U) + tiny) * (1 + arb(u) * (size + 8)) / (1 - arb(u) * (size + 8))
        return _upper(bound.sqrt())


def _power(base: np.ndarray, times: int) -> np.ndarray:
    """base**times elementwise by binary powering, written out so that every rounding is a complex
    multiplication (numpy's (ac − bd) + i(ad + bc), relative error ν = √2γ₂: Higham Lemma 3.5)."""
    return binary_power(base, times, lambda x, y: x * (x if y is None else y))


def _multiplications(times: int) -> int:
    return (times.bit_length() - 1) + bin(times).count("1") - 1


@dataclass(frozen=True)
class _Plan:
    """One side's composition before its transform: the finite part ``q`` (None when empty), its
    window, and the mass at +∞ and carried charges of the result."""

    pld: DiscretePLD
    times: int
    tail: float
    inf_mass: float
    carried_budget: float
    carried_drop: float
    q: np.ndarray | None
    offset: int
    total_up: float
    size: int
    start: int
    tau_lo: float
    tau_hi: float


def _plan(pld: DiscretePLD, m: int, tail: float) -> _Plan:
    """Mass at +∞ (T^m − S^m, increasing in S and in p_∞, S bracketed by sum_up / sum_down), the
    trimmed finite part and its Chernoff window."""
    dominating = pld.dominance is Dominance.DOMINATING
    with with_precision():
        p_inf = arb(pld.infinite_mass)
        if dominating:
            s_ball = arb(sum_up(pld.probs))
            t_ball = s_ball + p_inf
            inf_mass = _upper(t_ball**m - s_ball**m)
            inf_mass = min(inf_mass, _upper(m * p_inf * t_ball ** (m - 1)))
        else:
            s_ball = arb(sum_down(pld.probs))
            inf_mass = max(0.0, _lower((s_ball + p_inf) ** m - s_ball**m))
    carried_budget = up(m * pld.error_budget * (1 + 4 * _U)) if pld.error_budget else 0.0
    carried_drop = up(m * pld.dropped_mass * (1 + 4 * _U)) if pld.dropped_mass else 0.0
    nonzero = np.flatnonzero(pld.probs)
    if nonzero.size == 0:
        return _Plan(pld, m, tail, inf_mass, carried_budget, carried_drop, None, m * pld.offset, 0.0, 1, 0, 0.0, 0.0)
    first, last = int(nonzero[0]), int(nonzero[-1])
    q = np.ascontiguousarray(pld.probs[first : last + 1])
    total_up = sum_up(q)
    size, start, tau_lo, tau_hi = _window(q, m, tail, total_up)
    return _Plan(pld, m, tail, inf_mass, carried_budget, carried_drop, q, m * (pld.offset + first), total_up, size, start, tau_lo, tau_hi)


def _widened(plan: _Plan, size: int) -> _Plan:
    """``plan`` with its Chernoff window recomputed for at least ``size`` points (a packed pair shares
    one transform length); the mass at +∞ and the carried charges do not depend on the window."""
    found = _window(plan.q, plan.times, plan.tail, plan.total_up, size)
    return replace(plan, size=found[0], start=found[1], tau_lo=found[2], tau_hi=found[3])


def _empty(plan: _Plan) -> tuple[DiscretePLD, PowerReport]:
    pld = plan.pld
    out = DiscretePLD(
        pld.step, plan.offset, np.zeros(1), plan.inf_mass, plan.carried_drop, pld.dominance, pld.direction, plan.carried_budget
    )
    return out, PowerReport(1, 0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class _ForwardError:
    """Two rigorous bounds on the error Â − A of a computed half spectrum: ``l2`` (arb) bounds its full
    (Hermitian) spectrum in ℓ2 (Higham Thm 24.2); per bin, |Â_k − A_k| <= ``uniform`` + ``relative``·|Â_k|
    (:func:`verifier.pld.radix2.componentwise_error`)."""

    l2: arb
    uniform: float
    relative: float


def _forward_error(size: int, one_norm: float, two_norm: float, spectrum_norm: float | None = None) -> _ForwardError:
    """Error bounds of the long-double forward transform of a vector of norms ``one_norm`` and
    ``two_norm``: normwise (Higham Thm 24.2 with the twiddles' μ, plus underflow) and per bin
    (ε_L‖x‖₁ + a_L). With ``spectrum_norm`` (the ℓ2 norm of the split spectrum, for a packed pair:
    :func:`verifier.pld.radix2.rfft_pair_power2`), the split's rounding is added: u/(1 − u)·‖X̂‖₂ + N·s in ℓ2,
    and per bin u/(1 − u)·|X̂_k| + s (s = 2^-1074 >= the long-double smallest normal, for an underflowing
    halving)."""
    eps, absolute = componentwise_error(size, np.longdouble)
    tiny = max(float(_TINY_LD), _SUB)
    with with_precision():
        c_ld = arb(higham_constant(size, _U_LD, twiddles(size, np.longdouble).mu))
        l2 = c_ld * arb(size).sqrt() * arb(two_norm) + arb(underflow_term(size, np.longdouble))
        uniform = arb(eps) * arb(one_norm) + arb(absolute)
        if spectrum_norm is not None:
            l2 += arb(_U_LD) / (1 - arb(_U_LD)) * arb(spectrum_norm) + size * arb(tiny)
            uniform += arb(tiny)
        # the split's addition: |fl(s) − s| <= u|s| <= u/(1 − u)·|fl(s)|, and 2^-50 > u/(1 − u) − u
        return _ForwardError(l2, _upper(uniform), _U_LD * (1.0 + 2.0**-50) if spectrum_norm is not None else 0.0)


def power_self_compose(pld: DiscretePLD, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS) -> tuple[DiscretePLD, PowerReport]:
    """PLD of the ``times``-fold composition of ``pld`` (Steinke 2022, Thm 9) by one long-double FFT
    power, on the same side as ``pld``, and the charges made (see the module docstring: Chernoff
    window, Higham Thm 24.2 / Lemma 3.5 round-off E1, both sent to the safe side)."""
    m = check_integer("times", times, minimum=1)
    plan = _plan(pld, m, check_nonnegative("tail_mass", tail_mass))
    if plan.q is None:
        return _empty(plan)
    spectrum = rfft_power2(plan.q, plan.size, np.longdouble)
    return _finish(plan, spectrum, _forward_error(plan.size, *_norms(plan.q)))


def power_self_compose_pair(
    first: DiscretePLD, second: DiscretePLD, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS
) -> tuple[tuple[DiscretePLD, PowerReport], tuple[DiscretePLD, PowerReport]]:
    """:func:`power_self_compose` of two PLDs at once, their forward transforms packed into one
    complex transform of q₁ + i·q₂ on a common length (:func:`verifier.pld.radix2.rfft_pair_power2`:
    half the forward work). Each spectrum's error bound is that of the packed transform, for
    ‖q₁ + i·q₂‖₂, plus the split's rounding; everything after the forward transform is per PLD."""
    m = check_integer("times", times, minimum=1)
    tail = check_nonnegative("tail_mass", tail_mass)
    plans = [_plan(first, m, tail), _plan(second, m, tail)]
    if plans[0].q is None or plans[1].q is None or min(plans[0].q.size, plans[1].q.size) == 1:
        # nothing to share: an empty side, or a point mass (its power is one number, exact up to the
        # powering's rounding; packed with the other side it would inherit that side's FFT length)
        return power_self_compose(first, m, tail_mass=tail), power_self_compose(second, m, tail_mass=tail)
    size = max(plans[0].size, plans[1].size)
    plans = [plan if plan.size == size else _widened(plan, size) for plan in plans]
    spectra = rfft_pair_power2(plans[0].q, plans[1].q, size, np.longdouble)
    norms = [_norms(plan.q) for plan in plans]
    packed_one = up(norms[0][0] + norms[1][0])  # Σ|q1 + i·q2| <= ‖q1‖₁ + ‖q2‖₁
    packed_two = math.hypot(norms[0][1], norms[1][1]) * (1 + 4 * _U)
    errors = [
        _forward_error(size, packed_one, packed_two, _spectrum_norm_up(spectrum, np.arange(spectrum.size), size))
        for spectrum in spectra
    ]
    results = _finish_pair(plans, spectra, errors)
    return results[0], results[1]


def _pow_up(base: npt.NDArray[np.float64], times: int) -> npt.NDArray[np.float64]:
    """Elementwise UPPER bounds on base**times (base >= 0 finite doubles, times >= 0).

    Binary powering on (mantissa, exponent) pairs: ``np.frexp`` splits exactly, so mantissas stay in
    [1/4, 1) (no overflow, no underflow) and every product rounds once with relative error <= u. A
    squaring doubles the relative error already carried, so the computed power is b^n·Π(1 + δ_i)^{c_i}
    with Σc_i <= n − 1 (as in Higham Lemma 3.1 for a product of n factors): the true power is <= the
    computed one times (1 − u)^{-(n−1)} <= 1 + 2nu (n·u <= 2^-20 here; rounded up by one more ulp).
    The final scaling ``np.ldexp`` is exact unless the result is subnormal (error <= s/2),
    so adding s = 2^-1074 (exact there) keeps it above."""
    mant, expo = np.frexp(base)
    expo = expo.astype(np.int64)
    if times >= 2**32:
        raise NotApplicable(f"{times} compositions: the power's round-off bound holds below 2**32")
    res_m = np.ones_like(mant)
    res_e = np.zeros_like(expo)
    n = times
    while n:
        if n & 1:
            res_m, shift = np.frexp(res_m * mant)
            res_e += expo + shift
        n >>= 1
        if n:
            mant, shift = np.frexp(mant * mant)
            expo = 2 * expo + shift
    res_m = np.nextafter(res_m * (1.0 + 2.0 * times * _U), np.inf)
    with np.errstate(under="ignore", over="raise"):
        return np.ldexp(res_m, np.clip(res_e, -2000, 2000)) + _SUB


def _monotone_pow_up(radius: npt.NDArray[np.float64], times: int, kept: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """UPPER bounds on radius**times: :func:`_pow_up` on the bins ``kept``, and on every other bin the
    power of their largest radius (x ↦ x^n is increasing on x >= 0), one number instead of a power
    per bin (the bins a decayed characteristic function leaves: most of them)."""
    out = np.empty_like(radius)
    others = np.ones(radius.size, dtype=bool)
    others[kept] = False
    out[kept] = _pow_up(radius[kept], times)
    if others.any():
        out[others] = _pow_up(np.array([float(np.max(radius[others]))]), times)[0]
    return out


def _binwise_power_error(
    spectrum: np.ndarray, mag2: np.ndarray, error: _ForwardError, times: int, size: int, kept: npt.NDArray[np.int64]
) -> float:
    """UPPER bound on the ℓ2 norm over the full (Hermitian) spectrum of Â^m − A^m, bin by bin:

        |Â_k^m − A_k^m| <= m·R_k^{m−1}·e_k,   e_k = uniform + relative·|Â_k| >= |Â_k − A_k|,
        R_k = |Â_k| + e_k >= max(|Â_k|, |A_k|)

    (mean value bound for z ↦ z^m on the segment from A_k to Â_k). Unlike the normwise
    m·R^{m−1}·‖Â − A‖₂ with the global R = ‖p‖₁ + e, the factor R_k^{m−1} vanishes on every bin
    where the characteristic function has decayed, so the charge grows like √m rather than m.
    Everything is rounded up: |Â_k| from the long-double |Â_k|² (relative error γ₂ there, one
    rounding to double, a correctly rounded square root, a 1e-300 floor for underflow), the powers by
    :func:`_monotone_pow_up` (per bin on the powered bins ``kept``, one power of the largest radius
    on the others), products and sums with one ulp per rounding, the final norm by
    :func:`_spectrum_norm_up`."""
    with np.errstate(under="ignore"):
        mag_up = np.sqrt(mag2.astype(np.float64) + 1e-300)
        mag_up = np.nextafter(mag_up * (1.0 + 8.0 * _U), np.inf)
        e_k = np.nextafter(error.uniform + np.nextafter(error.relative * mag_up, np.inf), np.inf)
        e_k = np.nextafter(e_k * (1.0 + 2.0 * _U), np.inf)
        radius = np.nextafter((mag_up + e_k) * (1.0 + 2.0 * _U), np.inf)
        term = _monotone_pow_up(radius, times - 1, kept) * e_k
        term = np.nextafter(term * (times * (1.0 + 4.0 * _U)), np.inf)
    if not np.all(np.isfinite(term)):
        return math.inf
    return _spectrum_norm_up(term, np.arange(spectrum.size), size)


@dataclass(frozen=True)
class _Powered:
    """One side's m-th power spectrum before the inverse transform: ``cast`` (complex128 bins
    0..N/2), ``rest`` (UPPER bound on E1 without the inverse transform's charge: D1 + D2 + D3 + N·s),
    ``p_norm`` (UPPER bound on the ℓ2 norm of the full spectrum of ``cast``) and whether everything
    came out finite."""

    cast: np.ndarray
    rest: float
    p_norm: float
    finite: bool


def _powered(plan: _Plan, spectrum: np.ndarray, error: _ForwardError) -> _Powered:
    """Power the half spectrum (forward error bounds ``error``) and bound the round-off so far
    (module docstring: D1, D2, D3)."""
    m, size = plan.times, plan.size
    # Bins whose computed |Â_k|² <= thr2 have |Â_k|^m <= NEGLIGIBLE_POWER·(1 + tiny) (rigorous bound
    # below, charged as d_skip): they are set to zero instead of being powered.
    thr2 = math.exp(2.0 * math.log(NEGLIGIBLE_POWER) / m) * (1.0 - 1e-6)
    mag2 = spectrum.real * spectrum.real + spectrum.imag * spectrum.imag
    kept = np.flatnonzero(mag2 > thr2)
    e_a = error.l2
    d1_binwise = _binwise_power_error(spectrum, mag2, error, m, size, kept)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        powered = _power(spectrum[kept], m)
        cast = np.zeros(size // 2 + 1, dtype=np.complex128)
        cast[kept] = powered
    w_norm = _spectrum_norm_up(powered, kept, size)
    with with_precision():
        u_ld, u_d = arb(_U_LD), arb(_U)
        root_n = arb(size).sqrt()
        radius = arb(plan.total_up) + e_a
        d1_normwise = arb(2).sqrt() * m * radius ** (m - 1) * e_a  # √2: Hermitian rebuild of bins 0..N/2
        d1 = arb(min(_upper(d1_normwise), d1_binwise))
        nu = arb(2).sqrt() * _gamma(2, u_ld)
        theta = (1 + nu) ** (m - 1) - 1
        # Underflow in long double: each multiplication adds <= 4·smallest_normal absolute, carried
        # by later factors of modulus <= R(1 + ν).
        underflow = _multiplications(m) * 4 * arb(float(_TINY_LD) if float(_TINY_LD) > 0 else _SUB)
        underflow *= max(arb(1), radius * (1 + nu)) ** m
        w_ball = arb(w_norm) + root_n * underflow
        d2 = theta * w_ball / (1 - theta) + root_n * underflow
        # skipped bins: |Â_k|² <= mag2·(1 + γ₃) + smallest normal, with mag2 <= thr2
        skipped = (arb(thr2) * (1 + _gamma(3, u_ld)) + underflow).sqrt() ** m
        d2 += root_n * skipped
        d3 = u_d * arb(w_norm) + root_n * _SUB
        p_norm = _upper((1 + u_d) * arb(w_norm) + root_n * _SUB)
        rest = _upper(d1 + d2 + d3 + size * _SUB)
    finite = math.isfinite(rest) and math.isfinite(p_norm) and bool(np.isfinite(cast[kept]).all())
    return _Powered(cast, rest, p_norm, finite)


def _inverse_charge(size: int, p_norm: float, packed: bool) -> float:
    """ℓ1 charge of the double inverse transform (Higham Thm 24.2, ℓ1 <= √N·ℓ2): c_d·‖P̂‖₂ + f_d/√N
    for one spectrum of norm ``p_norm``; for two packed into one transform
    (:func:`verifier.pld.radix2.irfft_pair_power2`, ``p_norm`` = ‖X̂‖₂ + ‖Ŷ‖₂),
    (c_d(1 + u) + u)·p_norm + f_d/√N for each of them."""
    with with_precision():
        u_d = arb(_U)
        c_d = arb(higham_constant(size, _U, twiddles(size, np.float64).mu))
        factor = c_d * (1 + u_d) + u_d if packed else c_d
        return _upper(factor * arb(p_norm) + arb(underflow_term(size, np.float64)) / arb(size).sqrt())


def _finish(plan: _Plan, spectrum: np.ndarray, error: _ForwardError) -> tuple[DiscretePLD, PowerReport]:
    """Power the half spectrum (forward error bounds ``error``), invert, and move the window and
    round-off charges to the safe side (module docstring)."""
    powered = _powered(plan, spectrum, error)
    if not powered.finite:
        return plan.pld, PowerReport(plan.size, plan.start, plan.tau_lo, plan.tau_hi, math.inf)
    e1 = up(powered.rest + _inverse_charge(plan.size, powered.p_norm, packed=False))
    return _assemble(plan, irfft_power2(powered.cast, plan.size), e1)


def _finish_pair(plans: list[_Plan], spectra, errors) -> list[tuple[DiscretePLD, PowerReport]]:
    """:func:`_finish` of two sides of one transform length, their inverse transforms packed into one
    (:func:`verifier.pld.radix2.irfft_pair_power2`); a side whose power is not finite is reported
    with E1 = ∞ (and the other inverted alone)."""
    powered = [_powered(plan, spectrum, error) for plan, spectrum, error in zip(plans, spectra, errors)]
    if not (powered[0].finite and powered[1].finite):
        out = []
        for plan, side in zip(plans, powered):
            if not side.finite:
                out.append((plan.pld, PowerReport(plan.size, plan.start, plan.tau_lo, plan.tau_hi, math.inf)))
            else:
                e1 = up(side.rest + _inverse_charge(plan.size, side.p_norm, packed=False))
                out.append(_assemble(plan, irfft_power2(side.cast, plan.size), e1))
        return out
    size = plans[0].size
    charge = _inverse_charge(size, up(powered[0].p_norm + powered[1].p_norm), packed=True)
    zs = irfft_pair_power2(powered[0].cast, powered[1].cast, size)
    return [_assemble(plan, z, up(side.rest + charge)) for plan, z, side in zip(plans, zs, powered)]


def _assemble(plan: _Plan, z: npt.NDArray[np.float64], e1: float) -> tuple[DiscretePLD, PowerReport]:
    """The PLD from the inverse transform ``z`` of the window: clipped at 0, unrolled, and the window
    (τ) and round-off (E1) charges moved to the safe side (module docstring)."""
    pld, m, size, start, q = plan.pld, plan.times, plan.size, plan.start, plan.q
    dominating = pld.dominance is Dominance.DOMINATING
    report = PowerReport(size, start, plan.tau_lo, plan.tau_hi, e1)
    probs = np.maximum(np.roll(z, -start) if start else z, 0.0)
    support = m * (q.size - 1) + 1
    if size > support:
        probs = probs[:support]  # beyond the support the exact window is zero
    offset = plan.offset + start
    if dominating:
        inf_mass = up(up(plan.inf_mass + plan.tau_hi) + e1)
        dropped = 0.0
    else:
        inf_mass = plan.inf_mass
        removed = up(plan.tau_lo + e1)
        probs = _remove_from_top(probs, removed)
        dropped = up(plan.carried_drop + removed)
    probs, offset, moved_up, moved_off = _truncate(probs, offset, plan.tail, dominating)
    if dominating:
        inf_mass = up(inf_mass + moved_off)
    else:
        dropped = up(dropped + moved_off)
    budget = up(plan.carried_budget + up(up(e1 + up(plan.tau_lo + plan.tau_hi)) + up(moved_up + moved_off)))
    out = DiscretePLD(pld.step, offset, probs, inf_mass, dropped, pld.dominance, pld.direction, budget)
    return out, report


def _remove_from_top(probs: npt.NDArray[np.float64], mass: float) -> npt.NDArray[np.float64]:
    """``probs`` with at least ``mass`` taken off its highest entries, so that every survival sum
    S(x) = Σ_{i>=x} p_i drops by at least min(mass, S(x)) and no entry grows.

    k is the highest index whose suffix sum is certainly >= mass (cumulative sums are within
    (n + 2)u relative, Higham Lemma 3.1); entries above k are zeroed and p_k loses what the suffix
    above it may have lacked (rounded up), clipped at 0.
    """
    if mass <= 0.0:
        return probs
    out = probs.copy()
    suffix = np.cumsum(out[::-1])[::-1]
    suffix_lo = suffix * (1.0 - (out.size + 2) * _U)
    suffix_lo = np.nextafter(suffix_lo, -np.inf)
    enough = np.flatnonzero(suffix_lo >= mass)
    if enough.size == 0:
        return np.zeros_like(out)
    k = int(enough[-1])
    above_lo = float(suffix_lo[k + 1]) if k + 1 < out.size else 0.0
    missing = up(mass - max(above_lo, 0.0))
    out[k + 1 :] = 0.0
    out[k] = max(0.0, math.nextafter(out[k] - missing, -math.inf))
    return out


def _binary_self_compose(pld: DiscretePLD, times: int, tail_mass: float) -> DiscretePLD:
    """Binary exponentiation of :func:`compose`: ⌊log2 m⌋ squarings and at most as many products,
    each a rigorous one-sided convolution."""
    return binary_power(pld, times, lambda x, y: compose(x, x if y is None else y, tail_mass=tail_mass))


def self_compose(pld: DiscretePLD, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS) -> DiscretePLD:
    """PLD of the ``times``-fold composition of ``pld`` with itself (Steinke 2022, Thm 9), on the
    same side as ``pld`` (DOMINATING stays stochastically larger, DOMINATED smaller).

    One long-double FFT power (:func:`power_self_compose`: Chernoff window for the circular
    wrap-around, Higham Thm 24.2 / Lemma 3.5 round-off of verifier's own radix-2 FFTs), with at most ``tail_mass`` cut off each end of the grid by the
    window and again by the final trim. When the certified round-off E1 exceeds
    :data:`POWER_ERROR_LIMIT`, binary exponentiation of the rigorous :func:`compose` is used.
    ``times = 1`` returns ``pld`` itself.
    """
    m = check_integer("times", times, minimum=1)
    tail = check_nonnegative("tail_mass", tail_mass)
    if not isinstance(pld, DiscretePLD):
        raise InvalidArgument("pld", type(pld).__name__, "must be a DiscretePLD")
    if m == 1:
        return pld
    out, report = power_self_compose(pld, m, tail_mass=tail)
    if report.e1 <= POWER_ERROR_LIMIT:
        return out
    return _binary_self_compose(pld, m, tail)


def _route(times: int, report: PowerReport) -> str:
    """How a ``times``-fold self-composition was computed, for the bound's note."""
    if report.e1 <= POWER_ERROR_LIMIT:
        return f"{times}-fold by the FFT power (N = {report.size}, round-off E1 <= {report.e1:.2g})"
    return f"{times}-fold by binary powering (power route's E1 {report.e1:.2g} > {POWER_ERROR_LIMIT:g})"


def self_compose_pair_routed(
    first: DiscretePLD, second: DiscretePLD, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS
) -> tuple[tuple[DiscretePLD, DiscretePLD], tuple[str, str]]:
    """:func:`self_compose_pair` and, per side, which route computed it (the FFT power with its
    length and certified round-off, or the binary fallback and why): ``((first', second'), routes)``."""
    m = check_integer("times", times, minimum=1)
    tail = check_nonnegative("tail_mass", tail_mass)
    for pld in (first, second):
        if not isinstance(pld, DiscretePLD):
            raise InvalidArgument("pld", type(pld).__name__, "must be a DiscretePLD")
    if first.step != second.step:
        raise InvalidArgument("second", f"step {second.step}", f"must share the first PLD's grid step {first.step}")
    if m == 1:
        return (first, second), ("1-fold (no composition)", "1-fold (no composition)")
    results = power_self_compose_pair(first, second, m, tail_mass=tail)
    out = [
        got if report.e1 <= POWER_ERROR_LIMIT else _binary_self_compose(pld, m, tail)
        for pld, (got, report) in zip((first, second), results)
    ]
    routes = [_route(m, report) for _, report in results]
    return (out[0], out[1]), (routes[0], routes[1])


def self_compose_pair(
    first: DiscretePLD, second: DiscretePLD, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS
) -> tuple[DiscretePLD, DiscretePLD]:
    """:func:`self_compose` of two PLDs of one grid step (e.g. the DOMINATING and DOMINATED sides of a
    bracket), sharing one packed forward transform (:func:`power_self_compose_pair`); each falls back
    to binary exponentiation on its own when its E1 exceeds :data:`POWER_ERROR_LIMIT`."""
    return self_compose_pair_routed(first, second, times, tail_mass=tail_mass)[0]
