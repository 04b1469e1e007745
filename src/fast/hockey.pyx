# cython: language_level=3
"""Hockey-stick divergence of a discrete privacy-loss distribution, with a rigorous error bound.

    δ(ε) = Σ_i p_i (1 − e^{ε − ℓ_i})_+ + p_∞            (Steinke 2022, Prop 7, form (7.2))

Called through :mod:`verifier.hockey`, which validates and allocates; this kernel never allocates
results, touches Python objects or reads global state.

Error analysis (the inputs ℓ_i, p_i, ε are taken as exact doubles):
- each term t_i = p_i · (−expm1(ε − ℓ_i)) is computed with relative error at most 4u to first order
  (subtraction u, whose effect on 1 − e^x is at most u because |x|e^x <= 1 − e^x for x < 0; expm1
  within 2u, a generous allowance for libm's documented 1-ulp accuracy; the product u); we charge
  TERM_REL = 8u;
- the terms are summed with Neumaier's compensated summation, whose error is at most
  (2u + 4n²u²) Σ|t̂_i| (Higham, Accuracy and Stability of Numerical Algorithms, §4.3; n² replaces
  the O(n) of the second-order term), and all terms are >= 0 so Σ|t̂_i| = Σ t̂_i;
- a product p_i · (−expm1) that lands below the normal range is off by up to 2^-1075 absolute (no
  relative bound there; additions are exact in that range), so n·2^-1074 is added to the bound.
The kernel returns the compensated sum and the bound on its total error.
"""

from libc.math cimport expm1

from compensated cimport neumaier_add

cdef double U = 1.1102230246251565e-16  # unit roundoff 2^-53
cdef double TERM_REL = 8.0 * 1.1102230246251565e-16
cdef double TINY = 4.9406564584124654e-324  # 2^-1074, twice the absolute error of an underflowing product


cdef Py_ssize_t _first_above(const double[::1] losses, double eps) noexcept nogil:
    """Smallest index i with losses[i] > eps (losses sorted ascending); n if none."""
    cdef Py_ssize_t lo = 0, hi = losses.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if losses[mid] > eps:
            hi = mid
        else:
            lo = mid + 1
    return lo


def hockey_stick_sum(
    const double[::1] losses,
    const double[::1] probs,
    const double[::1] epsilons,
    double[::1] out_sum,
    double[::1] out_error,
) -> int:
    """For each ε: out_sum = compensated Σ_{ℓ_i > ε} p_i (1 − e^{ε−ℓ_i}), out_error = bound on
    |out_sum − exact sum|. ``losses`` sorted ascending and finite. Returns 0, or 1 on a length mismatch."""
    cdef Py_ssize_t n = losses.shape[0], m = epsilons.shape[0], i, j, start
    cdef double eps, s, c, n_d = <double> losses.shape[0], rel
    if probs.shape[0] != n or out_sum.shape[0] != m or out_error.shape[0] != m:
        return 1
    rel = (TERM_REL + 2.0 * U + 4.0 * n_d * n_d * U * U) * (1.0 + 16.0 * U)
    with nogil:
        for j in range(m):
            eps = epsilons[j]
            start = _first_above(losses, eps)
            s = 0.0
            c = 0.0
            for i in range(start, n):
                neumaier_add(&s, &c, probs[i] * (-expm1(eps - losses[i])))
            s = s + c
            out_sum[j] = s
            # Σ t̂ <= s / (1 − (2u + 4n²u²)); the factor 1.000001 covers that and the rounding of
            # this product itself.
            out_error[j] = rel * s * 1.000001 + <double> (n - start) * TINY
    return 0
