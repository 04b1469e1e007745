# cython: language_level=3
"""Monte Carlo kernels for the privacy loss of random allocation and the hockey-stick statistic.

The random-allocation pair (Feldman & Shenfeld, Thm 3.1 / Lemma F.1) compares
P̄_t = (1/t) Σ_i Q^{i−1}×P×Q^{t−i} with Q^t. Its privacy loss is a log-sum-exp over t coordinates:

    REMOVE: L = ln((1/t) Σ_i e^{ℓ(Y_i)}),  Y_1 ~ P, Y_2..Y_t ~ Q   (law of ln(P̄/Q^t) under P̄)
    ADD:    L = −ln((1/t) Σ_i e^{ℓ(Y_i)}), Y_1..Y_t ~ Q            (law of ln(Q^t/P̄) under Q^t)

(the index of the P-coordinate is exchangeable, so it is fixed to the first). For the Gaussian
pair P = N(Δ, σ²), Q = N(0, σ²) with a = Δ/σ, ℓ(Y) = a·Z − a²/2 under Q and a·Z + a²/2 under P,
Z ~ N(0, 1) (Steinke 2022, Prop 3).

Random numbers: xoshiro256** (Blackman & Vigna 2021) seeded by the caller with four 64-bit words
(from numpy's SeedSequence), standard normals by the 128-layer ziggurat (Marsaglia & Tsang 2000, in
Doornik's 2005 form, which fixes the correlation of the original's layer and abscissa bits). The
state array is advanced in place, so a stream split over calls continues where it stopped (results
depend on the seed and on the call sizes).

Called through :mod:`verifier.montecarlo`, which validates and allocates; these kernels never
allocate results, touch Python objects or read global state, and report failure by return code.
Slow twin: :mod:`verifier.reference.montecarlo`.
"""

from libc.math cimport exp, expm1, fabs, log, sqrt, INFINITY
from libc.stdint cimport uint64_t


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _next(uint64_t* s) noexcept nogil:
    """xoshiro256** step (reference C code by Blackman & Vigna, public domain)."""
    cdef uint64_t result = _rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


cdef enum:
    _LAYERS = 128  # ziggurat layers (Marsaglia & Tsang 2000; Doornik 2005, "ZIGNOR")

cdef double _ZIG_R = 3.442619855899  # start of the tail for 128 layers
cdef double _ZIG_V = 9.91256303526217e-3  # area of each layer


cdef struct _Normals:
    double x[_LAYERS + 1]  # layer edges, x[0] = V/f(R) (base strip), x[1] = R, x[_LAYERS] = 0
    double ratio[_LAYERS]  # x[i+1]/x[i]: the fast-accept threshold of layer i


cdef void _ziggurat_tables(_Normals* z) noexcept nogil:
    """Doornik (2005), zigNorInit: layer edges of the 128-layer ziggurat of the half-normal density
    f(x) = e^{−x²/2} (computed per call: a few hundred flops, and no global state)."""
    cdef int i
    cdef double f = exp(-0.5 * _ZIG_R * _ZIG_R)
    z.x[0] = _ZIG_V / f
    z.x[1] = _ZIG_R
    z.x[_LAYERS] = 0.0
    for i in range(2, _LAYERS):
        z.x[i] = sqrt(-2.0 * log(_ZIG_V / z.x[i - 1] + f))
        f = exp(-0.5 * z.x[i] * z.x[i])
    for i in range(_LAYERS):
        z.ratio[i] = z.x[i + 1] / z.x[i]


cdef inline double _open_uniform(uint64_t* s) noexcept nogil:
    """Uniform on (0, 1) with 53 random bits."""
    return (<double> (_next(s) >> 11) + 0.5) * 1.1102230246251565e-16


cdef double _normal_tail(uint64_t* s, int negative) noexcept nogil:
    """Marsaglia (1964) tail beyond R (Doornik 2005, DRanNormalTail)."""
    cdef double x, y
    while True:
        x = log(_open_uniform(s)) / _ZIG_R
        y = log(_open_uniform(s))
        if -2.0 * y >= x * x:
            break
    return x - _ZIG_R if negative else _ZIG_R - x


cdef inline double _normal(uint64_t* s, _Normals* z) noexcept nogil:
    """One standard normal by the ziggurat (Doornik 2005, DRanNormalZig). One 64-bit draw gives the
    layer (low 7 bits) and the signed abscissa (high 53 bits); ~99% of draws end at the first test."""
    cdef uint64_t r
    cdef unsigned int i
    cdef double u, x, f0, f1
    while True:
        r = _next(s)
        u = <double> (r >> 11) * 2.220446049250313e-16 - 1.0  # [−1, 1)
        i = <unsigned int> (r & 0x7F)
        if fabs(u) < z.ratio[i]:
            return u * z.x[i]
        if i == 0:
            return _normal_tail(s, u < 0.0)
        x = u * z.x[i]
        f0 = exp(-0.5 * (z.x[i] * z.x[i] - x * x))
        f1 = exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x))
        if f1 + _open_uniform(s) * (f0 - f1) < 1.0:
            return x


cdef int _check_state(uint64_t[::1] state) noexcept nogil:
    if state.shape[0] != 4:
        return 1
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        return 2
    return 0


def standard_normals(double[::1] out, uint64_t[::1] state) -> int:
    """Fill ``out`` with standard normals from the xoshiro256** ``state`` (4 words, not all zero,
    advanced in place). Returns 0, or 1/2 on a bad state."""
    cdef Py_ssize_t n = out.shape[0], j
    cdef _Normals zig
    cdef int status = _check_state(state)
    if status != 0:
        return status
    with nogil:
        _ziggurat_tables(&zig)
        for j in range(n):
            out[j] = _normal(&state[0], &zig)
    return 0


def gaussian_allocation_losses(
    double[::1] out,
    Py_ssize_t t,
    double a,
    double first_shift,
    double offset,
    double sign,
    uint64_t[::1] state,
) -> int:
    """For each sample j: draw Z_1..Z_t ~ N(0, 1) (in this order, from ``state``) and set

        out[j] = sign · (ln Σ_i e^{a·Z_i + first_shift·[i = 1]} + offset)

    with a one-pass log-sum-exp (running maximum). The caller picks REMOVE (first_shift = a²,
    offset = −a²/2 − ln t, sign = +1) or ADD (first_shift = 0, offset = −a²/2 − ln t, sign = −1).
    Returns 0, 1/2 on a bad state, 3 if t < 1.
    """
    cdef Py_ssize_t n = out.shape[0], j, i
    cdef _Normals zig
    cdef double x, m, total
    cdef int status = _check_state(state)
    if status != 0:
        return status
    if t < 1:
        return 3
    with nogil:
        _ziggurat_tables(&zig)
        for j in range(n):
            m = a * _normal(&state[0], &zig) + first_shift
            total = 1.0
            for i in range(1, t):
                x = a * _normal(&state[0], &zig)
                if x <= m:
                    total += exp(x - m)
                else:
                    total = total * exp(m - x) + 1.0
                    m = x
            out[j] = sign * (m + log(total) + offset)
    return 0


def mean_ratio_losses(const double[:, ::1] coordinate_losses, double[::1] out) -> int:
    """out[j] = ln((1/t) Σ_i e^{ℓ_ji}) for each row j of the t-column matrix of coordinate privacy
    losses (±∞ allowed: a row with a +∞ entry gives +∞, a row of −∞ gives −∞). Two passes per row
    (maximum, then the shifted sum). Returns 0, or 1 on a shape mismatch / empty rows."""
    cdef Py_ssize_t n = coordinate_losses.shape[0], t = coordinate_losses.shape[1], j, i
    cdef double m, total, log_t
    if out.shape[0] != n or t < 1:
        return 1
    log_t = log(<double> t)
    with nogil:
        for j in range(n):
            m = coordinate_losses[j, 0]
            for i in range(1, t):
                if coordinate_losses[j, i] > m:
                    m = coordinate_losses[j, i]
            if m == INFINITY or m == -INFINITY:
                out[j] = m
                continue
            total = 0.0
            for i in range(t):
                total += exp(coordinate_losses[j, i] - m)
            out[j] = m + log(total) - log_t
    return 0


cdef inline void _neumaier_add(double* total, double* compensation, double x) noexcept nogil:
    """total += x with Neumaier's compensation term (Higham, Accuracy and Stability, §4.3)."""
    cdef double t = total[0] + x
    if total[0] >= x:
        compensation[0] += (total[0] - t) + x
    else:
        compensation[0] += (x - t) + total[0]
    total[0] = t


def hockey_stick_moments(
    const double[::1] losses,
    const double[::1] epsilons,
    double[::1] out_sum,
    double[::1] out_sum_squares,
) -> int:
    """For each ε: Neumaier-compensated Σ_j f_j and Σ_j f_j² with f_j = (1 − e^{ε − L_j})_+ ∈ [0, 1]
    (the hockey-stick statistic of Feldman & Shenfeld, Def 2.1, third form; L = +∞ gives f = 1).
    Returns 0, or 1 on a length mismatch."""
    cdef Py_ssize_t n = losses.shape[0], m = epsilons.shape[0], j, k
    cdef double eps, f, s, c, s2, c2
    if out_sum.shape[0] != m or out_sum_squares.shape[0] != m:
        return 1
    with nogil:
        for k in range(m):
            eps = epsilons[k]
            s = 0.0
            c = 0.0
            s2 = 0.0
            c2 = 0.0
            for j in range(n):
                if losses[j] <= eps:
                    continue
                f = -expm1(eps - losses[j])
                _neumaier_add(&s, &c, f)
                _neumaier_add(&s2, &c2, f * f)
            out_sum[k] = s + c
            out_sum_squares[k] = s2 + c2
    return 0
