"""verifier.shuffle.linear_tails: Σ_j Σ_a π_j(a)(c0_j + c1_j·a)_+ over binomial windows, its LOWER and UPPER
bounds against the same sum in mpmath at 40 digits (every term, exact binomial masses), for slopes of
both signs, roots inside, below and above the windows, and a zero slope, so that some rows take the
half-line fast path and others the term-by-term one (the first version crashed on such a mix: the
outcomes next to the root were evaluated for every row and then for the fast ones). Catches a fast path
that takes the wrong half-line, drops the outcomes next to the root, or mirrors a decreasing term wrongly."""

import mpmath
import numpy as np
from flint import arb

from verifier._types import Side
from verifier.shuffle.linear_tails import BinomialRows, Linear, positive_sum

MPMATH_DPS = 40


def _reference(rows: BinomialRows, sizes: list[int], rho: mpmath.mpf, lin: Linear) -> mpmath.mpf:
    total = mpmath.mpf(0)
    for i in range(len(lin.c0)):
        j = int(lin.row[i])
        size = sizes[j]
        for col in range(rows.width):
            a = int(rows.lo[j]) + col
            if a > size or rows.pmf[j, col] == 0:
                continue
            pmf = mpmath.binomial(size, a) * rho**a * (1 - rho) ** (size - a)
            total += pmf * max(mpmath.mpf(0), mpmath.mpf(lin.c0[i]) + mpmath.mpf(lin.c1[i]) * a)
    return total


def test_positive_sum_brackets_the_exact_sum():
    rng = np.random.default_rng(38)
    sizes = [5, 40, 200, 1000]
    rows = BinomialRows(sizes, arb(3) / 10, arb(7) / 10, 1e-20)
    rho = mpmath.mpf(3) / 10
    row = np.array([0, 1, 2, 3, 2, 3, 1, 3, 0, 2], dtype=np.int64)
    means = np.array([sizes[r] * 0.3 for r in row])
    c1 = rng.normal(size=len(row))
    c1[4] = 0.0  # a flat term
    roots = means + np.array([0.0, 3.0, -1e3, 1e4, 0.0, -5.0, 2.5, 0.3, -2.0, 40.0])  # inside, below, above the windows
    c0 = -c1 * roots
    c0[4] = 0.7
    mag0, mag1 = np.abs(c0) + 1e-3, np.abs(c1)
    lin = Linear(c0, c1, mag0, mag1, 1e-15, row)
    exact = _reference(rows, sizes, rho, lin)
    lower, upper = positive_sum(rows, lin, Side.LOWER), positive_sum(rows, lin, Side.UPPER)
    assert lower <= exact <= upper
    assert upper - lower <= 1e-10 * float(exact)
