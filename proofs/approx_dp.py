"""Hockey-stick curve of the (epsilon0, delta0)-randomized-response pair, and of its k-fold product.

The pair (Steinke 2022, arXiv 2210.00597, Cor 24; verifier.pairs.ApproxDP), with
E = e^eps0 and outcomes (0, bot), (0, top), (1, top), (1, bot):

    P = (delta0, (1 - delta0) E/(1 + E), (1 - delta0)/(1 + E), 0),
    Q = (0, (1 - delta0)/(1 + E), (1 - delta0) E/(1 + E), delta0).

For every real epsilon,

    delta(epsilon) = 1 - (1 - delta0) e^eps                          for eps < -eps0,
                     delta0 + (1 - delta0)(E - e^eps)/(1 + E)          for -eps0 <= eps < eps0,
                     delta0                                            for eps >= eps0,

the same for Q||P (relabelling swaps P and Q), and the total variation is
tv = delta(0) = delta0 + (1 - delta0)(E - 1)/(E + 1). At delta0 -> 0 this is binary randomized
response (proofs/randomized_response.py), which is checked.

Derivation: delta(eps) = sum_y (P(y) - e^eps Q(y))_+ from the definition (Prop 7's maximizing set).
The two outcomes with Q > 0 < P go through proofs._common.discrete_hockey_stick; the outcome with
Q = 0 contributes P = delta0 for every eps (infinite privacy loss), the one with P = 0 contributes
(0 - e^eps delta0)_+ = 0. The Piecewise result is compared with the claim interval by interval
between the breakpoints -eps0 and eps0, and at them.

Composition (not exported; a check that the PLD engine's product of this pair is the optimal
composition): for k = 2 and 3, the hockey-stick divergence of the k-fold product pair, summed over
all 4^k product outcomes from the definition, equals the Kairouz-Oh-Viswanath closed form as
rearranged in notes/composition-and-subsampling.md section 7 (D9),

    delta_k(eps) = 1 - (1 - delta0)^k + (1 - delta0)^k (1 + E)^-k
                   * sum_{l=0}^{k} C(k, l) E^l max(0, 1 - e^{eps - (2l - k) eps0}),

at exact rational points (eps0, delta0, eps) with 60-digit evaluation.

Typos found: none (the notes state the KOV condition in the source's "iff" form; D9 is their
rearrangement, confirmed here).

Exports of :func:`derive` (free symbols from proofs._common):

============  ==============================================================  =========================
name          expression                                                      free symbols
============  ==============================================================  =========================
delta         Piecewise((1 - (1 - delta0) exp(eps), eps < -eps0),             epsilon, epsilon0, delta0
                        (delta0 + (1 - delta0)(E - exp(eps))/(1 + E),
                         eps < eps0), (delta0, True))        [P||Q]
delta_QP      same as delta                                                   epsilon, epsilon0, delta0
tv            delta0 + (1 - delta0)(E - 1)/(E + 1)                            epsilon0, delta0
============  ==============================================================  =========================
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/approx_dp.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    POINT_ATOL,
    DerivationFailed,
    delta0,
    discrete_hockey_stick,
    epsilon,
    epsilon0,
    merge_claims,
    record_check,
    require_equal,
    require_piecewise_equal,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "kov_delta"]

EXPORT_SYMBOLS = {
    "delta": ("epsilon", "epsilon0", "delta0"),
    "delta_QP": ("epsilon", "epsilon0", "delta0"),
    "tv": ("epsilon0", "delta0"),
}

_E = sp.exp(epsilon0)
#: Significant digits of the numeric composition checks (as proofs._common's point checks).
_DIGITS = 60


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    delta = sp.Piecewise(
        (1 - (1 - delta0) * sp.exp(epsilon), epsilon < -epsilon0),
        (delta0 + (1 - delta0) * (_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0),
        (delta0, True),
    )
    return {"delta": delta, "delta_QP": delta, "tv": delta0 + (1 - delta0) * (_E - 1) / (_E + 1)}


def _masses() -> tuple[list[sp.Expr], list[sp.Expr]]:
    """(P, Q) on the outcomes (0, bot), (0, top), (1, top), (1, bot)."""
    top, bottom = (1 - delta0) * _E / (1 + _E), (1 - delta0) / (1 + _E)
    return [delta0, top, bottom, sp.Integer(0)], [sp.Integer(0), bottom, top, delta0]


def _hockey_stick(p: list[sp.Expr], q: list[sp.Expr]) -> sp.Expr:
    """sum_y (P(y) - e^eps Q(y))_+: outcomes with both masses positive by their loss, the Q = 0
    outcome in full, the P = 0 outcome not at all."""
    finite = [(1, pi, qi) for pi, qi in zip(p, q) if pi != 0 and qi != 0]
    infinite = sp.Add(*[pi for pi, qi in zip(p, q) if qi == 0])
    return discrete_hockey_stick(finite, epsilon) + infinite


def kov_delta(kk: int, e0: sp.Expr, d0: sp.Expr, eps: sp.Expr) -> sp.Expr:
    """The Kairouz-Oh-Viswanath optimal-composition delta of kk (e0, d0)-DP steps at eps (notes
    section 7, D9)."""
    big = sp.exp(e0)
    tail = sp.Add(
        *[
            sp.binomial(kk, l) * big**l * sp.Max(0, 1 - sp.exp(eps - (2 * l - kk) * e0))
            for l in range(kk + 1)
        ]
    )
    return 1 - (1 - d0) ** kk + (1 - d0) ** kk * tail / (1 + big) ** kk


def _product_delta(kk: int, e0: sp.Expr, d0: sp.Expr, eps: sp.Expr) -> sp.Expr:
    """sup_S P^k(S) - e^eps Q^k(S) over the 4^kk product outcomes, from the definition, with the
    masses evaluated to _DIGITS significant digits (the positive part of a 60-digit number)."""
    p, q = _masses()
    point = {epsilon0: e0, delta0: d0}
    p = [sp.N(m.subs(point), _DIGITS) for m in p]
    q = [sp.N(m.subs(point), _DIGITS) for m in q]
    kappa = sp.N(sp.exp(eps), _DIGITS)
    total = sp.Float(0, _DIGITS)
    for combo in itertools.product(range(4), repeat=kk):
        pk = sp.Mul(*[p[i] for i in combo])
        qk = sp.Mul(*[q[i] for i in combo])
        total += max(sp.Float(0, _DIGITS), pk - kappa * qk)
    return total


def _require_close(derived: sp.Expr, claimed: sp.Expr, what: str) -> None:
    """Two closed numbers (no free symbols) agree to POINT_ATOL at 60 digits; a numeric check of
    exact expressions, counted as a point check (symbolic simplification of sums of Max terms is
    slow and adds nothing at a fully numeric point)."""
    diff = sp.N(derived - claimed, _DIGITS)
    if not diff.is_number or abs(diff) > POINT_ATOL:
        raise DerivationFailed(f"{what}: derived {sp.N(derived, 20)} and claimed {sp.N(claimed, 20)} differ")
    record_check("points")


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p, q = _masses()
    for masses, what in ((p, "P"), (q, "Q")):
        total = sp.simplify(sp.Add(*masses))
        if total != 1:
            raise DerivationFailed(f"(eps0, delta0)-RR: {what} masses sum to {total}, not 1")
    return {"delta": _hockey_stick(p, q), "delta_QP": _hockey_stick(q, p)}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive delta(eps) (every real eps) in both directions and the total variation of the
    (eps0, delta0)-RR pair, check them against the claims (``claimed`` replaces entries of
    :func:`claims`), and check the k-fold product against the KOV closed form for k = 2, 3.

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    e_pts = (-3, sp.Rational(-1, 4), 0, sp.Rational(1, 4), 3)
    e0_pts = (sp.Rational(1, 2), 2)
    d0_pts = (sp.Rational(1, 1000), sp.Rational(1, 3))
    points = [{epsilon: e, epsilon0: e0, delta0: d0} for e in e_pts for e0 in e0_pts for d0 in d0_pts]
    for name in ("delta", "delta_QP"):
        require_piecewise_equal(got[name], claim[name], epsilon, f"(eps0, delta0)-RR {name}", points)
    require_equal(got["delta"].subs(epsilon, 0), claim["tv"], "(eps0, delta0)-RR total variation",
                  [{epsilon0: e0, delta0: d0} for e0 in e0_pts for d0 in d0_pts])
    # delta0 -> 0 is binary randomized response (proofs/randomized_response.py's claim).
    rr = sp.Piecewise(
        (1 - sp.exp(epsilon), epsilon < -epsilon0),
        ((_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0),
        (0, True),
    )
    require_piecewise_equal(claim["delta"].subs(delta0, 0), rr, epsilon,
                            "(eps0, 0)-RR vs binary randomized response",
                            [{epsilon: e, epsilon0: e0} for e in e_pts for e0 in e0_pts])
    # k-fold products against the KOV closed form (breakpoints (2l - k) eps0 included).
    for kk in (2, 3):
        for e0 in (sp.Rational(1, 2), sp.Rational(3, 2)):
            for d0 in (sp.Rational(1, 1000), sp.Rational(1, 10)):
                eps_pts = sorted({sp.Rational(j, 4) * e0 for j in range(-4 * kk - 2, 4 * kk + 3)})
                for eps in eps_pts:
                    _require_close(_product_delta(kk, e0, d0, eps), kov_delta(kk, e0, d0, eps),
                                   f"{kk}-fold (eps0, delta0)-RR vs KOV at eps0={e0}, delta0={d0}, eps={eps}")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
