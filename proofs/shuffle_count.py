"""The count pair behind verifier.shuffle (shuffled randomized response and FMT's clone reduction).

Count pair: K = V + S with S ~ Bin(N, r), V ~ Bern(a1) under P and Bern(a0) under Q, so
P(K = j) = a1 s(j-1) + (1 - a1) s(j) and Q(K = j) = a0 s(j-1) + (1 - a0) s(j), s the pmf of S. With
u(j) = s(j-1)/s(j) = j (1 - r)/((N - j + 1) r), increasing in j, the ratio P/Q is increasing in u
when a1 > a0, and P(j) > E Q(j) (E = e^eps >= 1, a1 > E a0) iff u(j) > u*,

    u* = (E (1 - a0) - (1 - a1)) / (a1 - E a0),

i.e. iff j > threshold (export ``threshold``, solved here from u(j) = u*):

    threshold = u* r (N + 1) / (1 - r + u* r).

So the optimal event is {K >= t}, t = floor(threshold) + 1, and summing the positive terms gives
(export ``delta_tail``; s_prev = s(t - 1), S_t = Pr[S >= t]; checked against the direct sum
sum_j (P(j) - E Q(j))_+ at exact rational points for N = 0..6 and every eps in a grid)

    delta = (a1 - E a0) s_prev - (E - 1) S_t.

FMT 2021's clone pair given C = c is the count pair with a1 = e^eps0/(e^eps0 + 1), a0 = 1 - a1,
r = 1/2, N = c. Its likelihood ratio at first coordinate a (export ``clone_ratio``, from
Bin(c, 1/2)'s pmf ratio b(a-1)/b(a) = a/(c - a + 1)) is

    clone_ratio = (e^eps0 a + c - a + 1) / (a + e^eps0 (c - a + 1)),

and its threshold is kappa (c + 1) with (export ``clone_kappa``)

    clone_kappa = (e^(eps + eps0) - 1) / ((e^eps0 - 1)(e^eps + 1)),

which is 1/2 at eps = 0 and tends to 1 as eps -> eps0 (where delta reaches 0). The ratio is
(1 + beta x)/(1 - beta x) with beta = (e^eps0 - 1)/(e^eps0 + 1) and x = (2a - c - 1)/(c + 1), so it
lies in [e^-eps0, e^eps0].

Sources: Feldman, McMillan & Talwar 2021 (arXiv:2012.12803), Thm 3.2 for the clone pair; the rest
is derived here. Typos found: none.

Exports of :func:`derive`:

============  =========================================================  =======================
name          expression                                                 free symbols
============  =========================================================  =======================
threshold     u* r (N + 1)/(1 - r + u* r), u* as above                   N, a0, a1, epsilon, r
delta_tail    (a1 - e^eps a0) s_prev - (e^eps - 1) S_t                   S_t, a0, a1, epsilon, s_prev
clone_ratio   (e^eps0 a + c - a + 1)/(a + e^eps0 (c - a + 1))            a, c, epsilon0
clone_kappa   (e^(eps + eps0) - 1)/((e^eps0 - 1)(e^eps + 1))             epsilon, epsilon0
============  =========================================================  =======================
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Mapping

import sympy as sp

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs._common import DerivationFailed, epsilon, epsilon0, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "threshold": ("N", "a0", "a1", "epsilon", "r"),
    "delta_tail": ("S_t", "a0", "a1", "epsilon", "s_prev"),
    "clone_ratio": ("a", "c", "epsilon0"),
    "clone_kappa": ("epsilon", "epsilon0"),
}

A1, A0, R = sp.symbols("a1 a0 r", positive=True)
N = sp.Symbol("N", positive=True)
S_PREV, S_T = sp.symbols("s_prev S_t", nonnegative=True)
A, C = sp.symbols("a c", nonnegative=True)
_E = sp.exp(epsilon)
_E0 = sp.exp(epsilon0)


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    u_star = (_E * (1 - A0) - (1 - A1)) / (A1 - _E * A0)
    return {
        "threshold": u_star * R * (N + 1) / (1 - R + u_star * R),
        "delta_tail": (A1 - _E * A0) * S_PREV - (_E - 1) * S_T,
        "clone_ratio": (_E0 * A + C - A + 1) / (A + _E0 * (C - A + 1)),
        "clone_kappa": (sp.exp(epsilon + epsilon0) - 1) / ((_E0 - 1) * (_E + 1)),
    }


def _threshold_derived() -> sp.Expr:
    """Solve P(j) = E Q(j) for j, with s(j-1)/s(j) = j (1 - r)/((N - j + 1) r)."""
    j = sp.Symbol("j", positive=True)
    u = j * (1 - R) / ((N - j + 1) * R)
    # P(j) - E Q(j) = s(j) [(a1 - E a0) u + (1 - a1) - E (1 - a0)]
    roots = sp.solve(sp.Eq((A1 - _E * A0) * u + (1 - A1) - _E * (1 - A0), 0), j)
    if len(roots) != 1:
        raise DerivationFailed(f"threshold: expected one root, got {roots}")
    return roots[0]


def _check_delta_tail(claimed: sp.Expr) -> None:
    """The claim against sum_j (P(j) - E Q(j))_+ by exact rational arithmetic (E rational here)."""
    for size in range(7):
        for a1, a0, r in ((sp.Rational(3, 4), sp.Rational(1, 4), sp.Rational(1, 2)),
                          (sp.Rational(2, 3), sp.Rational(1, 5), sp.Rational(1, 5)),
                          (sp.Rational(9, 10), sp.Rational(1, 3), sp.Rational(7, 10))):
            s = [sp.binomial(size, j) * r**j * (1 - r) ** (size - j) for j in range(size + 1)]
            pmf = lambda j: s[j] if 0 <= j <= size else 0  # noqa: E731
            for big in (sp.Integer(1), sp.Rational(11, 10), sp.Rational(3, 2), sp.Rational(5, 2)):
                terms = [a1 * pmf(j - 1) + (1 - a1) * pmf(j) - big * (a0 * pmf(j - 1) + (1 - a0) * pmf(j)) for j in range(size + 2)]
                direct = sum(max(sp.Integer(0), t) for t in terms)
                if a1 - big * a0 <= 0:
                    expected = sp.Integer(0)
                else:
                    u_star = (big * (1 - a0) - (1 - a1)) / (a1 - big * a0)
                    x = u_star * r * (size + 1) / (1 - r + u_star * r)
                    t = min(max(math.floor(x) + 1, 0), size + 1)
                    tail = sum(pmf(j) for j in range(t, size + 1))
                    expected = claimed.subs({A1: a1, A0: a0, epsilon: sp.log(big), S_PREV: pmf(t - 1), S_T: tail})
                if sp.simplify(direct - expected) != 0:
                    raise DerivationFailed(f"delta_tail: N={size}, a1={a1}, a0={a0}, r={r}, E={big}: direct {direct} != claimed {expected}")
    record_check("points")


def _clone_ratio_derived() -> sp.Expr:
    p1 = _E0 / (_E0 + 1)
    ratio_prev = A / (C - A + 1)  # b(a-1)/b(a) for Bin(c, 1/2)
    return sp.simplify((p1 * ratio_prev + (1 - p1)) / ((1 - p1) * ratio_prev + p1))


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    pts = [{A1: a1, A0: a0, R: r, N: n, epsilon: e}
           for a1, a0 in ((sp.Rational(3, 4), sp.Rational(1, 4)), (sp.Rational(2, 3), sp.Rational(1, 5)))
           for r in (sp.Rational(1, 2), sp.Rational(1, 7)) for n in (3, 40) for e in (sp.Rational(1, 10), sp.Rational(1, 3))]
    require_equal(_threshold_derived(), claim["threshold"], "count pair threshold", pts)
    _check_delta_tail(claim["delta_tail"])
    require_equal(_clone_ratio_derived(), claim["clone_ratio"], "clone likelihood ratio",
                  [{A: a, C: c, epsilon0: e0} for a in (0, 2, 5) for c in (5, 9) for e0 in (sp.Rational(1, 2), 2)])
    p1 = _E0 / (_E0 + 1)
    kappa = claims()["threshold"].subs({A1: p1, A0: 1 - p1, R: sp.Rational(1, 2)}) / (N + 1)
    require_equal(kappa, claim["clone_kappa"], "clone threshold slope kappa",
                  [{epsilon: e, epsilon0: e0} for e in (0, sp.Rational(1, 3), 1) for e0 in (sp.Rational(3, 2), 3)])
    require_equal(claim["clone_kappa"].subs(epsilon, 0), sp.Rational(1, 2), "kappa at eps = 0",
                  [{epsilon0: e0} for e0 in (sp.Rational(1, 2), 3)])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
