"""Duality of the two directions of the hockey-stick divergence, for every real epsilon.

Result: for probability distributions P, Q on a finite space and every real epsilon,

    H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^{-eps}}(Q||P),

where H_kappa(P||Q) = sup_S P(S) - kappa Q(S) = sum_y max(0, P(y) - kappa Q(y)). In the notes'
notation: delta_{P||Q}(eps) = 1 - e^eps + e^eps delta_{Q||P}(-eps).

Source: notes/composition-and-subsampling.md section 11.1 H6 and section 13 D1 (derived there by
complementing S; "verified on 2e4 random discrete pairs", not in Steinke 2022).

Derivation, three layers:

1. Per atom, with kappa = e^eps > 0 and masses p, q >= 0, the identity
   max(0, p - kappa q) - kappa max(0, q - p/kappa) = p - kappa q
   is proved symbolically in each of the three cases p - kappa q > 0, = 0, < 0 (writing
   p = kappa q + s t with t > 0 a symbol and s in {+1, 0, -1}, so sympy resolves every Max).
   Summing over atoms gives H_kappa(P||Q) - kappa H_{1/kappa}(Q||P) = P(space) - kappa Q(space),
   which is 1 - kappa for probability distributions. This is a proof for any finite space.
2. For a 3-point space with symbolic masses, all 3^3 sign patterns of (p_i - kappa q_i) are
   checked the same way on the full sums, with the normalization P = Q = 1 applied at the end.
3. Exact rational check: 600 random pairs on spaces of 1 to 7 points (masses exact rationals,
   including zero masses, i.e. pairs without mutual absolute continuity) and kappa = e^eps an exact
   rational in (0, 8], so both sides are rationals and compared exactly (fractions.Fraction).

Typos found: none.

Exports of :func:`derive` (free symbols from proofs._common, plus the masses and H_QP):

=========  =========================================================  ==============================
name       expression                                                 free symbols
=========  =========================================================  ==============================
duality    1 - exp(epsilon) + exp(epsilon) * H_QP                     epsilon, H_QP
             (H_QP stands for delta_{Q||P}(-epsilon); the value is
             delta_{P||Q}(epsilon))
delta_3pt  sum_{i<3} Max(0, p_i - exp(eps) q_i), p2 = 1 - p0 - p1,    epsilon, p0, p1, q0, q1
             q2 = 1 - q0 - q1   (delta_{P||Q}(eps) on 3 points)
delta_3pt_QP  sum_{i<3} Max(0, q_i - exp(eps) p_i)                    epsilon, p0, p1, q0, q1
=========  =========================================================  ==============================
The mass symbols p0, p1, q0, q1 are nonnegative; H_QP is real. They are :data:`H_QP`,
:data:`P_MASSES` and :data:`Q_MASSES` of this module.
"""

from __future__ import annotations

import functools
import itertools
import random
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/hockey_stick_duality.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    DerivationFailed,
    epsilon,
    merge_claims,
    record_check,
    require_equal,
)

__all__ = ["EXPORT_SYMBOLS", "H_QP", "P_MASSES", "Q_MASSES", "claims", "derive"]

EXPORT_SYMBOLS = {
    "duality": ("H_QP", "epsilon"),
    "delta_3pt": ("epsilon", "p0", "p1", "q0", "q1"),
    "delta_3pt_QP": ("epsilon", "p0", "p1", "q0", "q1"),
}

#: Stand-in for delta_{Q||P}(-epsilon) in the exported duality expression.
H_QP = sp.Symbol("H_QP", real=True)
#: Free masses of the exported 3-point pair; the third mass is 1 minus the other two.
P_MASSES = sp.symbols("p0 p1", nonnegative=True)
Q_MASSES = sp.symbols("q0 q1", nonnegative=True)

_kappa = sp.Symbol("kappa", positive=True)  # e^epsilon
_N_RANDOM_PAIRS = 600
_SEED = 20221027


def claims() -> dict[str, sp.Expr]:
    """Notes H6/D1, written with H_QP = delta_{Q||P}(-eps)."""
    p = [*P_MASSES, 1 - sum(P_MASSES)]
    q = [*Q_MASSES, 1 - sum(Q_MASSES)]
    e = sp.exp(epsilon)
    return {
        "duality": 1 - e + e * H_QP,
        "delta_3pt": sp.Add(*[sp.Max(0, pi - e * qi) for pi, qi in zip(p, q)]),
        "delta_3pt_QP": sp.Add(*[sp.Max(0, qi - e * pi) for pi, qi in zip(p, q)]),
    }


def _at(expr: sp.Expr, kappa: sp.Expr, h_qp: sp.Expr | None = None) -> sp.Expr:
    """``expr`` at e^epsilon = kappa (epsilon = log kappa) and H_QP = h_qp."""
    out = expr.subs(epsilon, sp.log(kappa))
    return out if h_qp is None else out.subs(H_QP, h_qp)


def _check_atom_identity() -> None:
    """Layer 1: max(0, p - k q) - k max(0, q - p/k) = p - k q in each sign case (q > 0 or q = 0)."""
    q_pos, t = sp.symbols("q t", positive=True)
    for q in (q_pos, sp.Integer(0)):
        for s in (1, 0, -1):
            p = _kappa * q + s * t
            if q == 0 and s < 0:
                continue  # p >= 0
            lhs = sp.Max(0, sp.expand(p - _kappa * q)) - _kappa * sp.Max(
                0, sp.expand(q - p / _kappa)
            )
            if lhs.has(sp.Max):
                raise DerivationFailed(f"duality atom case q={q}, s={s}: sympy left a Max in {lhs}")
            if sp.simplify(lhs - (p - _kappa * q)) != 0:
                raise DerivationFailed(f"duality atom identity fails for q={q}, s={s}: {lhs}")


def _derived_rhs_three_points() -> sp.Expr:
    """Layer 2: on 3 points, in all 27 sign patterns of p_i - kappa q_i,
    H_k(P||Q) = (P(space) - k Q(space)) + k H_{1/k}(Q||P) identically in the symbolic masses.
    Returns that right-hand side for probability distributions, as a function of eps and H_QP."""
    qs = sp.symbols("qa qb qc", positive=True)
    ts = sp.symbols("ta tb tc", positive=True)
    mass_p_sym, mass_q_sym = sp.symbols("mass_P mass_Q", positive=True)
    for signs in itertools.product((1, 0, -1), repeat=3):
        ps = [_kappa * qi + si * ti for qi, si, ti in zip(qs, signs, ts)]
        h_pq = sp.Add(*[sp.Max(0, sp.expand(pi - _kappa * qi)) for pi, qi in zip(ps, qs)])
        # H_{1/kappa}(Q||P):
        h_qp = sp.Add(*[sp.Max(0, sp.expand(qi - pi / _kappa)) for pi, qi in zip(ps, qs)])
        if h_pq.has(sp.Max) or h_qp.has(sp.Max):
            raise DerivationFailed(f"duality 3-point case {signs}: sympy left a Max")
        rhs = (mass_p_sym - _kappa * mass_q_sym + _kappa * H_QP).subs(
            {mass_p_sym: sp.Add(*ps), mass_q_sym: sp.Add(*qs), H_QP: h_qp}
        )
        if sp.simplify(h_pq - rhs) != 0:
            raise DerivationFailed(f"duality 3-point identity fails in the sign case {signs}")
    # Probability distributions: P(space) = Q(space) = 1, kappa = e^eps.
    general = mass_p_sym - _kappa * mass_q_sym + _kappa * H_QP
    return general.subs({mass_p_sym: 1, mass_q_sym: 1, _kappa: sp.exp(epsilon)})


def _h(p: list[Fraction], q: list[Fraction], kappa: Fraction) -> Fraction:
    return sum((max(Fraction(0), pi - kappa * qi) for pi, qi in zip(p, q)), Fraction(0))


def _random_distribution(rng: random.Random, n: int) -> list[Fraction]:
    weights = [Fraction(rng.choice((0, 0, 1, 2, 3, 5, 8, 13, 100))) for _ in range(n)]
    if sum(weights) == 0:
        weights[rng.randrange(n)] = Fraction(1)
    total = sum(weights)
    return [w / total for w in weights]


def _check_rational_points(claim: sp.Expr) -> int:
    """Layer 3: exact rational pairs and kappa; returns the number of points checked."""
    rng = random.Random(_SEED)
    kappas = [Fraction(1, 8), Fraction(1, 3), Fraction(1, 2), Fraction(9, 10), Fraction(1),
              Fraction(11, 10), Fraction(2), Fraction(7, 2), Fraction(8)]
    for trial in range(_N_RANDOM_PAIRS):
        n = 1 + trial % 7
        p = _random_distribution(rng, n)
        q = _random_distribution(rng, n)
        kappa = kappas[trial % len(kappas)] if trial % 2 else Fraction(rng.randint(1, 64), 8)
        lhs = _h(p, q, kappa)
        h_qp = _h(q, p, 1 / kappa)
        value = _at(claim, _rational(kappa), _rational(h_qp))
        if not _same_rational(value, lhs):
            raise DerivationFailed(
                f"duality fails exactly at P={p}, Q={q}, e^eps={kappa}: "
                f"H(P||Q) = {lhs}, claimed right-hand side = {value}"
            )
    record_check("points")
    return _N_RANDOM_PAIRS


def _rational(x: Fraction) -> sp.Rational:
    return sp.Rational(x.numerator, x.denominator)


def _same_rational(value: sp.Expr, want: Fraction) -> bool:
    """Exact comparison; ``value`` should be a Rational (simplified if it is not yet one)."""
    if not isinstance(value, sp.Rational):
        value = sp.simplify(value)
    return value == _rational(want)


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    _check_atom_identity()
    return {"duality": _derived_rhs_three_points()}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Prove the duality (layers 1-3 of the module docstring) and check the exported 3-point
    expressions against the definition (``claimed`` replaces entries of :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    require_equal(got["duality"], claim["duality"], "hockey-stick duality H6 (3-point proof)")
    _check_rational_points(claim["duality"])
    # The exported 3-point forms against the definition sum_y max(0, P(y) - e^eps Q(y)),
    # at exact rational masses and e^eps, where every Max is decided.
    rng = random.Random(_SEED + 1)
    for _ in range(60):
        p = _random_distribution(rng, 3)
        q = _random_distribution(rng, 3)
        kappa = Fraction(rng.randint(1, 40), 10)
        subs = {s: _rational(v) for s, v in zip(P_MASSES, p)}
        subs.update({s: _rational(v) for s, v in zip(Q_MASSES, q)})
        for name, first, second in (("delta_3pt", p, q), ("delta_3pt_QP", q, p)):
            value = _at(claim[name], _rational(kappa)).subs(subs)
            want = _h(first, second, kappa)
            if not _same_rational(value, want):
                raise DerivationFailed(
                    f"{name} at P={p}, Q={q}, e^eps={kappa}: claimed {value}, definition {want}"
                )
    record_check("points")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
