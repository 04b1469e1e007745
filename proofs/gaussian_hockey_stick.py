"""Hockey-stick divergence of two Gaussians with equal variance, derived from the definition.

Result: for P = N(Delta, sigma^2), Q = N(0, sigma^2) and EVERY real epsilon (not only epsilon >= 0),

    delta(epsilon) = sup_S P(S) - e^epsilon Q(S)
                   = Phi(Delta/(2 sigma) - epsilon sigma/Delta)
                     - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta),

with Phi the standard normal CDF; the Q||P direction gives the same function. Also proved:
d delta/d epsilon = -e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) (= -e^eps Q(S_*)), the
notes' rho-form Phibar((eps-rho)/sqrt(2 rho)) - e^eps Phibar((eps+rho)/sqrt(2 rho)) with
rho = Delta^2/(2 sigma^2) is the same expression, d_TV(P, Q) = delta(0) = 2 Phi(Delta/(2 sigma)) - 1
(notes G7), and the duality
delta(eps) = 1 - e^eps + e^eps delta_{Q||P}(-eps) holds for the closed forms.

Source: Steinke 2022 (arXiv 2210.00597), Corollary 8 (one dimension; Corollary 10 for d dimensions)
with Proposition 7 (the maximizing set S_* = {loss > epsilon}) and Proposition 3 (Gaussian PLD);
notes/composition-and-subsampling.md section 3 (Cor 8), 11.1 H6/H8, 11.2 G2/G7, 10.5 (table).

Derivation: loss(y) = log(P(y)/Q(y)) is computed from the densities; it is increasing in y
(d loss/dy = Delta/sigma^2 > 0), so P(y) - e^eps Q(y) = Q(y)(e^{loss(y)} - e^eps) > 0 exactly on
S_* = (y_*, oo) with y_* the solution of loss(y) = eps (sympy solves it). Then
delta = int_{y_*}^oo P - e^eps int_{y_*}^oo Q, both integrated by sympy (erfc), and compared with
the claim written with Phi(x) = erfc(-x/sqrt 2)/2. For Q||P the set is (-oo, y'_*).

Typos found: none. Note the source states Cor 8 for eps >= 0 only; the derivation above never uses
the sign of eps, so the same formula is exact for eps < 0 (the notes say so for Prop 7, section 3).

Exports of :func:`derive` (free symbols from proofs._common):

==========  ============================================================  ========================
name        expression                                                    free symbols
==========  ============================================================  ========================
delta       Phi(Delta/(2 sigma) - eps sigma/Delta)                        Delta, epsilon, sigma
              - exp(eps) Phi(-Delta/(2 sigma) - eps sigma/Delta)
delta_QP    same as delta (delta_{Q||P}(eps))                             Delta, epsilon, sigma
ddelta      -exp(eps) Phi(-Delta/(2 sigma) - eps sigma/Delta)             Delta, epsilon, sigma
              (d delta / d epsilon)
tv          2 Phi(Delta/(2 sigma)) - 1  (= delta(0) = d_TV(P, Q))          Delta, sigma
==========  ============================================================  ========================
Phi is written as erfc(-x/sqrt(2))/2 (no cancellation in the lower tail).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/gaussian_hockey_stick.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    Delta,
    DerivationFailed,
    Phi,
    epsilon,
    merge_claims,
    require_equal,
    sigma,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "delta": ("Delta", "epsilon", "sigma"),
    "delta_QP": ("Delta", "epsilon", "sigma"),
    "ddelta": ("Delta", "epsilon", "sigma"),
    "tv": ("Delta", "sigma"),
}

_y = sp.Symbol("y", real=True)


def claims() -> dict[str, sp.Expr]:
    """Corollary 8 written with Delta, sigma (rather than rho), and its derivative (H8)."""
    a = Delta / (2 * sigma)
    c = epsilon * sigma / Delta
    delta = Phi(a - c) - sp.exp(epsilon) * Phi(-a - c)
    return {
        "delta": delta,
        "delta_QP": delta,
        "ddelta": -sp.exp(epsilon) * Phi(-a - c),
        "tv": 2 * Phi(a) - 1,  # notes G7: 2 Phi(sqrt(rho/2)) - 1, sqrt(rho/2) = Delta/(2 sigma)
    }


def _normal_pdf(mean: sp.Expr) -> sp.Expr:
    return sp.exp(-((_y - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def _hockey_stick(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """sup_S p(S) - e^eps q(S) for Gaussian densities, via S_* = {log(p/q) > eps}."""
    loss = sp.expand(sp.expand_log(sp.log(p), force=True) - sp.expand_log(sp.log(q), force=True))
    slope = sp.diff(loss, _y)
    if sp.diff(slope, _y) != 0 or not (slope.is_positive or slope.is_negative):
        raise DerivationFailed(f"loss {loss} is not affine in y with a sign-definite slope")
    roots = sp.solve(sp.Eq(loss, epsilon), _y)
    if len(roots) != 1:
        raise DerivationFailed(f"loss(y) = eps should have one root, got {roots}")
    y_star = roots[0]
    # loss increasing: S_* = (y_*, oo); decreasing: S_* = (-oo, y_*).
    lo, hi = (y_star, sp.oo) if slope.is_positive else (-sp.oo, y_star)
    p_s = sp.simplify(sp.integrate(p, (_y, lo, hi)))
    q_s = sp.simplify(sp.integrate(q, (_y, lo, hi)))
    if p_s.has(sp.Integral) or q_s.has(sp.Integral):
        raise DerivationFailed(f"sympy did not integrate a density over S_*: {p_s}, {q_s}")
    return p_s - sp.exp(epsilon) * q_s


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p = _normal_pdf(Delta)
    q = _normal_pdf(0)
    delta = _hockey_stick(p, q)
    return {
        "delta": delta,
        "delta_QP": _hockey_stick(q, p),
        "ddelta": sp.diff(delta, epsilon),
        "tv": delta.subs(epsilon, 0),
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive delta(eps) of both directions of the Gaussian pair and its derivative; check them
    against the claims (``claimed`` replaces entries of :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [
        {epsilon: e, Delta: d, sigma: s}
        for e in (-3, sp.Rational(-1, 2), 0, sp.Rational(1, 3), 2)
        for d in (sp.Rational(1, 2), 1, 3)
        for s in (sp.Rational(1, 2), 2)
    ]
    for name in ("delta", "delta_QP", "ddelta", "tv"):
        require_equal(got[name], claim[name], f"Gaussian {name}", points)
    # Cross-checks of the claimed closed forms against the notes' other statements.
    rho = Delta**2 / (2 * sigma**2)

    def phibar(x: sp.Expr) -> sp.Expr:
        return 1 - Phi(x)

    rho_form = phibar((epsilon - rho) / sp.sqrt(2 * rho)) - sp.exp(epsilon) * phibar(
        (epsilon + rho) / sp.sqrt(2 * rho)
    )
    require_equal(rho_form, claim["delta"], "Gaussian delta vs Cor 8 rho-form", points)
    dual = 1 - sp.exp(epsilon) + sp.exp(epsilon) * claim["delta_QP"].subs(epsilon, -epsilon)
    require_equal(dual, claim["delta"], "Gaussian duality H6", points)
    require_equal(
        sp.diff(claim["delta"], epsilon), claim["ddelta"], "Gaussian d delta/d eps (H8)", points
    )
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
