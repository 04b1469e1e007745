# cython: language_level=3
"""Algorithm 1 of Schuchardt & Kalinin ("Sampling-free privacy accounting for matrix mechanisms
under random allocation"), the remove-direction Rényi dynamic program, in log space.

For a symmetric non-negative b×b matrix H (already divided by σ²) that is p-cyclically banded, it
computes for every total m = 0..amax

    log S_m = log Σ_{r ∈ ℕ^b, Σ r_j = m} Π_j (1/r_j!) · exp( Σ_j H_jj r_j(r_j−1)/2 + Σ_{j<j'} H_jj' r_j r_j' )

(the multinomial form, eq. 13, of notes §2.3) by fixing the prefix l = (r_0..r_{p−2}), walking the
positions p−1..b−1 with the state (partial count m, suffix of the last p−1 counts), and closing
the cycle by the glue term (eq. 17). The kernel computes all totals m <= amax in one pass, so one
run serves every integer order up to amax.

Corrections (notes §6): line 28 reads LSE(log w_old, log w + Δ) (the source drops Δ on an empty
slot); the glue double-counts interactions when b <= 3p − 4, so the result is the exact sum only
for b >= 3p − 3 and an UPPER bound (non-negative terms counted twice) otherwise.

Inputs (validated and allocated by :mod:`verifier.matrix.renyi`):
- ``band[k, d]`` = H[k, k − d] for d = 0..p−1 (0 where k − d < 0): the non-cyclic band;
- ``glue[i, j]`` = H[i, b − 1 − j] for i, j = 0..p−2: the cyclic corner;
- ``lfact[t]`` = log(t!) for t = 0..amax;
- ``out`` (amax + 1): receives log S_m;
- ``info`` (amax + 1): ``info[m]`` receives the largest |log value| met (summand or partial
  log-sum-exp) in a state of partial count m; every value that feeds out[m] has partial count <= m,
  so the caller's rounding allowance for order m uses max(info[0..m]) (one allowance per order,
  not the largest order's for all). Each prefix's totals are summed apart, then added to out once
  per total, so the chain of sums into out[m] is short (the allowance counts its length);
- ``states``, ``scratch``: work arrays of (amax + 1)^p doubles.
Return code: 0 on success, 1 on inconsistent shapes or amax >= 512.
Slow twin: :func:`verifier.reference.matrix.dp_log_sums` (plain Python, same recursion).
"""

from libc.math cimport INFINITY, exp, fabs, log1p

cdef enum:
    MAX_TOTALS = 512  # largest amax + 1 (the per-prefix sums live on the stack)


cdef inline double _lse(double x, double y) noexcept nogil:
    if x == -INFINITY:
        return y
    if y == -INFINITY:
        return x
    if x >= y:
        return x + log1p(exp(y - x))
    return y + log1p(exp(x - y))


cdef inline Py_ssize_t _decode(Py_ssize_t idx, Py_ssize_t stride_top, Py_ssize_t A, Py_ssize_t L, long* suffix) noexcept nogil:
    """Split a state index into its partial count m (returned) and its suffix (written)."""
    cdef Py_ssize_t m = idx // stride_top, rest = idx - m * stride_top, u
    for u in range(L - 1, -1, -1):
        suffix[u] = rest % A
        rest = rest // A
    return m


def matrix_log_sums(
    const double[:, ::1] band,
    const double[:, ::1] glue,
    const double[::1] lfact,
    long amax,
    double[::1] out,
    double[::1] info,
    double[::1] states,
    double[::1] scratch,
) -> int:
    cdef Py_ssize_t b = band.shape[0], p = band.shape[1]
    cdef Py_ssize_t L = p - 1, A = amax + 1
    cdef Py_ssize_t size = 1, i, j, u, k, s, t, m, idx, nidx, stride_top
    cdef long total_l
    cdef double lw, s1, delta, g, v
    cdef long prefix[64]
    cdef long suffix[64]
    cdef double local[MAX_TOTALS]
    if A > MAX_TOTALS or p < 1 or p > 64 or b < p or lfact.shape[0] < A or out.shape[0] < A or info.shape[0] < A:
        return 1
    if L > 0 and (glue.shape[0] < L or glue.shape[1] < L):
        return 1
    for i in range(p):
        size *= A
    if states.shape[0] < size or scratch.shape[0] < size:
        return 1
    stride_top = size // A  # index = m·A^L + Σ_u suffix[u]·A^(L−1−u)
    with nogil:
        for m in range(A):
            out[m] = -INFINITY
            info[m] = 0.0
        for u in range(L):
            prefix[u] = 0
        while True:
            total_l = 0
            for u in range(L):
                total_l += prefix[u]
            if total_l <= amax:
                # weight of the prefix itself (positions 0..p−2 interact among themselves)
                lw = 0.0
                for i in range(L):
                    lw += band[i, 0] * prefix[i] * (prefix[i] - 1) / 2.0 - lfact[prefix[i]]
                    for j in range(i):
                        lw += band[i, i - j] * prefix[i] * prefix[j]
                for idx in range(size):
                    states[idx] = -INFINITY
                idx = total_l * stride_top
                for u in range(L):
                    idx = idx + prefix[u] * (stride_top // _pow(A, u + 1))
                states[idx] = lw
                if fabs(lw) > info[total_l]:
                    info[total_l] = fabs(lw)
                for k in range(L, b):
                    for idx in range(size):
                        scratch[idx] = -INFINITY
                    for idx in range(size):
                        lw = states[idx]
                        if lw == -INFINITY:
                            continue
                        m = _decode(idx, stride_top, A, L, suffix)
                        s1 = 0.0
                        for u in range(L):  # suffix[u] is position k − L + u
                            s1 += band[k, L - u] * suffix[u]
                        # shifted suffix without the new count: (suffix[1..L−1], ·)
                        nidx = 0
                        for u in range(1, L):
                            nidx = nidx * A + suffix[u]
                        for t in range(0, amax - m + 1):
                            delta = band[k, 0] * t * (t - 1) / 2.0 + s1 * t - lfact[t]
                            if L > 0:
                                s = (m + t) * stride_top + nidx * A + t
                            else:
                                s = m + t
                            v = lw + delta
                            if fabs(v) > info[m + t]:
                                info[m + t] = fabs(v)
                            scratch[s] = _lse(scratch[s], v)
                            if fabs(scratch[s]) > info[m + t]:
                                info[m + t] = fabs(scratch[s])
                    for idx in range(size):
                        states[idx] = scratch[idx]
                for m in range(A):
                    local[m] = -INFINITY
                for idx in range(size):
                    lw = states[idx]
                    if lw == -INFINITY:
                        continue
                    m = _decode(idx, stride_top, A, L, suffix)
                    g = 0.0
                    for i in range(L):
                        for j in range(L):  # suffix[L−1−j] is position b − 1 − j
                            g += glue[i, j] * prefix[i] * suffix[L - 1 - j]
                    v = lw + g
                    if fabs(v) > info[m]:
                        info[m] = fabs(v)
                    local[m] = _lse(local[m], v)
                    if fabs(local[m]) > info[m]:
                        info[m] = fabs(local[m])
                # this prefix's sums join the total once per total: the chain into out[m] is the
                # states of one prefix plus the prefixes, not their product
                for m in range(A):
                    if local[m] != -INFINITY:
                        out[m] = _lse(out[m], local[m])
                        if fabs(out[m]) > info[m]:
                            info[m] = fabs(out[m])
            # next prefix (odometer over {0..amax}^L; the sum check above skips the rest)
            u = L - 1
            while u >= 0:
                prefix[u] += 1
                if prefix[u] <= amax:
                    break
                prefix[u] = 0
                u -= 1
            if u < 0:
                break
    return 0


cdef inline Py_ssize_t _pow(Py_ssize_t base, Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t r = 1, i
    for i in range(e):
        r *= base
    return r
