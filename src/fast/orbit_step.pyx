# cython: language_level=3
"""One report added to a histogram law kept on orbits (:mod:`verifier.shuffle.orbits`): the masses of
the states with t + 1 reports from those with t.

Inputs (validated and allocated by :meth:`verifier.shuffle.orbits.OrbitLayers.step`): the moves of list
t, one entry i per (source state, coordinate slot) where the slot is the first of its value in its
group: ``src[i]`` the state in list t, ``dst[i]`` the state of list t + 1 it lands in, ``slot[i]`` the
slot, ``mult[i]`` the number of the group's symbols holding that value; ``masses[j]`` the report's mass
on each symbol of slot j's group; ``values`` the masses of list t; ``out`` (list t + 1) zeroed by the
caller. Each entry adds (mult·mass)·value to its destination, entries in their order (slot by slot),
so each destination is a sum of at most ``slots`` products of two roundings each, as in the slow twin
:func:`verifier.reference.orbits.orbit_step`, which gives the same doubles.
Return code: 0 on success, 1 on inconsistent lengths, 2 on an index out of range.
"""

from libc.stdint cimport int8_t, int32_t


def orbit_step(const double[::1] values, const int32_t[::1] src, const int32_t[::1] dst, const int8_t[::1] slot,
               const int8_t[::1] mult, const double[::1] masses, double[::1] out):
    cdef Py_ssize_t n = src.shape[0], i, nv = values.shape[0], no = out.shape[0], ns = masses.shape[0]
    cdef int code = 0
    if dst.shape[0] != n or slot.shape[0] != n or mult.shape[0] != n:
        return 1
    with nogil:
        for i in range(n):
            if src[i] < 0 or src[i] >= nv or dst[i] < 0 or dst[i] >= no or slot[i] < 0 or slot[i] >= ns:
                code = 2
                break
        if code == 0:
            for i in range(n):
                out[dst[i]] += (<double> mult[i] * masses[slot[i]]) * values[src[i]]
    return code
