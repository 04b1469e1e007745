"""Renyi divergence of two Gaussians with equal variance, derived from the definition.

Result: for P = N(Delta, sigma^2), Q = N(0, sigma^2) and every order alpha > 1,

    D_alpha(P||Q) = (1/(alpha-1)) log E_{Y~Q}[(P(Y)/Q(Y))^alpha] = alpha Delta^2 / (2 sigma^2),

the same for D_alpha(Q||P), and the KL divergence (alpha -> 1) is Delta^2 / (2 sigma^2).

Source: Steinke 2022 (arXiv 2210.00597), Lemma 33.4 (and Lemma 12: the Gaussian mechanism is
rho-zCDP with rho = Delta^2/(2 sigma^2)); notes/composition-and-subsampling.md section 6.4
(Lemma 33.4), section 11.2 G5, section 13 D6 (exact for every real alpha > 1, not only integers).

Derivation: the privacy loss log(P(y)/Q(y)) = Delta (2y - Delta) / (2 sigma^2) is computed from the
two densities; E_Q[(P/Q)^alpha] = int Q(y) exp(alpha * loss(y)) dy is integrated by sympy over the
real line with alpha symbolic, and log(...)/(alpha-1) simplifies to the claim. Same for Q||P, and
E_P[loss] for the KL divergence.

Typos found: none (the notes state it in the source's notation alpha (mu-mu')^2/(2 sigma^2)).

Exports of :func:`derive` (sympy expressions; free symbols from proofs._common):

=========  ==============================  ========================  =========================
name       expression                      free symbols              meaning
=========  ==============================  ========================  =========================
renyi      alpha*Delta**2/(2*sigma**2)     alpha, Delta, sigma       D_alpha(P||Q), alpha > 1
renyi_QP   alpha*Delta**2/(2*sigma**2)     alpha, Delta, sigma       D_alpha(Q||P), alpha > 1
kl         Delta**2/(2*sigma**2)           Delta, sigma              D_1(P||Q) = KL(P||Q)
=========  ==============================  ========================  =========================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/gaussian_renyi.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    Delta,
    DerivationFailed,
    alpha,
    merge_claims,
    require_equal,
    sigma,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

#: Free symbols (by name) of each exported expression.
EXPORT_SYMBOLS = {
    "renyi": ("Delta", "alpha", "sigma"),
    "renyi_QP": ("Delta", "alpha", "sigma"),
    "kl": ("Delta", "sigma"),
}

_y = sp.Symbol("y", real=True)


def claims() -> dict[str, sp.Expr]:
    """The closed forms this script proves (Lemma 33.4)."""
    renyi = alpha * Delta**2 / (2 * sigma**2)
    return {"renyi": renyi, "renyi_QP": renyi, "kl": Delta**2 / (2 * sigma**2)}


def _normal_pdf(mean: sp.Expr) -> sp.Expr:
    return sp.exp(-((_y - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def _log_ratio(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """log(p/q) as a polynomial in y (both are Gaussian densities)."""
    return sp.expand(sp.expand_log(sp.log(p), force=True) - sp.expand_log(sp.log(q), force=True))


def _renyi_from_definition(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    loss = _log_ratio(p, q)
    integrand = sp.simplify(q * sp.exp(alpha * loss))  # = q (p/q)^alpha, one exponential
    mgf = sp.integrate(integrand, (_y, -sp.oo, sp.oo))
    if mgf.has(sp.Integral) or mgf.has(sp.Piecewise):
        raise DerivationFailed(f"sympy did not integrate E_Q[(P/Q)^alpha]: {mgf}")
    return sp.simplify(sp.expand_log(sp.log(sp.simplify(mgf)), force=True) / (alpha - 1))


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p = _normal_pdf(Delta)
    q = _normal_pdf(0)
    loss = _log_ratio(p, q)
    expected_loss = Delta * (2 * _y - Delta) / (2 * sigma**2)  # Prop 3 of the source
    if sp.simplify(loss - expected_loss) != 0:
        raise DerivationFailed(f"privacy loss of N(Delta,s^2)||N(0,s^2) is {loss}, not affine")
    kl = sp.integrate(sp.expand(p * loss), (_y, -sp.oo, sp.oo))
    return {
        "renyi": _renyi_from_definition(p, q),
        "renyi_QP": _renyi_from_definition(q, p),
        "kl": sp.simplify(kl),
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive D_alpha(P||Q), D_alpha(Q||P) and KL for the Gaussian pair; check them against the
    claims (``claimed`` replaces entries of :func:`claims`, e.g. to inject a wrong one).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [
        {alpha: a, Delta: d, sigma: s}
        for a in (sp.Rational(3, 2), 2, sp.Rational(17, 3))
        for d in (sp.Rational(1, 3), 1, 4)
        for s in (sp.Rational(1, 2), 2)
    ]
    for name in ("renyi", "renyi_QP", "kl"):
        require_equal(got[name], claim[name], f"Gaussian {name}", points)
    # The KL divergence is the alpha -> 1 limit of the Renyi divergence (Def 32).
    require_equal(
        sp.limit(claim["renyi"], alpha, 1), claim["kl"], "Gaussian lim_{alpha->1} D_alpha = KL"
    )
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
