"""Renyi divergence of two Laplace distributions with equal scale, derived by piecewise integration.

Result: for P = Laplace(Delta, b), Q = Laplace(0, b) (density exp(-|y - mu|/b)/(2b)), with
epsilon0 := Delta/b and every order alpha > 1,

    D_alpha(P||Q) = (1/(alpha-1)) log( (alpha/(2alpha-1)) e^{(alpha-1) epsilon0}
                                       + ((alpha-1)/(2alpha-1)) e^{-alpha epsilon0} ),

D_alpha(Q||P) is the same function (Laplace is symmetric), and the KL divergence (alpha -> 1) is
epsilon0 + e^{-epsilon0} - 1.

Source: Mironov 2017, "Renyi Differential Privacy", Table II / Proposition 6 (Laplace mechanism),
quoted in notes/composition-and-subsampling.md section 13 D5 (and section 10.7 for the numbers
D_2 = 0.619123629999 at epsilon0 = 1, KL = 0.367879441171 at epsilon0 = 1). The Steinke 2022 text
itself only uses Laplace through "Laplace(1/eps) is eps-DP" (section 2.1).

Derivation: the real line is cut at the kinks 0 and Delta of the two densities; on each piece every
|.| has a fixed sign (decided by proofs._common.strip_abs_on_interval), so Q (P/Q)^alpha is one
exponential, which sympy integrates. To let sympy know 2alpha - 1 > 0, the order is written
alpha = 1 + beta with beta > 0 during the integration. The sum of the three pieces is compared with
exp((alpha-1) * claim), which is equivalent to comparing the divergences since t -> e^{(alpha-1)t}
is injective for alpha > 1. The Q||P direction is integrated the same way (not assumed by symmetry);
KL(P||Q) = E_P[log(P/Q)] is integrated piecewise too, and checked to be the alpha -> 1 limit.

Typos found: none.

Exports of :func:`derive` (free symbols from proofs._common):

==========  ===========================================================  ===================
name        expression                                                   free symbols
==========  ===========================================================  ===================
renyi       log(alpha/(2alpha-1) e^{(alpha-1)eps0}                       alpha, epsilon0
                + (alpha-1)/(2alpha-1) e^{-alpha eps0}) / (alpha-1)
renyi_QP    same as renyi (D_alpha(Q||P))                                alpha, epsilon0
kl          epsilon0 + exp(-epsilon0) - 1                                epsilon0
==========  ===========================================================  ===================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/laplace_renyi.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    Delta,
    DerivationFailed,
    alpha,
    b,
    epsilon0,
    merge_claims,
    require_equal,
    strip_abs_on_interval,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "renyi": ("alpha", "epsilon0"),
    "renyi_QP": ("alpha", "epsilon0"),
    "kl": ("epsilon0",),
}

_y = sp.Symbol("y", real=True)
_beta = sp.Symbol("beta", positive=True)  # alpha - 1 during the integration


def claims() -> dict[str, sp.Expr]:
    """Mironov 2017's Laplace RDP curve and the Laplace KL divergence (notes section 13 D5)."""
    renyi = (
        sp.log(
            alpha / (2 * alpha - 1) * sp.exp((alpha - 1) * epsilon0)
            + (alpha - 1) / (2 * alpha - 1) * sp.exp(-alpha * epsilon0)
        )
        / (alpha - 1)
    )
    return {"renyi": renyi, "renyi_QP": renyi, "kl": epsilon0 + sp.exp(-epsilon0) - 1}


def _laplace_pdf(mean: sp.Expr) -> sp.Expr:
    return sp.exp(-sp.Abs(_y - mean) / b) / (2 * b)


#: The kinks of both densities cut the line into pieces on which no |.| changes sign.
_PIECES = ((-sp.oo, sp.Integer(0)), (sp.Integer(0), Delta), (Delta, sp.oo))


def _to_epsilon0(expr: sp.Expr) -> sp.Expr:
    out = sp.simplify(expr.subs(Delta, epsilon0 * b))
    if b in out.free_symbols:
        raise DerivationFailed(f"result should depend on Delta, b only via Delta/b: {out}")
    return out


def _mgf(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """E_Q[(P/Q)^alpha] = sum over pieces of int Q^{1-alpha} P^alpha dy, with alpha = 1 + beta."""
    a = 1 + _beta
    total = sp.Integer(0)
    for lo, hi in _PIECES:
        p_piece = strip_abs_on_interval(p, _y, lo, hi)
        q_piece = strip_abs_on_interval(q, _y, lo, hi)
        integrand = sp.simplify(sp.powsimp(p_piece**a * q_piece ** (1 - a), force=True))
        piece = sp.integrate(integrand, (_y, lo, hi))
        if piece.has(sp.Integral) or piece.has(sp.Piecewise):
            raise DerivationFailed(f"sympy did not integrate {integrand} on ({lo}, {hi}): {piece}")
        total += piece
    return _to_epsilon0(total).subs(_beta, alpha - 1)


def _kl(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    total = sp.Integer(0)
    for lo, hi in _PIECES:
        p_piece = strip_abs_on_interval(p, _y, lo, hi)
        q_piece = strip_abs_on_interval(q, _y, lo, hi)
        loss = sp.expand(sp.expand_log(sp.log(p_piece / q_piece), force=True))
        total += sp.integrate(sp.expand(p_piece * loss), (_y, lo, hi))
    return _to_epsilon0(total)


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p = _laplace_pdf(Delta)
    q = _laplace_pdf(0)
    return {"mgf": _mgf(p, q), "mgf_QP": _mgf(q, p), "kl": _kl(p, q)}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive D_alpha(P||Q), D_alpha(Q||P) and KL for the Laplace pair by piecewise integration;
    check them against the claims (``claimed`` replaces entries of :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [
        {alpha: a, epsilon0: e}
        for a in (sp.Rational(11, 10), sp.Rational(3, 2), 2, 7, sp.Rational(64, 3))
        for e in (sp.Rational(1, 10), 1, sp.Rational(5, 2))
    ]
    for name, mgf_name in (("renyi", "mgf"), ("renyi_QP", "mgf_QP")):
        require_equal(
            got[mgf_name],
            sp.exp((alpha - 1) * claim[name]),
            f"Laplace {name}: E[(P/Q)^alpha] vs exp((alpha-1) D_alpha)",
            points,
        )
    kl_points = [{epsilon0: e} for e in (sp.Rational(1, 10), 1, sp.Rational(5, 2), 7)]
    require_equal(got["kl"], claim["kl"], "Laplace KL", kl_points)
    require_equal(
        sp.limit(claim["renyi"], alpha, 1), claim["kl"], "Laplace lim_{alpha->1} D_alpha = KL",
        kl_points,
    )
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
