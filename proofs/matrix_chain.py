"""The facts behind the chain dynamic programme on the Lemma 2.8 pair (src/verifier/matrix/chain.py,
method "matrix-chain", and the kernel src/fast/chain_dp.pyx).

Setting (units of sigma): Q = N(0, I), P = (1/b) sum_i N(mu_i, I), Gram matrix Gamma, scores
s_i = mu_i . x (under Q jointly Gaussian with covariance Gamma), S = p/q = (1/b) sum_i exp(s_i - Gamma_ii/2).
delta_remove(eps) = E_Q[(S - e^eps)_+] and delta_add(eps) = E_Q[(1 - e^eps S)_+] (the definitions
of the hockey-stick divergence with dP = S dQ).

1. Representation. If Gamma_ij = 0 at cyclic distance >= 2, s_i = alpha_i w_i + beta_i w_{i+1} +
   gamma_i u_i (indices mod b, w and u independent standard normals) has covariance Gamma exactly when
   Gamma_ii = alpha_i^2 + beta_i^2 + gamma_i^2 and Gamma_{i,i+1} = beta_i alpha_{i+1}: checked entry by
   entry for b = 4 with free coefficients (every other entry is 0).

2. Convexity (why spreads give UPPER and contractions LOWER bounds). Remove: the integrand is
   (S - e^eps)_+, a convex non-decreasing function of S, and S is a sum of exponentials of affine
   functions of each variable (second derivative kappa^2 e^{kappa w} >= 0), so the integrand is convex
   in each variable. Add: put v = e^{kappa w} with kappa the variable's largest coefficient; the sum T
   is then A v^r + B v + C with r = (other coefficient)/kappa in [0, 1] and A, B, C >= 0, whose second
   derivative in v is ``concavity`` = A r (r - 1) v^(r - 2) <= 0: T is concave in v, and
   (1 - e^eps T/b)_+ (convex, non-increasing) of a concave function is convex in v. A variable's law
   replaced by one larger in convex order (same mass and mean of the transformed variable, spread
   out) raises the expectation of a function convex in it (Jensen on each cell); the others fixed and
   independent, one variable at a time.

3. Cell moments. For a cell [a, b_end] of N(0, 1): ``cell_integral`` = int_a^b_end e^{kappa w} phi(w) dw
   = e^{kappa^2/2} (Phi(b_end - kappa) - Phi(a - kappa)) (its b_end-derivative is e^{kappa b_end} phi(b_end),
   and it vanishes at b_end = a).

4. Spread. A cell's mass m with int f dPhi = I (f = w or e^{kappa w}) moved to its ends a, b_end:
   ``upper_share`` = (I - m f_a)/(f_b - f_a) to b_end and m - upper_share to a keeps the mass and
   I = (m - upper_share) f_a + upper_share f_b.

5. Tails (remove, UPPER). E_Q[S 1_A] = (1/b) sum_i E_Q[e^{s_i - Gamma_ii/2} 1_A] and the tilt by
   e^{c w - c^2/2} shifts a standard normal by its coefficient c in s_i: ``tilt_tail`` =
   int_R^oo e^{c w - c^2/2} phi(w) dw = Phi(c - R).

Exports of :func:`derive`:

=============  ==========================================  =====================================
name           expression                                  meaning
=============  ==========================================  =====================================
cell_integral  e^{kappa^2/2}(Phi(b_end-kappa)-Phi(a-kappa))  int over the cell of e^{kappa w} dPhi
upper_share    (I - m f_a)/(f_b - f_a)                       spread mass put on the cell's top end
tilt_tail      Phi(c - R)                                    tilted normal mass beyond R
concavity      A r (r - 1) v^(r - 2)                         d^2/dv^2 of A v^r + B v + C
=============  ==========================================  =====================================
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/matrix_chain.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import functools
from collections.abc import Mapping

import sympy as sp

from proofs._common import Phi, merge_claims, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

kappa, c, R = sp.symbols("kappa c R", positive=True)
a_end, b_end, w = sp.symbols("a b_end w", real=True)
I, m, f_a, f_b = sp.symbols("I m f_a f_b", positive=True)
A, B, C, r, v = sp.symbols("A B C r v", positive=True)

EXPORT_SYMBOLS = {
    "cell_integral": ("a", "b_end", "kappa"),
    "upper_share": ("I", "f_a", "f_b", "m"),
    "tilt_tail": ("R", "c"),
    "concavity": ("A", "r", "v"),
}


def claims() -> dict[str, sp.Expr]:
    return {
        "cell_integral": sp.exp(kappa**2 / 2) * (Phi(b_end - kappa) - Phi(a_end - kappa)),
        "upper_share": (I - m * f_a) / (f_b - f_a),
        "tilt_tail": Phi(c - R),
        "concavity": A * r * (r - 1) * v ** (r - 2),
    }


def _phi(x: sp.Expr) -> sp.Expr:
    return sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi)


@functools.lru_cache(maxsize=None)
def _covariance_checks() -> int:
    """Item 1 for b = 4: the covariance of the representation, entry by entry."""
    b = 4
    al, be, ga = sp.symbols("alpha0:4", positive=True), sp.symbols("beta0:4", positive=True), sp.symbols("gamma0:4", positive=True)
    # s = M (w_0..w_3, u_0..u_3); Cov = M M^T
    rows = []
    for i in range(b):
        row = [0] * (2 * b)
        row[i] += al[i]
        row[(i + 1) % b] += be[i]
        row[b + i] += ga[i]
        rows.append(row)
    mat = sp.Matrix(rows)
    cov = mat * mat.T
    done = 0
    for i in range(b):
        for j in range(b):
            if i == j:
                want = al[i] ** 2 + be[i] ** 2 + ga[i] ** 2
            elif j == (i + 1) % b:
                want = be[i] * al[j]
            elif i == (j + 1) % b:
                want = be[j] * al[i]
            else:
                want = 0
            require_equal(cov[i, j], want, f"covariance entry ({i}, {j}) of the chain representation")
            done += 1
    return done


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check the claims (``claimed`` replaces entries of :func:`claims`) against the derivations;
    returns the verified expressions, raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    _covariance_checks()
    points = [{kappa: k_, a_end: lo, b_end: hi} for k_ in (sp.Rational(1, 3), 2) for lo, hi in ((-1, sp.Rational(1, 2)), (2, 3))]
    require_equal(sp.diff(claim["cell_integral"], b_end), sp.exp(kappa * b_end) * _phi(b_end), "d/db of the cell integral", points)
    require_equal(claim["cell_integral"].subs(b_end, a_end), 0, "an empty cell has no integral", points)
    share = claim["upper_share"]
    require_equal((m - share) * f_a + share * f_b, I, "the spread keeps the cell's integral of f")
    tail_points = [{c: cc, R: rr} for cc in (sp.Rational(1, 2), 2) for rr in (1, 3)]
    require_equal(sp.diff(claim["tilt_tail"], R), -sp.exp(c * R - c**2 / 2) * _phi(R), "d/dR of the tilted tail", tail_points)
    require_equal(sp.limit(claim["tilt_tail"], R, sp.oo), 0, "the tilted tail vanishes at infinity")
    require_equal(sp.diff(A * v**r + B * v + C, v, 2), claim["concavity"], "second derivative of the sum in v")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for name, expr in derive().items():
        print(f"{name} = {expr}")
