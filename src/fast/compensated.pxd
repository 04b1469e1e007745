# Compensated (Neumaier) summation step shared by the kernels: cimported, never imported at run time.


cdef inline void neumaier_add(double* s, double* c, double x) noexcept nogil:
    """s + c <- s + c + x with the rounding error of s + x carried in c (Neumaier 1974; Higham,
    Accuracy and Stability, Alg. 4.3 variant): t = fl(s + x) and the exact error of that addition,
    (s − t) + x when |s| >= |x| else (x − t) + s, is added to c. The callers sum non-negative terms,
    so s >= x compares magnitudes."""
    cdef double t = s[0] + x
    if s[0] >= x:
        c[0] = c[0] + ((s[0] - t) + x)
    else:
        c[0] = c[0] + ((x - t) + s[0])
    s[0] = t
