"""Brute-force twin of the geometric-grid ratio convolution (:mod:`verifier._fast.geometric`).

Every pair of grid points is summed in mpmath at high precision and placed by the definition of
directed rounding, with no use of the breakpoint table or of prefix sums:

- rounding UP: the smallest grid point >= the sum, index ⌈ln(x + y)/Δ⌉; above the top → +∞,
  below the bottom → the bottom point;
- rounding DOWN: the largest grid point <= the sum, index ⌊ln(x + y)/Δ⌋; below the bottom → 0,
  above the top → the top point.

The convex-order variants (:func:`convolve_ratio_moments`) are defined pair by pair as well:
SPREAD splits every pair sum between the ends of its lattice cell keeping its mean (below the
grid: between 0 and the bottom point; above it: moved to the top point, the excess first moment
returned); CONTRACT sums the atoms' means and groups each pair by the cell of the sum of its
lattice labels, keeping each group's mass and first moment.

O(n²) in mpmath: for tests on small inputs only.
"""

from __future__ import annotations

from typing import Sequence

import mpmath

__all__ = ["convolve_ratios", "convolve_ratio_moments"]


def convolve_ratios(
    a: Sequence[float],
    oa: int,
    a_zero: float,
    a_inf: float,
    b: Sequence[float],
    ob: int,
    b_zero: float,
    b_inf: float,
    step_exponent: int,
    round_up: bool,
    oc: int,
    nc: int,
    *,
    dps: int = 60,
) -> tuple[list[mpmath.mpf], mpmath.mpf, mpmath.mpf]:
    """Law of A + B for independent A (masses ``a`` at e^{(oa+i)Δ}, atoms ``a_zero`` at 0 and
    ``a_inf`` at +∞) and B (likewise), Δ = 2^-step_exponent, re-binned onto the ``nc`` points
    e^{(oc+c)Δ}. Returns (masses, mass at 0, mass at +∞) as mpf."""
    with mpmath.workdps(dps):
        step = mpmath.mpf(2) ** (-step_exponent)
        out = [mpmath.mpf(0)] * nc
        zero = mpmath.mpf(0)
        inf = mpmath.mpf(0)

        def place(index: int, mass: mpmath.mpf) -> None:
            nonlocal zero, inf
            c = index - oc
            if c >= nc:
                if round_up:
                    inf += mass
                else:
                    out[nc - 1] += mass
            elif c < 0:
                if round_up:
                    out[0] += mass
                else:
                    zero += mass
            else:
                out[c] += mass

        def grid_index(value: mpmath.mpf) -> int:
            q = mpmath.log(value) / step
            return int(mpmath.ceil(q)) if round_up else int(mpmath.floor(q))

        masses_a = [(oa + i, mpmath.mpf(p)) for i, p in enumerate(a)]
        masses_b = [(ob + j, mpmath.mpf(p)) for j, p in enumerate(b)]
        for u, pa in masses_a:
            for v, pb in masses_b:
                total = mpmath.exp(u * step) + mpmath.exp(v * step)
                place(grid_index(total), pa * pb)
        for v, pb in masses_b:
            place(v, mpmath.mpf(a_zero) * pb)
        for u, pa in masses_a:
            place(u, mpmath.mpf(b_zero) * pa)
        zero += mpmath.mpf(a_zero) * mpmath.mpf(b_zero)
        total_a = sum((p for _, p in masses_a), mpmath.mpf(0)) + mpmath.mpf(a_zero)
        total_b = sum((p for _, p in masses_b), mpmath.mpf(0)) + mpmath.mpf(b_zero) + mpmath.mpf(b_inf)
        inf += mpmath.mpf(a_inf) * total_b + mpmath.mpf(b_inf) * total_a
        return out, zero, inf


def convolve_ratio_moments(
    a: Sequence[float],
    am: Sequence[float],
    oa: int,
    a_zero: float,
    b: Sequence[float],
    bm: Sequence[float],
    ob: int,
    b_zero: float,
    step_exponent: int,
    spread: bool,
    oc: int,
    nc: int,
    *,
    dps: int = 60,
) -> tuple[list[mpmath.mpf], list[mpmath.mpf], mpmath.mpf, mpmath.mpf]:
    """Convex-order sum of A and B, pair by pair (module docstring). ``am``/``bm`` are first moments
    per label (SPREAD ignores them: its atoms sit at the lattice points). Returns (masses, moments,
    mass at 0, excess first moment at the top)."""
    with mpmath.workdps(dps):
        step = mpmath.mpf(2) ** (-step_exponent)
        out = [mpmath.mpf(0)] * nc
        out_m = [mpmath.mpf(0)] * nc
        zero = mpmath.mpf(0)
        lost = mpmath.mpf(0)

        def point(index: int) -> mpmath.mpf:
            return mpmath.exp(index * step)

        def atoms(masses, moments, offset, zero_mass):
            listed = []
            for i, p in enumerate(masses):
                p = mpmath.mpf(p)
                position = point(offset + i) if spread else (mpmath.mpf(moments[i]) / p if p else mpmath.mpf(0))
                listed.append((offset + i, p, position))
            return listed

        xs = atoms(a, am, oa, a_zero)
        ys = atoms(b, bm, ob, b_zero)
        pairs = [(u, v, pa * pb, mu + nu) for u, pa, mu in xs for v, pb, nu in ys]
        # 0 + y = y keeps its label; 0 + 0 = 0
        pairs += [(None, v, mpmath.mpf(a_zero) * pb, nu) for v, pb, nu in ys]
        pairs += [(None, u, mpmath.mpf(b_zero) * pa, mu) for u, pa, mu in xs]
        zero += mpmath.mpf(a_zero) * mpmath.mpf(b_zero)
        for u, v, mass, value in pairs:
            if u is None:
                upper = v  # an atom at its own label
                exact = True
            else:
                q = mpmath.log(point(u) + point(v)) / step
                upper = int(mpmath.ceil(q))
                exact = False
            if spread:
                c = upper - oc
                top = point(oc + nc - 1)
                if (exact and c >= nc) or (not exact and c >= nc):
                    out[nc - 1] += mass
                    lost += mass * value - mass * top
                elif (exact and c < 0) or (not exact and c <= 0):
                    up_mass = min(mass * value / point(oc), mass)
                    out[0] += up_mass
                    zero += mass - up_mass
                elif exact:
                    out[c] += mass
                else:
                    lo, hi = point(oc + c - 1), point(oc + c)
                    up_mass = mass * (value - lo) / (hi - lo)
                    out[c] += up_mass
                    out[c - 1] += mass - up_mass
            else:
                label = v if u is None else upper - 1
                c = min(max(label - oc, 0), nc - 1)
                out[c] += mass
                out_m[c] += mass * value
        return out, out_m, zero, lost
