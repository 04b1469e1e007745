"""The add-direction RDP bound of 1-out-of-t random allocation used beside the Jensen bound
(src/verifier/rdp/allocation.py, ``_add_taylor_gaussian``).

Setting (notes/random-allocation.md §0, Cor 3.3 of the PLD paper): with r_i = P/Q(y_i), y_i ~ Q iid
and S = (1/t) Σ r_i, e^{(α−1) R_α(Q^{⊗t} ‖ P̄_t)} = E[S^{−m}], m = α − 1 > 0; E[r] = 1 and
E[r²] = M2. Write φ(s) = s^{−m}. For any s0 ∈ (0, 1), p > 1, q = p/(p − 1):

1. Taylor on {S >= s0}: φ(S) = 1 − m(S − 1) + φ''(ξ)(S − 1)²/2 with ξ between S and 1, so
   ξ >= s0 and φ''(ξ) = m(m+1) ξ^{−m−2} <= m(m+1) s0^{−m−2} =: 2K. The quadratic
   1 − m(s − 1) + K(s − 1)² is >= 0 for every s (its discriminant m² − 4K < 0), so
   E[φ(S); S >= s0] <= E[1 − m(S − 1) + K(S − 1)²] = 1 + K (M2 − 1)/t   (``taylor_bound``).
2. Hölder on {S < s0}: E[φ(S); S < s0] <= E[S^{−mp}]^{1/p} P(S < s0)^{1/q}, where
   E[S^{−mp}] <= (E[r^{−mp/t}])^t (AM–GM, the Jensen step of Lemma E.3) and, for the Gaussian,
   E_Q[r^{−c}] = exp(c(c+1)Δ²/(2σ²))   (``negative_moment``); so the first factor is
   exp(m(1 + mp/t)Δ²/(2σ²)).
   Binned refinement: on [s_j, s_{j+1}) the remainder coefficient is <= K(s_j) = m(m+1)s_j^{−m−2}/2
   (ξ ∈ [S, 1]); telescoping, K̃(S) = K(1) + Σ_j (K(s_j) − K(s_{j+1})) 1{S < s_{j+1}} on S >= s0
   (checked at J = 3 below), so E[φ(S); S >= s0] <= 1 + K(1)(M2 − 1)/t + Σ_j ΔK_j E[(S−1)²; S < s_{j+1}].
   Layer cake with u = 1 − S ∈ (0, 1]: E[(1−S)²; 1 − S > g] = g² P(1−S > g) + ∫_g^1 2u P(1−S > u) du
   <= (g² + 2 M2/t) e^{−t g²/(2 M2)} by item 3 and ``tail_integral``.
3. Lower tail of non-negative summands (Maurer 2003): e^{−y} <= 1 − y + y²/2 for y >= 0 gives
   E[e^{−λr}] <= exp(−λ + λ²M2/2), and Chernoff at λ = (1 − s0)/M2 gives
   P(S <= s0) <= exp(−t(1 − s0)²/(2 M2))   (``maurer_exponent``); for the Gaussian
   M2 = E_Q[r²] = exp(Δ²/σ²)   (``second_moment``).

Exports of :func:`derive`:

================  ==============================================  =====================================
name              expression                                      meaning
================  ==============================================  =====================================
second_moment     exp(Delta^2/sigma^2)                            E_Q[(P/Q)^2], Gaussian
negative_moment   exp(c (c + 1) Delta^2/(2 sigma^2))              E_Q[(P/Q)^(-c)], Gaussian
maurer_exponent   -t (1 - s0)^2/(2 M2)                            ln of the lower-tail bound
taylor_bound      1 + m (m + 1) s0^(-m-2) (M2 - 1)/(2 t)          E of the dominating quadratic
tail_integral     (2M2/t)(exp(-t g^2/(2 M2)) - exp(-t/(2 M2)))   ∫_g^1 2u e^{-t u²/(2 M2)} du
================  ==============================================  =====================================
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/allocation_add_taylor.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import functools
from collections.abc import Mapping

import sympy as sp

from proofs._common import Delta, DerivationFailed, merge_claims, record_check, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

#: m = α − 1, the cut s0, the step count t, the second moment M2, a moment order c, the loss y.
m, s0, t, M2, c, lam, g, u = sp.symbols("m s0 t M2 c lam g u", positive=True)
y, s = sp.symbols("y s", real=True)

EXPORT_SYMBOLS = {
    "second_moment": ("Delta", "sigma"),
    "negative_moment": ("Delta", "c", "sigma"),
    "maurer_exponent": ("M2", "s0", "t"),
    "taylor_bound": ("M2", "m", "s0", "t"),
    "tail_integral": ("M2", "g", "t"),
}


def claims() -> dict[str, sp.Expr]:
    return {
        "second_moment": sp.exp(Delta**2 / sigma**2),
        "negative_moment": sp.exp(c * (c + 1) * Delta**2 / (2 * sigma**2)),
        "maurer_exponent": -t * (1 - s0) ** 2 / (2 * M2),
        "taylor_bound": 1 + m * (m + 1) * s0 ** (-m - 2) * (M2 - 1) / (2 * t),
        "tail_integral": (2 * M2 / t) * (sp.exp(-t * g**2 / (2 * M2)) - sp.exp(-t / (2 * M2))),
    }


def _gaussian_moment(power: sp.Expr) -> sp.Expr:
    """E_Q[(P/Q)^power] for Q = N(0, σ²), P = N(Δ, σ²), by integration."""
    x = sp.Symbol("x", real=True)
    ratio_log = (2 * x * Delta - Delta**2) / (2 * sigma**2)
    q = sp.exp(-(x**2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))
    return sp.simplify(sp.integrate(sp.exp(power * ratio_log) * q, (x, -sp.oo, sp.oo), conds="none"))


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    phi = s ** (-m)
    # Taylor data at 1 and the remainder's coefficient
    require_equal(phi.subs(s, 1), 1, "phi(1) = 1")
    require_equal(sp.diff(phi, s).subs(s, 1), -m, "phi'(1) = -m")
    require_equal(sp.diff(phi, s, 2), m * (m + 1) * s ** (-m - 2), "phi'' = m(m+1) s^(-m-2)")
    # the quadratic is non-negative: discriminant m^2 - 4K = m^2 - 2m(m+1)s0^(-m-2) <= -m(m+2) < 0,
    # because s0^(-m-2) >= 1 for s0 in (0, 1]
    disc_at_one = (m**2 - 2 * m * (m + 1) * s0 ** (-m - 2)).subs(s0, 1)
    require_equal(disc_at_one, -m * (m + 2), "discriminant at s0 = 1")
    if not sp.diff(m**2 - 2 * m * (m + 1) * s0 ** (-m - 2), s0).is_positive:
        raise DerivationFailed("discriminant must increase in s0 (so it is <= its value at s0 = 1)")
    record_check("symbolic")
    # expectation of the quadratic: E[S] = 1, E[(S - 1)^2] = (M2 - 1)/t for the mean of t iid draws
    x1, x2 = sp.symbols("x1 x2", positive=True)
    mean2 = (x1 + x2) / 2  # t = 2 instance of the variance identity, moments substituted below
    second = sp.expand((mean2 - 1) ** 2)
    moment = {0: sp.Integer(1), 1: sp.Integer(1), 2: M2}  # E[r^j] of independent draws
    poly = sp.Poly(second, x1, x2)
    e_second = sum(coef * moment[a] * moment[b] for (a, b), coef in zip(poly.monoms(), poly.coeffs()))
    require_equal(e_second, (M2 - 1) / 2, "E[(S - 1)^2] = (M2 - 1)/t at t = 2")
    K = m * (m + 1) * s0 ** (-m - 2) / 2
    quad_mean = 1 + K * (M2 - 1) / t  # the linear term has mean 0 since E[S] = 1
    # Maurer: g(y) = 1 - y + y^2/2 - e^{-y} has g(0) = 0, g'(0) = 0, g'' = 1 - e^{-y} >= 0 on y >= 0
    gap_fn = 1 - y + y**2 / 2 - sp.exp(-y)
    require_equal(gap_fn.subs(y, 0), 0, "g(0) = 0")
    require_equal(sp.diff(gap_fn, y).subs(y, 0), 0, "g'(0) = 0")
    require_equal(sp.diff(gap_fn, y, 2), 1 - sp.exp(-y), "g'' = 1 - e^{-y}")
    chernoff = lam * t * (s0 - 1) + t * lam**2 * M2 / 2
    best = sp.solve(sp.diff(chernoff, lam), lam)
    if best != [(1 - s0) / M2]:
        raise DerivationFailed(f"Chernoff optimum {best}")
    # telescoping of the binned coefficient, J = 3 bins s0 < s1 < s2 < s3 = 1, S in each bin and >= 1
    ks = sp.symbols("K0:4", positive=True)  # K(s0), K(s1), K(s2), K(1)
    for below in range(4):  # S in [s_below, s_{below+1}) (below = 3: S >= 1); 1{S < s_{j+1}} = [j >= below]
        tele = ks[3] + sum((ks[j] - ks[j + 1]) for j in range(3) if j >= below)
        require_equal(tele, ks[below], f"telescoped coefficient on bin {below}")
    return {
        "tail_integral": sp.integrate(2 * u * sp.exp(-t * u**2 / (2 * M2)), (u, g, 1)),
        "second_moment": _gaussian_moment(sp.Integer(2)),
        "negative_moment": _gaussian_moment(-c),
        "maurer_exponent": sp.simplify(chernoff.subs(lam, best[0])),
        "taylor_bound": quad_mean,
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check the claims (``claimed`` replaces entries of :func:`claims`) against the derivations;
    returns the verified expressions, raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    got = _derived()
    for name in EXPORT_SYMBOLS:
        require_equal(got[name], claim[name], name)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for name, expr in derive().items():
        print(f"{name} = {expr}")
