# cython: language_level=3
"""One step of the chain dynamic programme of :mod:`verifier.matrix.chain`: the law of a partial sum
T of non-negative increments, carried per state of the next chain variable.

Inputs (validated and allocated by :mod:`verifier.matrix.chain`):
- ``mode``: 0 SPREAD (T on the grid j·h; an increment's landing point x is split between the two
  grid points around it, keeping the mean: a mean-preserving spread), 1 JENSEN (each grid cell holds
  a mass and its first moment; everything landing in a cell is merged at its mean: a
  mean-preserving contraction);
- ``absorb``: 1 keeps the part with T >= tmax = M·h as a mass and a sum of mass·T (``bmass``,
  ``bsum``), 0 drops it (the caller's functional is 0 there);
- ``mass[k1, j]``, ``moment[k1, j]`` (moment used in mode 1 only): the partial-sum law given the
  current variable's point k1;
- ``incr[k1, k2, l]`` >= 0: the increment for current point k1, next point k2, node point l;
- ``weight[k2, l]`` >= 0: the probability of (k2, l);
- outputs ``omass``, ``omoment`` (K2 × M), ``obmass``, ``obsum`` (K2), zeroed by the caller.
Return code: 0 on success, 1 on inconsistent shapes.
"""

from libc.math cimport floor

cdef enum:
    SPREAD = 0
    JENSEN = 1


def chain_step(int mode, int absorb, double[:, ::1] mass, double[:, ::1] moment, double[::1] bmass, double[::1] bsum,
               double[:, :, ::1] incr, double[:, ::1] weight, double h,
               double[:, ::1] omass, double[:, ::1] omoment, double[::1] obmass, double[::1] obsum):
    cdef Py_ssize_t k1n = mass.shape[0], m = mass.shape[1], k2n = weight.shape[0], ln = weight.shape[1]
    cdef Py_ssize_t k1, k2, l, j, q, shift
    cdef double y, w, a, x, lam, tmax = m * h, mo
    if (incr.shape[0] != k1n or incr.shape[1] != k2n or incr.shape[2] != ln or moment.shape[0] != k1n
            or moment.shape[1] != m or bmass.shape[0] != k1n or bsum.shape[0] != k1n
            or omass.shape[0] != k2n or omass.shape[1] != m or omoment.shape[0] != k2n
            or omoment.shape[1] != m or obmass.shape[0] != k2n or obsum.shape[0] != k2n or h <= 0):
        return 1
    with nogil:
        for k2 in range(k2n):
            for l in range(ln):
                w = weight[k2, l]
                if w == 0.0:
                    continue
                for k1 in range(k1n):
                    y = incr[k1, k2, l]
                    if absorb and bmass[k1] != 0.0:
                        obmass[k2] += bmass[k1] * w
                        obsum[k2] += (bsum[k1] + bmass[k1] * y) * w
                    if mode == JENSEN:
                        for j in range(m):
                            a = mass[k1, j]
                            if a == 0.0:
                                continue
                            a = a * w
                            mo = moment[k1, j] * w
                            x = mo / a + y
                            if x >= tmax:
                                if absorb:
                                    obmass[k2] += a
                                    obsum[k2] += mo + a * y
                                continue
                            q = <Py_ssize_t>floor(x / h)
                            if q >= m:
                                q = m - 1
                            omass[k2, q] += a
                            omoment[k2, q] += mo + a * y
                        continue
                    # SPREAD: the same shift for every j: x = (j + shift + lam)·h
                    shift = <Py_ssize_t>floor(y / h)
                    lam = y / h - shift
                    for j in range(m):
                        a = mass[k1, j]
                        if a == 0.0:
                            continue
                        a = a * w
                        q = j + shift
                        if q >= m:
                            if absorb:
                                obmass[k2] += a
                                obsum[k2] += a * (j * h + y)
                            continue
                        omass[k2, q] += a * (1.0 - lam)
                        if q + 1 < m:
                            omass[k2, q + 1] += a * lam
                        elif absorb:
                            obmass[k2] += a * lam
                            obsum[k2] += a * lam * tmax
    return 0
