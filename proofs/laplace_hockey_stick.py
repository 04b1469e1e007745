"""Hockey-stick divergence of two Laplace distributions, every real epsilon, piecewise integration.

Result: for P = Laplace(Delta, b), Q = Laplace(0, b) (density exp(-|y - mu|/b)/(2b)) and
epsilon0 := Delta/b,

    delta(eps) = sup_S P(S) - e^eps Q(S) = 1 - e^eps                 for eps <= -eps0,
                                           1 - e^{(eps - eps0)/2}    for -eps0 <= eps <= eps0,
                                           0                         for eps >= eps0,

and delta_{Q||P} is the same function. So the middle formula, usually stated for 0 <= eps <= eps0,
holds on the whole of [-eps0, eps0] (it meets 1 - e^eps at eps = -eps0, continuously). Also
d_TV(P, Q) = delta(0) = 1 - e^{-epsilon0/2}, and the duality
delta(eps) = 1 - e^eps + e^eps delta_{Q||P}(-eps) (notes H6/D1) holds for the closed forms.

Source: notes/composition-and-subsampling.md section 13 D5 (derived there, "not in the source";
the 0 <= eps' <= eps part) and section 10.7 (delta(1/3) = 0.283468689426211 at eps0 = 1); the
maximizing set S_* = {loss > eps} is Steinke 2022 (arXiv 2210.00597) Proposition 7, which the notes
extend to eps < 0 (section 3).

Derivation: cut the line at the kinks 0 and Delta; on each piece the |.| are resolved
(proofs._common.strip_abs_on_interval) and the loss log(P/Q) is affine in y: -eps0 on (-oo, 0),
(2y - Delta)/b on (0, Delta), +eps0 on (Delta, oo). Since P - e^eps Q = Q (e^loss - e^eps), the
positive part of P - e^eps Q lives exactly on {loss > eps}; on a constant piece that is the whole
piece or nothing, on the sloped piece it is (clamp(y_*), Delta) with loss(y_*) = eps. Each piece's
int (P - e^eps Q) dy is integrated by sympy; the sum is a Piecewise in eps, which is compared
branch by branch with the claim on each interval cut by -eps0 and eps0, and at those two points.

Typos found: none in the notes; the brief's "for eps < 0 derive it" has the answer above (the
0 <= eps <= eps0 formula simply extends down to -eps0).

Exports of :func:`derive` (free symbols from proofs._common):

==========  ======================================================  ====================
name        expression                                              free symbols
==========  ======================================================  ====================
delta       Piecewise((1 - exp(eps), eps < -eps0),                  epsilon, epsilon0
                      (1 - exp((eps - eps0)/2), eps < eps0),
                      (0, True))
delta_QP    same as delta (delta_{Q||P}(eps))                       epsilon, epsilon0
tv          1 - exp(-epsilon0/2)                                    epsilon0
==========  ======================================================  ====================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/laplace_hockey_stick.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    Delta,
    DerivationFailed,
    b,
    epsilon,
    epsilon0,
    merge_claims,
    require_equal,
    require_piecewise_equal,
    strip_abs_on_interval,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "delta": ("epsilon", "epsilon0"),
    "delta_QP": ("epsilon", "epsilon0"),
    "tv": ("epsilon0",),
}

_y = sp.Symbol("y", real=True)


def claims() -> dict[str, sp.Expr]:
    """Notes D5, extended to every real epsilon."""
    delta = sp.Piecewise(
        (1 - sp.exp(epsilon), epsilon < -epsilon0),
        (1 - sp.exp((epsilon - epsilon0) / 2), epsilon < epsilon0),
        (0, True),
    )
    return {"delta": delta, "delta_QP": delta, "tv": 1 - sp.exp(-epsilon0 / 2)}


def _laplace_pdf(mean: sp.Expr) -> sp.Expr:
    # Delta = epsilon0 * b from the start, so that every condition is decidable in epsilon0, b.
    return (sp.exp(-sp.Abs(_y - mean) / b) / (2 * b)).subs(Delta, epsilon0 * b)


_PIECES = ((-sp.oo, sp.Integer(0)), (sp.Integer(0), epsilon0 * b), (epsilon0 * b, sp.oo))


def _hockey_stick(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """int (p - e^eps q)_+ dy, piece by piece, as a Piecewise in epsilon."""
    total = sp.Integer(0)
    previous_end_loss = None
    for lo, hi in _PIECES:
        p_piece = strip_abs_on_interval(p, _y, lo, hi)
        q_piece = strip_abs_on_interval(q, _y, lo, hi)
        loss = sp.simplify(sp.expand_log(sp.log(p_piece / q_piece), force=True))
        slope = sp.diff(loss, _y)
        if sp.diff(slope, _y) != 0:
            raise DerivationFailed(f"loss {loss} on ({lo}, {hi}) is not affine")
        # loss must be continuous across kinks, so its pieces join into one monotone function
        start_loss = sp.limit(loss, _y, lo, "+")
        if previous_end_loss is not None and sp.simplify(start_loss - previous_end_loss) != 0:
            raise DerivationFailed(f"loss jumps at y = {lo}: {previous_end_loss} -> {start_loss}")
        previous_end_loss = sp.limit(loss, _y, hi, "-")

        integrand = sp.expand(p_piece - sp.exp(epsilon) * q_piece)

        def integral(a: sp.Expr, z: sp.Expr) -> sp.Expr:
            value = sp.integrate(integrand, (_y, a, z))
            if value.has(sp.Integral):
                raise DerivationFailed(f"sympy did not integrate {integrand} on ({a}, {z})")
            return sp.simplify(value)

        if slope == 0:
            # P - e^eps Q > 0 on the whole piece iff eps < loss, else nowhere on it.
            total += sp.Piecewise((integral(lo, hi), epsilon < loss), (0, True))
            continue
        roots = sp.solve(sp.Eq(loss, epsilon), _y)
        if len(roots) != 1:
            raise DerivationFailed(f"loss = eps on ({lo}, {hi}) should have one root: {roots}")
        y_star = roots[0]
        if slope.is_positive:  # {loss > eps} on the piece = (max(lo, y_*), hi)
            total += sp.Piecewise(
                (integral(lo, hi), y_star <= lo),
                (0, y_star >= hi),
                (integral(y_star, hi), True),
            )
        elif slope.is_negative:  # {loss > eps} on the piece = (lo, min(hi, y_*))
            total += sp.Piecewise(
                (integral(lo, hi), y_star >= hi),
                (0, y_star <= lo),
                (integral(lo, y_star), True),
            )
        else:
            raise DerivationFailed(f"sign of the slope {slope} of the loss is undecidable")
    return total


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p = _laplace_pdf(Delta)
    q = _laplace_pdf(0)
    delta = _hockey_stick(p, q)
    return {"delta": delta, "delta_QP": _hockey_stick(q, p), "tv": delta.subs(epsilon, 0)}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive delta(eps) of both directions of the Laplace pair for every real eps; check them
    against the claims (``claimed`` replaces entries of :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [
        {epsilon: e, epsilon0: e0, b: s}
        for e in (-4, sp.Rational(-1, 3), 0, sp.Rational(1, 3), 3)
        for e0 in (sp.Rational(1, 2), 2)
        for s in (sp.Rational(1, 3), 5)
    ]
    for name in ("delta", "delta_QP"):
        bps = require_piecewise_equal(got[name], claim[name], epsilon, f"Laplace {name}", points)
        if name == "delta" and claimed is None and bps != [-epsilon0, epsilon0]:
            raise DerivationFailed(f"Laplace delta: expected breakpoints -eps0, eps0, got {bps}")
    require_equal(got["tv"], claim["tv"], "Laplace TV = delta(0)", points)
    dual = 1 - sp.exp(epsilon) + sp.exp(epsilon) * claim["delta_QP"].subs(epsilon, -epsilon)
    require_piecewise_equal(dual, claim["delta"], epsilon, "Laplace duality H6", points)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
