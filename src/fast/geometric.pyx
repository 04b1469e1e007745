# cython: language_level=3
"""Sum of two independent positive variables on geometric grids, re-binned in a safe direction.

Both inputs and the output live on the lattice {e^{uΔ} : u ∈ ℤ}, Δ = 2^-k (loss step Δ): an input
is an offset o and masses p[0..n) at the ratios e^{(o+i)Δ}, plus atoms at ratio 0 and at +∞.
For lattice points u >= v the sum e^{uΔ} + e^{vΔ} rounds UP to the lattice point u + h(v − u) and
DOWN to u + h(v − u) − 1, where h is the non-decreasing step function given by its breakpoints
(:func:`verifier._directed.ratio_sum_breakpoints`). Hence, for a fixed larger index u, every
smaller index v whose m = v − u falls in the same step of h lands in the same output bin: one
window sum (from double-double prefix sums) per step instead of one product per pair. The cost
per u is the number of distinct output bins it reaches, not the length of the other input.

Rounding UP (the output stochastically dominates the true sum): sums above the top bin go to +∞,
sums below the bottom bin go to the bottom bin. Rounding DOWN (the output is dominated): sums
below the bottom bin go to ratio 0, sums above the top bin go to the top bin. Atoms: 0 + y = y
(already on the lattice, so only range clipping applies), anything + ∞ = ∞, 0 + 0 = 0.

Paper: "Efficient computation of the privacy loss distribution for random allocation", Alg. 2
(with the corrections of notes/random-allocation.md §3.8: lost mass goes to the safe end).
Called through :mod:`verifier.pld.geometric`, which validates, allocates (output and scratch) and
chooses the direction; slow twin: :func:`verifier.reference.geometric.convolve_ratios`.
"""

from libc.math cimport exp
from libc.stdlib cimport free, malloc

from compensated cimport neumaier_add


cdef inline void _place(double[::1] out, double* atoms, long long c, double mass, bint round_up) noexcept nogil:
    """Add ``mass`` at output index ``c`` with the range policy of the rounding direction.
    atoms[0] is the mass at ratio 0, atoms[1] the mass at +∞."""
    cdef long long nc = out.shape[0]
    if c >= nc:
        if round_up:
            atoms[1] += mass
        else:
            out[nc - 1] += mass
    elif c < 0:
        if round_up:
            out[0] += mass
        else:
            atoms[0] += mass
    else:
        out[c] += mass


cdef inline void _prefix(const double[::1] p, double[::1] hi, double[::1] lo) noexcept nogil:
    """Double-double prefix sums: hi[i] + lo[i] = Σ_{j<i} p[j] to about u² relative."""
    cdef Py_ssize_t i, n = p.shape[0]
    cdef double s = 0.0, c = 0.0, t
    hi[0] = 0.0
    lo[0] = 0.0
    for i in range(n):
        neumaier_add(&s, &c, p[i])
        # renormalise (s, c) so that hi carries the leading part
        t = s + c
        c = c - (t - s)
        s = t
        hi[i + 1] = s
        lo[i + 1] = c


cdef inline double _window(const double[::1] hi, const double[::1] lo, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Σ p[first..last] (inclusive) from double-double prefix sums, with a TwoSum on the leading parts."""
    cdef double a = hi[last + 1], b = -hi[first], s, bb, err
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s + (err + (lo[last + 1] - lo[first]))


cdef inline Py_ssize_t _first_group(const long long[::1] breaks, long long limit) noexcept nogil:
    """Largest group index g (0-based) whose smallest m (breaks[g−1] + 1, −∞ for g = 0) is <= limit;
    −1 if none."""
    cdef Py_ssize_t lo = 0, hi = breaks.shape[0], mid
    # smallest m of group g is breaks[g-1]+1 (g >= 1), −∞ for g = 0; it increases with g.
    if breaks.shape[0] == 0:
        return -1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if breaks[mid - 1] + 1 <= limit:
            lo = mid
        else:
            hi = mid
    return lo


cdef inline int _group_window(
    const long long[::1] breaks, Py_ssize_t g, long long u, long long ob, Py_ssize_t nb, long long m_cap,
    long long* j_lo, long long* j_hi, long long* m_hi,
) noexcept nogil:
    """Indices j_lo..j_hi of the other input whose m = (ob + j) − u falls in group g (capped at
    m_cap), clipped to [0, nb). Returns −1 when the group lies below index 0 (so do all later
    groups: stop), 0 when it is empty, 1 otherwise; m_hi is the group's capped largest m."""
    cdef long long top = breaks[g]
    if top > m_cap:
        top = m_cap
    m_hi[0] = top
    j_hi[0] = u + top - ob
    if j_hi[0] < 0:
        return -1
    j_lo[0] = 0 if g == 0 else u + breaks[g - 1] + 1 - ob
    if j_lo[0] < 0:
        j_lo[0] = 0
    if j_hi[0] > nb - 1:
        j_hi[0] = nb - 1
    return 1 if j_lo[0] <= j_hi[0] else 0


cdef long long* _previous_nonzero(const double[::1] p, const double[::1] pm) noexcept nogil:
    """prev[j] = the largest j' <= j with p[j'] or pm[j'] non-zero (−1 if none), malloc'ed (the caller
    frees it); NULL if the allocation fails (then no group is skipped)."""
    cdef Py_ssize_t j, n = p.shape[0]
    cdef long long last = -1
    cdef long long* prev = <long long*> malloc((n if n > 0 else 1) * sizeof(long long))
    if prev == NULL:
        return NULL
    for j in range(n):
        if p[j] != 0.0 or pm[j] != 0.0:
            last = j
        prev[j] = last
    return prev


cdef inline Py_ssize_t _next_group(
    const long long[::1] breaks, const long long* prev, Py_ssize_t g, long long j_lo, long long u, long long ob,
) noexcept nogil:
    """The next group to visit after group g, whose window starts at index j_lo of the other input:
    g − 1, or with ``prev`` (:func:`_previous_nonzero`) the group holding the next non-zero index
    below j_lo, skipping the groups whose windows hold only zeros (they add exact zeros); −1 when
    none is left."""
    cdef long long m
    if prev == NULL:
        return g - 1
    if j_lo <= 0 or prev[j_lo - 1] < 0:
        return -1
    # from group g − 1 down to the one holding m of that index (smallest m breaks[g − 1] + 1 <= m)
    m = ob + prev[j_lo - 1] - u
    g -= 1
    while g > 0 and breaks[g - 1] >= m:
        g -= 1
    return g


cdef void _major(
    const double[::1] a, long long oa, const double[::1] b, long long ob,
    const double[::1] bhi, const double[::1] blo,
    const long long[::1] breaks, long long m_cap, bint symmetric, bint round_up,
    long long oc, double[::1] out, double* atoms,
) noexcept nogil:
    """Every pair (i, j) with m = (ob + j) − (oa + i) <= m_cap (m_cap is 0 or −1): the larger term
    is a[i]. For a symmetric self-convolution (a is b) the pairs with m < 0 count twice."""
    cdef Py_ssize_t na = a.shape[0], nb = b.shape[0], i, g
    cdef long long u, m_hi, j_lo, j_hi, shift = 0 if round_up else -1
    cdef int state
    cdef double ai, w
    for i in range(na):
        ai = a[i]
        if ai == 0.0:
            continue
        u = oa + i
        g = _first_group(breaks, (nb - 1) - u + ob)
        while g >= 0:
            state = _group_window(breaks, g, u, ob, nb, m_cap, &j_lo, &j_hi, &m_hi)
            if state < 0:
                break
            if state > 0:
                w = _window(bhi, blo, j_lo, j_hi)
                if symmetric:
                    w = 2.0 * w
                    if m_hi == 0:
                        w = w - b[j_hi]  # the diagonal pair (i, i) is one pair, not two
                _place(out, atoms, u + (g + 1) + shift - oc, ai * w, round_up)
            g -= 1


def convolve_ratios(
    const double[::1] a, long long oa, double a_zero, double a_inf,
    const double[::1] b, long long ob, double b_zero, double b_inf,
    const long long[::1] breaks, bint round_up, bint symmetric,
    long long oc, double[::1] out, double[::1] atoms,
    double[::1] ahi, double[::1] alo, double[::1] bhi, double[::1] blo,
) -> int:
    """Accumulate the law of A + B into ``out`` (zeroed by the caller; grid offset ``oc``) and
    ``atoms`` = [mass at 0, mass at +∞]. ``breaks`` from ratio_sum_breakpoints; ``ahi..blo`` are
    scratch of length len+1. ``symmetric`` asserts that b is a (same offset): only i >= j is visited.
    Returns 0, 1 on a buffer-length mismatch, 2 on a symmetric call with different inputs."""
    cdef Py_ssize_t na = a.shape[0], nb = b.shape[0], nc = out.shape[0], i
    cdef double at[2]
    cdef double sum_a = 0.0, sum_b = 0.0
    if atoms.shape[0] != 2 or ahi.shape[0] != na + 1 or alo.shape[0] != na + 1:
        return 1
    if bhi.shape[0] != nb + 1 or blo.shape[0] != nb + 1 or nc == 0 or breaks.shape[0] == 0:
        return 1
    if symmetric and (na != nb or oa != ob):
        return 2
    at[0] = atoms[0]
    at[1] = atoms[1]
    with nogil:
        _prefix(b, bhi, blo)
        _major(a, oa, b, ob, bhi, blo, breaks, 0, symmetric, round_up, oc, out, at)
        if not symmetric:
            _prefix(a, ahi, alo)
            _major(b, ob, a, oa, ahi, alo, breaks, -1, False, round_up, oc, out, at)
        # atoms: 0 + y = y exactly (a lattice point), ∞ absorbs everything
        for i in range(nb):
            sum_b += b[i]
            if a_zero != 0.0:
                _place(out, at, ob + i - oc, a_zero * b[i], round_up)
        for i in range(na):
            sum_a += a[i]
            if b_zero != 0.0:
                _place(out, at, oa + i - oc, b_zero * a[i], round_up)
        at[0] += a_zero * b_zero
        at[1] += a_inf * (sum_b + b_zero + b_inf) + b_inf * (sum_a + a_zero)
    atoms[0] = at[0]
    atoms[1] = at[1]
    return 0


# ---- convex-order variants: first moments carried alongside the masses ---------------------------
#
# Both variants see the same pair groups as above (for a fixed larger index u, the smaller indices
# v whose m = v − u falls in one step s of h), but keep the group's first moment as well as its
# mass, from window sums of the inputs' masses (W0) and moments (W1):
#
# - SPREAD: the inputs are atoms on lattice points; each pair sum x_u + y_v lies in the lattice
#   cell [e^{(u+s−1)Δ}, e^{(u+s)Δ}] and is split between its two ends keeping its mean (a
#   mean-preserving spread, so the output is >= the true sum in convex order). The upper end's
#   share of a whole group is linear in (W0, W1). Sums below the bottom point are spread between 0
#   and the bottom point; sums above the top point are moved to the top point and their excess
#   first moment is returned (the caller turns it into mass of infinite privacy loss).
# - CONTRACT: the inputs are atoms at arbitrary positions (mass, moment per label); every group is
#   replaced by one atom at its mean, labelled by the lattice cell of x_u + y_v (merging atoms to
#   their mean is a contraction in convex order whatever the grouping; out-of-range labels are
#   clamped, no mass is lost).
#
# A group whose window holds only empty labels adds exact zeros in both variants, so the loop over
# groups jumps from a group to the one holding the next non-empty label below it: the thinned
# (sparse) upper tails of the allocation laws then cost per non-empty group, not per lattice label.


cdef void _major_moments(
    const double[::1] a, const double[::1] am, long long oa,
    const double[::1] b, long long ob,
    const double[::1] bhi, const double[::1] blo, const double[::1] bmhi, const double[::1] bmlo,
    const long long[::1] breaks, const double[::1] growth, long long m_cap, bint symmetric, bint spread,
    double step, long long oc, double[::1] out, double[::1] out_m, double* atoms, const long long* prev,
) noexcept nogil:
    cdef Py_ssize_t na = a.shape[0], nb = b.shape[0], i, g
    cdef long long nc = out.shape[0], u, m_hi, j_lo, j_hi, c
    cdef int state
    cdef double ai, w0, w1, mass, moment, x_u, up_mass, e_lo, e_hi, x_c
    for i in range(na):
        ai = a[i]
        if ai == 0.0:
            continue
        u = oa + i
        x_u = exp(u * step)
        g = _first_group(breaks, (nb - 1) - u + ob)
        while g >= 0:
            state = _group_window(breaks, g, u, ob, nb, m_cap, &j_lo, &j_hi, &m_hi)
            if state < 0:
                break
            if state > 0:
                w0 = _window(bhi, blo, j_lo, j_hi)
                w1 = _window(bmhi, bmlo, j_lo, j_hi)
                if symmetric:
                    w0 = 2.0 * w0
                    w1 = 2.0 * w1
                    if m_hi == 0:
                        w0 = w0 - b[j_hi]
                        w1 = w1 - am[j_hi]
                mass = ai * w0
                moment = am[i] * w0 + ai * w1
                if spread:
                    c = u + (g + 1) - oc  # the cell's upper end, output index
                    if c >= nc:
                        x_c = exp((oc + nc - 1) * step)
                        out[nc - 1] += mass
                        atoms[1] += moment - mass * x_c
                    elif c <= 0:
                        x_c = exp(oc * step)
                        up_mass = moment / x_c
                        if up_mass > mass:
                            up_mass = mass
                        out[0] += up_mass
                        atoms[0] += mass - up_mass
                    else:
                        e_lo = growth[g]
                        e_hi = growth[g + 1]
                        # share of the upper end: (sum − lo)/(hi − lo), summed over the group
                        up_mass = (ai * (1.0 - e_lo) * w0 + ai * w1 / x_u) / (e_hi - e_lo)
                        if up_mass < 0.0:
                            up_mass = 0.0
                        elif up_mass > mass:
                            up_mass = mass
                        out[c] += up_mass
                        out[c - 1] += mass - up_mass
                else:
                    c = u + g - oc  # the cell's lower end labels the group
                    if c >= nc:
                        c = nc - 1
                    elif c < 0:
                        c = 0
                    out[c] += mass
                    out_m[c] += moment
            g = _next_group(breaks, prev, g, j_lo, u, ob) if state > 0 else g - 1


def convolve_ratio_moments(
    const double[::1] a, const double[::1] am, long long oa, double a_zero,
    const double[::1] b, const double[::1] bm, long long ob, double b_zero,
    const long long[::1] breaks, const double[::1] growth, bint spread, bint symmetric, double step,
    long long oc, double[::1] out, double[::1] out_m, double[::1] atoms,
    double[::1] ahi, double[::1] alo, double[::1] amhi, double[::1] amlo,
    double[::1] bhi, double[::1] blo, double[::1] bmhi, double[::1] bmlo,
) -> int:
    """Convex-order sum of A and B (block comment above). ``a``/``am``: masses and first moments
    per label (for SPREAD, am[i] = a[i]·e^{(oa+i)Δ}); ``growth[s] = e^{sΔ}`` for s = 0..len(breaks).
    Outputs (zeroed by the caller): ``out`` masses, ``out_m`` moments (CONTRACT only), ``atoms`` =
    [mass at ratio 0, excess first moment moved down to the top point (SPREAD)].
    Returns 0, 1 on a buffer-length mismatch, 2 on a symmetric call with different inputs."""
    cdef Py_ssize_t na = a.shape[0], nb = b.shape[0], nc = out.shape[0], i
    cdef long long c
    cdef long long* prev
    cdef double at[2]
    if am.shape[0] != na or bm.shape[0] != nb or out_m.shape[0] != nc or atoms.shape[0] != 2:
        return 1
    if ahi.shape[0] != na + 1 or alo.shape[0] != na + 1 or amhi.shape[0] != na + 1 or amlo.shape[0] != na + 1:
        return 1
    if bhi.shape[0] != nb + 1 or blo.shape[0] != nb + 1 or bmhi.shape[0] != nb + 1 or bmlo.shape[0] != nb + 1:
        return 1
    if nc == 0 or breaks.shape[0] == 0 or growth.shape[0] != breaks.shape[0] + 1:
        return 1
    if symmetric and (na != nb or oa != ob):
        return 2
    at[0] = atoms[0]
    at[1] = atoms[1]
    with nogil:
        _prefix(b, bhi, blo)
        _prefix(bm, bmhi, bmlo)
        prev = _previous_nonzero(b, bm)
        _major_moments(a, am, oa, b, ob, bhi, blo, bmhi, bmlo, breaks, growth, 0, symmetric, spread,
                       step, oc, out, out_m, at, prev)
        free(prev)
        if not symmetric:
            _prefix(a, ahi, alo)
            _prefix(am, amhi, amlo)
            prev = _previous_nonzero(a, am)
            _major_moments(b, bm, ob, a, oa, ahi, alo, amhi, amlo, breaks, growth, -1, False, spread,
                           step, oc, out, out_m, at, prev)
            free(prev)
        # 0 + y = y: an atom keeps its place (label), only the range is clipped
        if a_zero != 0.0:
            for i in range(nb):
                _place_moment(out, out_m, at, ob + i - oc, a_zero * b[i], a_zero * bm[i], spread, step, oc)
        if b_zero != 0.0:
            for i in range(na):
                _place_moment(out, out_m, at, oa + i - oc, b_zero * a[i], b_zero * am[i], spread, step, oc)
        at[0] += a_zero * b_zero
    atoms[0] = at[0]
    atoms[1] = at[1]
    return 0


cdef inline void _place_moment(
    double[::1] out, double[::1] out_m, double* atoms, long long c, double mass, double moment,
    bint spread, double step, long long oc,
) noexcept nogil:
    """Place an atom already at lattice label c (SPREAD: exactly at that point) with the range policy."""
    cdef long long nc = out.shape[0]
    cdef double x_c, up_mass
    if spread:
        if c >= nc:
            out[nc - 1] += mass
            atoms[1] += moment - mass * exp((oc + nc - 1) * step)
        elif c < 0:
            up_mass = moment / exp(oc * step)
            if up_mass > mass:
                up_mass = mass
            out[0] += up_mass
            atoms[0] += mass - up_mass
        else:
            out[c] += mass
    else:
        if c >= nc:
            c = nc - 1
        elif c < 0:
            c = 0
        out[c] += mass
        out_m[c] += moment
