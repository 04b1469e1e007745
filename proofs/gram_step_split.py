"""The algebra behind verifier.pld.gram_step: the DOMINATING discrete PLD of the two-dimensional
fixed-batch step E(A, B, C) (issue 29; the step itself is proofs/fixed_batch_domination.py step 1).

1. Rotation (sympy): a = (sqrt(A), 0), b = (C/sqrt(A), sqrt(B - C^2/A)) has |a|^2 = A, <a, b> = C,
   |b|^2 = B, so E(a, b) is the step of the Gram matrix [[A, C], [C, B]] (isotropic noise: the step
   depends on (a, b) only through the Gram matrix).
2. Loss (sympy): with F(x) = ln(1 - q + q e^x), alpha = (<a, y> - A/2)/s^2, beta = (<b, y> - B/2)/s^2,
   ln(dP/dQ) = F(alpha) - F(beta); ``loss_derivative`` F'(x) = q e^x/(1 - q + q e^x) > 0, so the loss
   increases in alpha and decreases in beta, and on a rectangle its range is bounded by the ends of
   the two affine forms' ranges. ``far_branch``: F(x) = x + ln q + ln(1 + ((1 - q)/q) e^-x), the
   form evaluated where q e^x is not small.
3. Two-atom split (sympy): on a cell R with dP/dQ in [r0, r1], w = (dP/dQ - r0)/(r1 - r0) in [0, 1]
   and dP/dQ = r1 w + r0 (1 - w). The atoms hi, lo with Q'-masses int_R w dQ and int_R (1 - w) dQ and
   P'-masses r1 and r0 times those map back to (P|_R, Q|_R) under the kernel hi -> w dQ / Q'_hi,
   lo -> (1 - w) dQ / Q'_lo (a post-processing, so (P', Q') dominates (P|_R, Q|_R)). Since
   int_R dP/dQ dQ = P(R), int_R w dQ = (P(R) - r0 Q(R))/(r1 - r0), and the P'-masses are
       ``split_high`` = (P - r0 Q)/(1 - r0/r1),    ``split_low`` = (r1 Q - P)/(r1/r0 - 1),
   the unique solution of p_lo + p_hi = P, p_lo/r0 + p_hi/r1 = Q (checked by solving the system).
   With r0 = e^{g0 h}, r1 = e^{g1 h}: r1/r0 - 1 = expm1((g1 - g0) h), the form the code evaluates.
4. Numeric (mpmath, 30 digits): on random cells of a random step, the ratio range from step 2's
   corner bounds contains dP/dQ at random points of the cell, and the split masses are >= 0 with
   p_lo + p_hi = P(R) (the isotropic normals' masses on a rectangle are products of Phi differences).

Exports of :func:`derive`:

=================  ===============================================  ================
name               expression                                       free symbols
=================  ===============================================  ================
split_high         (P - r0 Q)/(1 - r0/r1)                           P, Q, r0, r1
split_low          (r1 Q - P)/(r1/r0 - 1)                           P, Q, r0, r1
loss_derivative    q e^x/(1 - q + q e^x)                            q, x
far_branch         x + ln q + ln(1 + ((1 - q)/q) e^-x)              q, x
=================  ===============================================  ================
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/gram_step_split.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import random

import mpmath
import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "split_high": ("P", "Q", "r0", "r1"),
    "split_low": ("P", "Q", "r0", "r1"),
    "loss_derivative": ("q", "x"),
    "far_branch": ("q", "x"),
}

_P, _Q, _R0, _R1 = sp.symbols("P Q r0 r1", positive=True)
_RATE = sp.Symbol("q", positive=True)
_X = sp.Symbol("x", real=True)
_A, _B = sp.symbols("A B", positive=True)
_C = sp.Symbol("C", real=True)
_R = sp.Symbol("r", positive=True)

#: Random cells of the numeric check (fixed seed: repeatable).
_CELLS = 40


def claims() -> dict[str, sp.Expr]:
    return {
        "split_high": (_P - _R0 * _Q) / (1 - _R0 / _R1),
        "split_low": (_R1 * _Q - _P) / (_R1 / _R0 - 1),
        "loss_derivative": _RATE * sp.exp(_X) / (1 - _RATE + _RATE * sp.exp(_X)),
        "far_branch": _X + sp.log(_RATE) + sp.log(1 + (1 - _RATE) / _RATE * sp.exp(-_X)),
    }


def _f(x: sp.Expr) -> sp.Expr:
    return sp.log(1 - _RATE + _RATE * sp.exp(x))


def _check_cells(split_high: sp.Expr, split_low: sp.Expr) -> None:
    """Step 4 at 30 digits: a random step E(A, B, C), random rectangles; the corner bounds of step 2
    contain dP/dQ inside, and the split masses are non-negative and add up to P(R)."""
    high = sp.lambdify((_P, _Q, _R0, _R1), split_high, "mpmath")
    low = sp.lambdify((_P, _Q, _R0, _R1), split_low, "mpmath")
    rng = random.Random(29)
    with mpmath.workdps(30):
        s, q = mpmath.mpf("1.1"), mpmath.mpf("0.05")
        big_a, big_b, c = mpmath.mpf(3), mpmath.mpf(1), mpmath.mpf("-0.4")
        a1, b1 = mpmath.sqrt(big_a), c / mpmath.sqrt(big_a)
        b2 = mpmath.sqrt(big_b - c * c / big_a)

        def f(x):
            return mpmath.log(1 - q + q * mpmath.e**x)

        def density(y1, y2, m1, m2):
            return mpmath.npdf(y1, m1, s) * mpmath.npdf(y2, m2, s)

        def p(y1, y2):
            return (1 - q) * density(y1, y2, 0, 0) + q * density(y1, y2, a1, 0)

        def qd(y1, y2):
            return (1 - q) * density(y1, y2, 0, 0) + q * density(y1, y2, b1, b2)

        def box(u0, u1, v0, v1, m1, m2):  # an isotropic normal's mass on a rectangle: a product
            return (mpmath.ncdf(u1, m1, s) - mpmath.ncdf(u0, m1, s)) * (mpmath.ncdf(v1, m2, s) - mpmath.ncdf(v0, m2, s))

        for _ in range(_CELLS):
            x0, y0 = mpmath.mpf(rng.uniform(-2, 5)), mpmath.mpf(rng.uniform(-3, 3))
            x1, y1 = x0 + mpmath.mpf(rng.uniform(0.05, 0.8)), y0 + mpmath.mpf(rng.uniform(0.05, 0.8))
            corners = [(u, v) for u in (x0, x1) for v in (y0, y1)]
            alphas = [(a1 * u - big_a / 2) / s**2 for u, _ in corners]
            betas = [(b1 * u + b2 * v - big_b / 2) / s**2 for u, v in corners]
            r0 = mpmath.e ** (f(min(alphas)) - f(max(betas)))
            r1 = mpmath.e ** (f(max(alphas)) - f(min(betas)))
            for _ in range(20):
                u, v = x0 + (x1 - x0) * rng.random(), y0 + (y1 - y0) * rng.random()
                ratio = p(u, v) / qd(u, v)
                if not r0 * (1 - mpmath.mpf(10) ** -25) <= ratio <= r1 * (1 + mpmath.mpf(10) ** -25):
                    raise DerivationFailed(f"dP/dQ = {ratio} outside the corner range [{r0}, {r1}]")
            mass_p = (1 - q) * box(x0, x1, y0, y1, 0, 0) + q * box(x0, x1, y0, y1, a1, 0)
            mass_q = (1 - q) * box(x0, x1, y0, y1, 0, 0) + q * box(x0, x1, y0, y1, b1, b2)
            hi, lo = high(mass_p, mass_q, r0, r1), low(mass_p, mass_q, r0, r1)
            if hi < 0 or lo < 0 or abs(hi + lo - mass_p) > mpmath.mpf(10) ** -25 * mass_p:
                raise DerivationFailed(f"split ({lo}, {hi}) of P(R) = {mass_p}, Q(R) = {mass_q} is not a pair of masses")
            record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check steps 1-4 against the claims; returns the verified expressions. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    a = sp.Matrix([sp.sqrt(_A), 0])
    b = sp.Matrix([_C / sp.sqrt(_A), sp.sqrt(_B - _C**2 / _A)])
    require_equal((a.T * a)[0], _A, "rotation: |a|^2 = A")
    require_equal((a.T * b)[0], _C, "rotation: <a, b> = C")
    require_equal(sp.expand((b.T * b)[0]), _B, "rotation: |b|^2 = B")
    require_equal(sp.diff(_f(_X), _X), claim["loss_derivative"], "F'(x)")
    x_points = [{_RATE: sp.Rational(1, 20), _X: v} for v in (-3, 0, sp.Rational(7, 2), 40)]
    require_equal(_f(_X), claim["far_branch"], "F in the far branch", x_points)
    lo, hi = sp.symbols("p_lo p_hi")
    solution = sp.solve([lo + hi - _P, lo / _R0 + hi / _R1 - _Q], [lo, hi], dict=True)
    if len(solution) != 1:
        raise DerivationFailed(f"the split's linear system has {len(solution)} solutions")
    require_equal(solution[0][hi], claim["split_high"], "p_hi solves the split's system")
    require_equal(solution[0][lo], claim["split_low"], "p_lo solves the split's system")
    w = (_R - _R0) / (_R1 - _R0)
    require_equal(_R1 * w + _R0 * (1 - w), _R, "dP/dQ = r1 w + r0 (1 - w)")
    # P'_hi = r1 int w dQ = r1 (P - r0 Q)/(r1 - r0), by int (dP/dQ) dQ = P
    require_equal(_R1 * (_P - _R0 * _Q) / (_R1 - _R0), claim["split_high"], "P'_hi from the kernel")
    _check_cells(claim["split_high"], claim["split_low"])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
