"""The zCDP parameter of a pair, rho* = sup_{alpha > 1} D_alpha/alpha, bounded on cells of orders.

verifier.rdp.zcdp.sup_renyi_ratio bounds rho* from above by splitting the orders into cells and
bounding D_alpha/alpha on each. With K(alpha) = (alpha - 1) D_alpha = log E_Q[(P/Q)^alpha], the
cumulant generating function of the privacy loss under Q:

1. K is convex (Hoelder's inequality), K(1) = 0 (E_Q[P/Q] = 1 when P << Q), and K is
   nondecreasing on alpha >= 1 (van Erven & Harremoes 2014, Thm 3: D_alpha is nondecreasing).
2. On a cell [a, b] with 1 <= a < b, convexity puts K below its chord
   chord(alpha) = c + s alpha (through K(a) and K(b); replacing K(a), K(b) by upper bounds only
   raises the chord), so D_alpha/alpha = K/(alpha(alpha - 1)) <= g(alpha) = chord/(alpha(alpha - 1)).
   g is smooth on (1, inf); its derivative vanishes exactly where
   s alpha^2 + 2 c alpha - c = 0 (export ``critical``: the numerator of g' up to a negative
   factor), so max_[a, b] g is at a or b or at a root of that quadratic inside the cell.
3. On [1, b] the chord through K(1) = 0 is s (alpha - 1) with s = K(b)/(b - 1) = D_b, so
   g = D_b/alpha <= D_b (export ``first_cell``: g on the first cell).
4. On [A, inf), D_alpha <= D_inf, so D_alpha/alpha <= D_inf/A.

For Laplace with eps0 = Delta/b the sup is the limit alpha -> 1 (the KL divergence
eps0 + e^{-eps0} - 1, laplace_renyi's ``kl``), checked here at points: D_alpha/alpha is below KL
at alpha in (1, 64] (so the first cell decides), and the limit of D_alpha as alpha -> 1 is KL.

Exports of :func:`derive`:

============  =======================================================  ==================
name          expression                                               free symbols
============  =======================================================  ==================
critical      s alpha^2 + 2 c alpha - c                                alpha, c, s
first_cell    s / alpha                                                alpha, s
============  =======================================================  ==================
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/zcdp_sup.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, alpha, epsilon0, merge_claims, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {"critical": ("alpha", "c", "s"), "first_cell": ("alpha", "s")}

#: Chord intercept and slope (reals; K(a), K(b) are finite for a pure-DP pair).
c, s = sp.symbols("c s", real=True)


def claims() -> dict[str, sp.Expr]:
    """The quadratic whose roots are g's critical points, and g on the first cell."""
    return {"critical": s * alpha**2 + 2 * c * alpha - c, "first_cell": s / alpha}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive g' and g on the first cell; check the Laplace sup at points. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    g = (c + s * alpha) / (alpha * (alpha - 1))
    numerator = sp.numer(sp.together(sp.diff(g, alpha)))
    # g' = -(s alpha^2 + 2 c alpha - c)/(alpha^2 (alpha - 1)^2): the numerator is minus the claim
    require_equal(sp.expand(-numerator), sp.expand(claim["critical"]), "zcdp sup: critical points of g")
    require_equal(sp.diff(g, alpha) * alpha**2 * (alpha - 1) ** 2, -claim["critical"], "zcdp sup: g' sign factor")
    # First cell: the chord through (1, 0) and (b, K(b)) has slope K(b)/(b - 1) = D_b.
    b, k_b = sp.symbols("b k_b", positive=True)
    chord = k_b / (b - 1) * (alpha - 1)
    first = sp.simplify(chord / (alpha * (alpha - 1)))
    require_equal(first.subs(k_b, s * (b - 1)), claim["first_cell"], "zcdp sup: g on the first cell")
    # Laplace: D_alpha/alpha <= KL on (1, 64] and D_alpha -> KL as alpha -> 1 (at points of eps0).
    e0 = epsilon0
    mgf = alpha / (2 * alpha - 1) * sp.exp((alpha - 1) * e0) + (alpha - 1) / (2 * alpha - 1) * sp.exp(-alpha * e0)
    kl = e0 + sp.exp(-e0) - 1
    for e0_value in (sp.Rational(1, 10), 1, 3):
        d = (sp.log(mgf) / (alpha - 1)).subs(e0, e0_value)
        limit = sp.limit(d, alpha, 1, "+")
        require_equal(limit, kl.subs(e0, e0_value), f"Laplace D_alpha -> KL at eps0 = {e0_value}")
        for a in (sp.Rational(1001, 1000), sp.Rational(11, 10), 2, 8, 64):
            ratio = sp.N(d.subs(alpha, a) / a, 40)
            if not ratio <= sp.N(kl.subs(e0, e0_value), 40):
                raise DerivationFailed(f"Laplace D_alpha/alpha = {ratio} exceeds KL at alpha = {a}, eps0 = {e0_value}")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
