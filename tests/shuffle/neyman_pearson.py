"""The most powerful test between two finite laws (Neyman–Pearson lemma), in mpmath: the brute-force
reference for the shuffle model's exact trade-off curves."""

from __future__ import annotations

import mpmath


def most_powerful_tpr(p: list, q: list, alpha) -> object:
    """The most powerful test's TPR at FPR α between finite laws p (H1) and q (H0) on the same outcomes:
    reject outcomes by decreasing likelihood ratio, randomising at the last one."""
    order = sorted(range(len(p)), key=lambda i: p[i] / q[i] if q[i] > 0 else mpmath.inf, reverse=True)
    power, size = mpmath.mpf(0), mpmath.mpf(0)
    for i in order:
        if size + q[i] <= alpha:
            power, size = power + p[i], size + q[i]
        else:
            return power + (alpha - size) / q[i] * p[i]
    return power
