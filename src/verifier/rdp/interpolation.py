"""Fractional Rényi orders from integer ones, by log-convexity (an UPPER bound for every α > 1).

f(α) = (α − 1)·D_α = ln E_Q[(P/Q)^α] is convex in α (Hölder's inequality; Steinke 2022 notes §11.4
R3; Wang, Balle & Kasiviswanathan 2019, Cor 10), and f(1) = ln P(supp Q) <= 0. So for integers
a < α < a + 1, f(α) lies below the chord through f(a) and f(a+1):

    D_α <= [(a + 1 − α)(a − 1) D_a + (α − a)·a·D_{a+1}] / (α − 1),

valid for every pair of distributions (so for both directions of every scheme) and every real
α > 1; for α in (1, 2) it reads D_α <= D_2, which is also Rényi monotonicity (Lemma 33.3). It uses
upper bounds at the integer ends only, and is increasing in them, so it stays an upper bound.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Side

__all__ = ["integer_support", "interpolate"]


def integer_support(orders: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """The integer orders >= 2 the given orders need: themselves, or the two integers around them."""
    needed: set[int] = set()
    for a in orders:
        lo = math.floor(a)
        if lo == a:
            needed.add(int(a))
        else:
            needed.update({max(lo, 2), max(lo, 1) + 1})
    return np.array(sorted(needed), dtype=np.int64)


def interpolate(
    orders: npt.NDArray[np.float64], at_integers: Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Values and exactness flags at ``orders``: integer orders from ``at_integers`` (which returns
    upper bounds and flags at the integer orders it is given), the others by the chord bound above
    (never exact)."""
    ints = integer_support(orders)
    int_values, int_exact = at_integers(ints)
    table = {int(a): (float(v), bool(e)) for a, v, e in zip(ints, int_values, int_exact)}
    values = np.empty(len(orders))
    exact = np.zeros(len(orders), dtype=bool)
    with with_precision():
        for i, alpha in enumerate(orders):
            lo = math.floor(alpha)
            if lo == alpha:
                values[i], exact[i] = table[int(alpha)]
                continue
            if lo < 2:
                values[i] = table[2][0]
                continue
            d_lo, d_hi = table[lo][0], table[lo + 1][0]
            if math.isinf(d_lo) or math.isinf(d_hi):
                values[i] = math.inf
                continue
            x = arb(float(alpha))
            chord = ((lo + 1 - x) * (lo - 1) * arb(d_lo) + (x - lo) * lo * arb(d_hi)) / (x - 1)
            values[i] = max(0.0, arb_bound(chord, Side.UPPER))
    return values, exact
