"""The two constants in which verifier departs from the printed statements of Feldman & Shenfeld
2025 (arXiv 2502.08202): sinh(eps0) for cosh(eps0) in Thm 4.1 (truncated Poisson) and tau for
2 tau in Thm 4.2 (recursive). Both are derived here so that a reader can check them line by line.

1. Thm 4.1, the Azuma-Hoeffding step. For an eps0-DP step the privacy loss ell lies in
   [-eps0, eps0], so the increment D = 1 - e^ell of the proof's martingale lies in
   [1 - e^eps0, 1 - e^-eps0], an interval of width e^eps0 - e^-eps0 = 2 sinh(eps0) (the paper writes
   2 cosh(eps0), valid because sinh < cosh, but looser). The maximal Azuma-Hoeffding inequality for
   increments in an interval of width c gives P(max_i S_i >= x) <= exp(-2 x^2 / (n c^2)); with
   n = t', x = t' gamma and c = 2 sinh(eps0) the exponent is -t' gamma^2 / (2 sinh(eps0)^2), and it
   equals log(delta_az) exactly at

       gamma = sinh(eps0) sqrt(2 log(1/delta_az) / t')                                   (export gamma)

   The script derives the width symbolically, solves the exponent equation for gamma, checks the
   solution, and checks sinh(eps0) < cosh(eps0) (cosh^2 - sinh^2 = 1), so the printed constant is
   the looser one.

2. Thm 4.2, the tail constant. For S = {ell_{P,Q} > 2 eps'} one has Q(y) <= e^{-2 eps'} P(y) on S,
   hence for kappa = e^{eps'}:  H_kappa(P||Q) >= P(S) - kappa Q(S) >= P(S)(1 - e^{-eps'}), i.e.

       P(S) <= H_{e^{eps'}}(P||Q) / (1 - e^{-eps'})                                   (export tail)

   (Kasiviswanathan-Smith Claim B.10, which the written proof cites, has a factor 2 there.) With
   the proof's change of measure, a factor 1/(t eta) = e^{-2 eps'} for REMOVE and none for ADD,
   the coefficients are

       tau = e^{-2 eps'} / (1 - e^{-eps'}) = 1 / (e^{eps'} (e^{eps'} - 1))              (export tau)
       tau e^{2 eps'} = 1 / (1 - e^{-eps'})                                         (export tau_add)

   The script checks the per-atom inequality symbolically (on S, p = e^{2 eps'} q + s with s > 0),
   the algebra of tau, and the tail inequality exactly on 400 random finite pairs with rational
   masses and kappa = e^{eps'} rational (fractions.Fraction), including pairs where it is tight.

Typos found: the two constants above (notes/random-allocation.md section 6, items 11 and 12).

Exports of :func:`derive`:

=========  =====================================================  ==========================
name       expression                                             free symbols
=========  =====================================================  ==========================
gamma      sinh(epsilon0) sqrt(2 log(1/delta_az) / t)             delta_az, epsilon0, t
tail       H / (1 - exp(-x))   (upper bound on P(ell > 2x))       H, x
tau        1 / (exp(x) (exp(x) - 1))                              x
tau_add    1 / (1 - exp(-x))                                      x
=========  =====================================================  ==========================
x stands for eps' > 0, H for H_{e^x}(P||Q) >= 0, t for t' >= 1, delta_az in (0, 1).
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/allocation_theorem_constants.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, METHOD_COUNTS, epsilon0, merge_claims, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "x", "t", "delta_az", "H"]

x = sp.Symbol("x", positive=True)  # eps'
t = sp.Symbol("t", positive=True)  # t'
delta_az = sp.Symbol("delta_az", positive=True)
H = sp.Symbol("H", nonnegative=True)

EXPORT_SYMBOLS = {
    "gamma": ("delta_az", "epsilon0", "t"),
    "tail": ("H", "x"),
    "tau": ("x",),
    "tau_add": ("x",),
}


def claims() -> dict[str, sp.Expr]:
    return {
        "gamma": sp.sinh(epsilon0) * sp.sqrt(2 * sp.log(1 / delta_az) / t),
        "tail": H / (1 - sp.exp(-x)),
        "tau": 1 / (sp.exp(x) * (sp.exp(x) - 1)),
        "tau_add": 1 / (1 - sp.exp(-x)),
    }


POINTS = [{epsilon0: e, t: n, delta_az: d, x: xx, H: h}
          for e in (sp.Rational(1, 10), 1, 3) for n in (2, 100) for d in (sp.Rational(1, 10**6), sp.Rational(1, 3))
          for xx in (sp.Rational(1, 5), 2) for h in (0, sp.Rational(1, 7))]  # fmt: skip


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    # 1. the width of the increment interval, and gamma from the Azuma exponent
    width = (1 - sp.exp(-epsilon0)) - (1 - sp.exp(epsilon0))
    require_equal(width, 2 * sp.sinh(epsilon0), "width of [1 - e^eps0, 1 - e^-eps0] is 2 sinh(eps0)")
    require_equal(sp.cosh(epsilon0) ** 2 - sp.sinh(epsilon0) ** 2, 1, "cosh^2 - sinh^2 = 1: sinh < cosh, the paper's constant is looser")
    g = sp.Symbol("g", positive=True)
    exponent = -2 * (t * g) ** 2 / (t * width**2)  # Azuma-Hoeffding: -2 x^2 / (n c^2), x = t g, n = t
    solutions = sp.solve(sp.Eq(exponent, sp.log(delta_az)), g)
    if len(solutions) != 1:
        raise DerivationFailed(f"gamma: expected one positive solution of the Azuma exponent equation, got {solutions}")
    gamma = solutions[0]
    # 2. tau: the change of measure e^{-2x} times the tail constant 1/(1 - e^{-x})
    tau = sp.exp(-2 * x) / (1 - sp.exp(-x))
    return {"gamma": gamma, "tail": H / (1 - sp.exp(-x)), "tau": tau, "tau_add": sp.exp(2 * x) * tau}


def _atom_inequality() -> None:
    """On S (p = e^{2x} q + s, s > 0, q >= 0): p - e^x q >= p (1 - e^{-x}), i.e. the difference
    e^{-x} p - e^x q = e^{-x} s >= 0 is a nonnegative expression (proved, not sampled)."""
    q, s = sp.Symbol("q", nonnegative=True), sp.Symbol("s", positive=True)
    p = sp.exp(2 * x) * q + s
    gap = sp.simplify((p - sp.exp(x) * q) - p * (1 - sp.exp(-x)))
    require_equal(gap, s * sp.exp(-x), "on S: (p - e^x q) - p (1 - e^-x) = s e^-x")
    if not gap.is_nonnegative:
        raise DerivationFailed(f"the per-atom gap {gap} is not provably nonnegative")


def _random_pairs(seed: int = 19, count: int = 400) -> None:
    """P(S) <= H_kappa(P||Q) / (1 - 1/kappa) with S = {P > kappa^2 Q}, exactly, on random pairs with
    rational masses (zeros included: Q = 0 atoms are in S) and rational kappa > 1."""
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(1, 6)
        p = [Fraction(rng.randint(0, 9)) for _ in range(n)]
        q = [Fraction(rng.randint(0, 9)) for _ in range(n)]
        if sum(p) == 0 or sum(q) == 0:
            continue
        p = [v / sum(p) for v in p]
        q = [v / sum(q) for v in q]
        kappa = Fraction(rng.randint(11, 40), 10)
        hockey = sum(max(Fraction(0), pi - kappa * qi) for pi, qi in zip(p, q))
        p_s = sum(pi for pi, qi in zip(p, q) if pi > kappa * kappa * qi)
        bound = hockey / (1 - 1 / kappa)
        if p_s > bound:
            raise DerivationFailed(f"tail inequality fails: P={p}, Q={q}, kappa={kappa}: P(S)={p_s} > {bound}")
    METHOD_COUNTS["points"] += 1


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive the constants and check the claims (``claimed`` replaces entries of :func:`claims`).
    Returns the verified expressions; raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    got = _derived()
    _atom_inequality()
    _random_pairs()
    for name in EXPORT_SYMBOLS:
        require_equal(got[name], claim[name], f"allocation theorem constant {name}", POINTS)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
