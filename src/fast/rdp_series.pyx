# cython: language_level=3
"""Truncated power series with positive coefficients, in the log domain, with a rigorous error bound.

The Rényi divergences of Poisson subsampling and of random allocation at integer orders are
coefficients of products and powers of exponential generating functions with positive
coefficients (Steinke 2022, Thm 34; Feldman & Shenfeld, Thm 4.8 / Lemma E.1):

    random allocation:  e^{(α−1)R_α} = α! [x^α] (Σ_j m_j x^j / (j! t^j))^t,
    Poisson:            e^{(α−1)R_α} = α! [x^α] (Σ_i (1−λ)^i x^i/i!) · (Σ_k λ^k m_k x^k/k!).

The coefficients span hundreds of orders of magnitude, so every series is stored as the logs of
its coefficients (−∞ for a zero coefficient) together with a bound on the absolute error of each
log. Every sum below has only non-negative summands, so it is evaluated as a log-sum-exp without
cancellation:

- ``log_series_product``: c_m = Σ_{i+j=m} a_i b_j (truncated to the output length);
- ``log_series_power``: b = a^t for a_0 = 1. For t >= n − 1 (n the output length) by J.C.P. Miller's
  recurrence b_m = (1/m) Σ_{j=1}^{m} (((t+1) j − m)/t) (t a_j) b_{m−j}, whose summands are all
  positive when m <= t; for smaller integer t by binary exponentiation with ``log_series_product``
  (the recurrence would cancel there). The input is ln(t·a_j) for j >= 1: for the allocation series
  t·a_j = m_j/(j! t^{j−1}) is O(1) for small j, and so is ((t+1)j − m)/t, so no log of size ln t
  enters the sums and the absolute error stays at a few ulps even for t = 10⁹.

Error analysis (inputs are exact doubles; u = 2^-53; libm's exp and log are charged 2u relative,
twice their documented 1-ulp accuracy):
- a term T = x + y (+ z) computed in floating point carries the input errors plus u|T̂| per
  addition; the log of q = fl(c/t) (c an exact integer) carries u (the rounding of q) + 2u|log q|;
  the shift ln(t·a_j) − ln t of the binary-exponentiation branch carries 2u|ln t| + u|result|;
- log-sum-exp L = M + log Σ_k exp(T̂_k − M) with M the largest term: the subtraction adds
  u|T̂_k − M| (inside exp this is a relative factor e^{u|d|}), exp 2u, the recursive sum of n
  positive terms at most n·u·1.01 relative, the log 2u|log S| and the final addition u|L|.
Each log carries E = (the weight-averaged term error, see ``_lse``) + those terms, multiplied by
(1 + 1e-6) to cover the rounding of the error arithmetic itself. The caller turns (L, E) into directed bounds.

Kernels never allocate: the caller passes every output and a scratch buffer, and failure is a
non-zero return code.
"""

from libc.math cimport exp, log, fabs, INFINITY

cdef double U = 1.1102230246251565e-16  # unit roundoff 2^-53
cdef double SAFETY = 1.000001


cdef inline void _lse(const double* terms, const double* term_err, Py_ssize_t count,
                      double* value, double* error) noexcept nogil:
    """log Σ_k exp(terms[k]) and its error bound (terms may be −∞, which contribute 0).

    With per-term log errors η_k and weights w_k = e^{T_k}/Σ e^{T_j}, the log of the sum moves by at
    most ln Σ_k w_k e^{η_k} <= Σ_k w_k η_k e^{η_k}; the weighted mean is used when every η_k is below
    1e-6 (then e^{η_k} <= 1 + 1.1e-6 and the floating-point weights' own error is covered by the
    factor 1.01), the maximum otherwise."""
    cdef Py_ssize_t k, used = 0
    cdef double top = -INFINITY, s = 0.0, d, worst = 0.0, e, x, weighted = 0.0, log_s, total, spread
    for k in range(count):
        if terms[k] > top:
            top = terms[k]
    if top == -INFINITY:
        value[0] = -INFINITY
        error[0] = 0.0
        return
    for k in range(count):
        if terms[k] == -INFINITY:
            continue
        used += 1
        d = terms[k] - top
        x = exp(d)
        s += x
        e = term_err[k] + U * fabs(d) + 2.0 * U
        weighted += x * e
        if e > worst:
            worst = e
    log_s = log(s)
    total = top + log_s
    value[0] = total
    spread = worst if worst > 1e-6 else 1.01 * (1.0 + 1.1e-6) * weighted / s
    error[0] = (spread + 1.01 * (<double> used) * U + 2.0 * U * fabs(log_s) + U * fabs(total)) * SAFETY


cdef int _product(const double* la, const double* ea, Py_ssize_t na,
                  const double* lb, const double* eb, Py_ssize_t nb,
                  double* out, double* out_err, Py_ssize_t n, double* terms, double* term_err) noexcept nogil:
    """out[m] = log Σ_{i+j=m} a_i b_j for m < n; terms/term_err are scratch of length >= n."""
    cdef Py_ssize_t m, i, j, count
    cdef double t
    for m in range(n):
        count = 0
        for i in range(m + 1):
            j = m - i
            if i >= na or j >= nb:
                continue
            if la[i] == -INFINITY or lb[j] == -INFINITY:
                continue
            t = la[i] + lb[j]
            terms[count] = t
            term_err[count] = ea[i] + eb[j] + U * fabs(t)
            count += 1
        _lse(terms, term_err, count, &out[m], &out_err[m])
    return 0


def log_series_product(
    const double[::1] log_a,
    const double[::1] err_a,
    const double[::1] log_b,
    const double[::1] err_b,
    double[::1] out,
    double[::1] out_err,
    double[::1] scratch,
) -> int:
    """Logs (and error bounds) of the first len(out) coefficients of A(x)·B(x), from the logs of
    the coefficients of A and B (−∞ for zero) and their error bounds. ``scratch`` has length
    >= 2·len(out). Returns 0, or 1 on a length mismatch."""
    cdef Py_ssize_t n = out.shape[0]
    if (err_a.shape[0] != log_a.shape[0] or err_b.shape[0] != log_b.shape[0]
            or out_err.shape[0] != n or scratch.shape[0] < 2 * n):
        return 1
    if n == 0:
        return 0
    with nogil:
        _product(&log_a[0], &err_a[0], log_a.shape[0], &log_b[0], &err_b[0], log_b.shape[0],
                 &out[0], &out_err[0], n, &scratch[0], &scratch[n])
    return 0


cdef void _miller(const double* lta, Py_ssize_t na, double t, double* out, double* out_err,
                  Py_ssize_t n, double* terms, double* term_err) noexcept nogil:
    """b = a^t by Miller's recurrence from lta[j] = ln(t·a_j) (j >= 1); a_0 = 1 and n − 1 <= t."""
    cdef Py_ssize_t m, j, count
    cdef double c, lc, s1, s2, lse, lse_err, lm
    out[0] = 0.0
    out_err[0] = 0.0
    for m in range(1, n):
        count = 0
        for j in range(1, m + 1):
            if j >= na or lta[j] == -INFINITY or out[m - j] == -INFINITY:
                continue
            c = (t + 1.0) * (<double> j) - (<double> m)  # exact: an integer below 2^53, > 0 as m <= t
            lc = log(c / t)
            s1 = lc + lta[j]
            s2 = s1 + out[m - j]
            terms[count] = s2
            term_err[count] = out_err[m - j] + 1.01 * U + 2.0 * U * fabs(lc) + U * fabs(s1) + U * fabs(s2)
            count += 1
        _lse(terms, term_err, count, &lse, &lse_err)
        if lse == -INFINITY:
            out[m] = -INFINITY
            out_err[m] = 0.0
            continue
        lm = log(<double> m)
        out[m] = lse - lm
        out_err[m] = (lse_err + 2.0 * U * lm + U * fabs(out[m])) * SAFETY


def log_series_power(
    const double[::1] log_ta,
    double t,
    double[::1] out,
    double[::1] out_err,
    double[::1] scratch,
) -> int:
    """Logs (and error bounds) of the first n = len(out) coefficients of A(x)^t, where A's constant
    coefficient is 1 (log_ta[0] must be 0) and log_ta[j] = ln(t·a_j) for j >= 1 (exact inputs, −∞
    for a zero coefficient). t >= 1 is an integer-valued double below 2^53 / n. ``scratch`` has
    length >= 8·n. Returns 0; 1 on a length mismatch; 2 if log_ta[0] != 0; 3 if t is invalid."""
    cdef Py_ssize_t n = out.shape[0], na = log_ta.shape[0], i
    cdef double lt, shifted
    cdef long long k
    cdef double* base
    cdef double* base_err
    cdef double* acc
    cdef double* acc_err
    cdef double* tmp
    cdef double* tmp_err
    cdef double* terms
    cdef double* term_err
    cdef double* swap
    if out_err.shape[0] != n or scratch.shape[0] < 8 * n or na == 0:
        return 1
    if n == 0:
        return 0
    if log_ta[0] != 0.0:
        return 2
    if not (t >= 1.0) or t != <double> (<long long> t) or t * (<double> n) > 9.0e15:
        return 3
    terms = &scratch[0]
    term_err = &scratch[n]
    if t >= <double> (n - 1):
        with nogil:
            _miller(&log_ta[0], na, t, &out[0], &out_err[0], n, terms, term_err)
        return 0
    base = &scratch[2 * n]
    base_err = &scratch[3 * n]
    acc = &scratch[4 * n]
    acc_err = &scratch[5 * n]
    tmp = &scratch[6 * n]
    tmp_err = &scratch[7 * n]
    with nogil:
        lt = log(t)
        for i in range(n):
            if i == 0 or i >= na or log_ta[i] == -INFINITY:
                base[i] = 0.0 if i == 0 else -INFINITY
                base_err[i] = 0.0
            else:
                shifted = log_ta[i] - lt
                base[i] = shifted
                base_err[i] = (2.0 * U * fabs(lt) + U * fabs(shifted)) * SAFETY
            acc[i] = 0.0 if i == 0 else -INFINITY
            acc_err[i] = 0.0
        k = <long long> t
        while k > 0:
            if k & 1:
                _product(acc, acc_err, n, base, base_err, n, tmp, tmp_err, n, terms, term_err)
                swap = acc; acc = tmp; tmp = swap
                swap = acc_err; acc_err = tmp_err; tmp_err = swap
            k >>= 1
            if k > 0:
                _product(base, base_err, n, base, base_err, n, tmp, tmp_err, n, terms, term_err)
                swap = base; base = tmp; tmp = swap
                swap = base_err; base_err = tmp_err; tmp_err = swap
        for i in range(n):
            out[i] = acc[i]
            out_err[i] = acc_err[i]
    return 0
