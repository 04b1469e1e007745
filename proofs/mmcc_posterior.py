"""The posterior bound and the coupling behind MMCC's per-step pairs (verifier.matrix.mmcc).

Setting (units of sigma): y = A B + Z on R^N, A >= 0 lower-triangular, B_j ~ Bernoulli(lam)
independent, Z ~ N(0, I). Fix a step i, an earlier participation j < i, and write v = A_{<i} e_j
(column j on the rows before i) and L = <y_{<i}, v> - |v|^2/2.

1. Posterior bound. For every value b_{<j} of the earlier participations,

       P(B_j = 1 | y_{<i}, B_{<j} = b_{<j}) <= posterior_bound = lam e^L / (lam e^L + 1 - lam).

   Bayes: the posterior odds are lam/(1 - lam) times R = E[phi(y - A(b + e_j))] / E[phi(y - A b)],
   both expectations over B_{>j} with the same weights (B_{>j} is independent of B_{<=j}), so R is
   at most the largest ratio of components, exp(<y - A b, v> - |v|^2/2), and <A b, v> >= 0 because
   A >= 0 and b >= 0: R <= e^L. The posterior odds/(1 + odds) is increasing in the odds, which gives
   the claim (derived symbolically from the odds). Checked by brute force: for small exact-rational
   instances (N = 3 and 4, A >= 0, several lam and y), the exact posterior from the Gaussian
   densities (every pattern of B_{j+1..i-1} enumerated, 40 digits) never exceeds the bound, for
   every i, j < i and b_{<j}.
2. Sequential coupling. If each P(B_j = 1 | B_{<j}) <= p_j (whatever B_{<j}) and c >= 0, then
   sum_j c_j B_j is stochastically smaller than sum_j c_j D_j with D_j ~ Bernoulli(p_j)
   independent (couple B_j = 1{U_j < P(B_j = 1 | B_{<j})} <= D_j = 1{U_j < p_j}). Checked exactly
   on random rational laws: P(sum c B >= t) <= P(sum c D >= t) at every atom t.

Exports of :func:`derive`:

===============  ===============================================  =============
name             expression                                       free symbols
===============  ===============================================  =============
posterior_bound  lam exp(L) / (lam exp(L) + 1 - lam)              lam, L
===============  ===============================================  =============
"""

from __future__ import annotations

import functools
import itertools
import random
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/mmcc_posterior.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "LAM", "L", "claims", "derive", "exact_posterior"]

LAM = sp.Symbol("lam", positive=True)
L = sp.Symbol("L", real=True)

EXPORT_SYMBOLS = {"posterior_bound": ("L", "lam")}

_DIGITS = 40


def claims() -> dict[str, sp.Expr]:
    """The closed form stated in the module docstring."""
    return {"posterior_bound": LAM * sp.exp(L) / (LAM * sp.exp(L) + 1 - LAM)}


def exact_posterior(a: list[list[sp.Rational]], lam: sp.Rational, y: list[sp.Rational], i: int, j: int, before: tuple[int, ...]) -> mpmath.mpf:
    """P(B_j = 1 | y_{<i}, B_{<j} = ``before``) from the Gaussian densities, every pattern of
    B_{j+1..i-1} enumerated (B_{>=i} does not move y_{<i})."""
    mpmath.mp.dps = _DIGITS
    lam_f = mpmath.mpf(lam.p) / lam.q

    def weight(bits: tuple[int, ...]) -> mpmath.mpf:
        full = before + bits  # B_0 .. B_{i-1}
        total = mpmath.mpf(0)
        for r in range(i):
            mean = sum(mpmath.mpf(a[r][c].p) / a[r][c].q * full[c] for c in range(i))
            total += (mpmath.mpf(y[r].p) / y[r].q - mean) ** 2
        prior = mpmath.fprod(lam_f if x else 1 - lam_f for x in bits)
        return prior * mpmath.exp(-total / 2)

    later = i - j - 1
    one = sum(weight((1,) + rest) for rest in itertools.product((0, 1), repeat=later))
    zero = sum(weight((0,) + rest) for rest in itertools.product((0, 1), repeat=later))
    return one / (one + zero)


def _brute_force(bound: sp.Expr) -> None:
    rng = random.Random(28)
    checked = 0
    for n in (3, 4):
        for _ in range(3):
            a = [[sp.Rational(rng.randint(0, 12), 8) if c < r else (sp.Integer(1) if c == r else sp.Integer(0)) for c in range(n)] for r in range(n)]
            for lam in (sp.Rational(1, 10), sp.Rational(1, 2), sp.Rational(9, 10)):
                y = [sp.Rational(rng.randint(-20, 30), 8) for _ in range(n)]
                for i in range(1, n):
                    for j in range(i):
                        v = [a[r][j] for r in range(i)]
                        ell = sum(y[r] * v[r] for r in range(i)) - sum(x * x for x in v) / 2
                        limit = sp.N(bound.subs({LAM: lam, L: ell}), _DIGITS)
                        for before in itertools.product((0, 1), repeat=j):
                            got = exact_posterior(a, lam, y, i, j, before)
                            if got > mpmath.mpf(str(limit)) * (1 + mpmath.mpf(10) ** -30):
                                raise DerivationFailed(f"posterior {got} exceeds the bound {limit} at A={a}, lam={lam}, y={y}, i={i}, j={j}, b={before}")
                            checked += 1
    if checked == 0:
        raise DerivationFailed("posterior bound: no brute-force case was checked")
    record_check("points")


def _coupling() -> None:
    rng = random.Random(7)
    for _ in range(20):
        m = rng.randint(2, 4)
        caps = [sp.Rational(rng.randint(1, 9), 10) for _ in range(m)]
        c = [sp.Rational(rng.randint(0, 6), 3) for _ in range(m)]
        # a correlated law: P(B_j = 1 | B_{<j}) = a random rational <= caps[j], per history
        cond = {h: sp.Rational(rng.randint(0, 10), 10) * caps[len(h)] for j in range(m) for h in itertools.product((0, 1), repeat=j)}
        law_b: dict = {}
        law_d: dict = {}
        for bits in itertools.product((0, 1), repeat=m):
            pb = sp.Integer(1)
            pd = sp.Integer(1)
            for j, x in enumerate(bits):
                r = cond[bits[:j]]
                pb *= r if x else 1 - r
                pd *= caps[j] if x else 1 - caps[j]
            s = sum(cj * x for cj, x in zip(c, bits))
            law_b[s] = law_b.get(s, 0) + pb
            law_d[s] = law_d.get(s, 0) + pd
        for t in law_b:
            if sum(p for s, p in law_b.items() if s >= t) > sum(p for s, p in law_d.items() if s >= t):
                raise DerivationFailed(f"coupling: P(sum c B >= {t}) exceeds the independent sum's (c={c}, caps={caps})")
    record_check("points")


@functools.lru_cache(maxsize=None)
def _posterior_from_odds() -> sp.Expr:
    """odds/(1 + odds) with the odds lam/(1 - lam) times the likelihood-ratio bound e^L."""
    odds = LAM / (1 - LAM) * sp.exp(L)
    return odds / (1 + odds)


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive the posterior bound from the odds; check it and the coupling by brute force."""
    claim = merge_claims(claims(), claimed)
    points = [{LAM: lam, L: ell} for lam in (sp.Rational(1, 10), sp.Rational(1, 2)) for ell in (-3, 0, sp.Rational(5, 2))]
    require_equal(_posterior_from_odds(), claim["posterior_bound"], "MMCC posterior bound", points)
    _brute_force(claim["posterior_bound"])
    _coupling()
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
