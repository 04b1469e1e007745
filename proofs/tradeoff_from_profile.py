"""A LOWER bound on TPR at FPR alpha0 from a LOWER bound on delta at finitely many eps (no curve needed).

Setting and notation as in proofs/tradeoff_conversion.py: f(alpha) = TPR*(alpha) of one direction,
delta(eps) = sup_alpha f(alpha) - e^eps alpha (Lemma 2 there). f is concave and nondecreasing on
[0, 1] (randomised tests mix), f >= 0 and f <= 1.

Lemma. Let eps >= 0 and 0 <= d <= delta(eps), d < 1. For every alpha0 in [0, 1],

    f(alpha0) >= min( alpha0 + d (1 - alpha0),  alpha0 e^eps / (1 - d) )     if alpha0 < (1 - d) e^-eps,
    f(alpha0) >= alpha0 + d (1 - alpha0)                                      otherwise.

Proof. For any eta > 0 there is a with f(a) - e^eps a >= d - eta; let eta -> 0 at the end (every
bound below is continuous in d), so take y = f(a) >= d + e^eps a. As f <= 1, a <= a_max = (1 - d) e^-eps.
(i) a <= alpha0: concavity puts f(alpha0) above the chord from (a, y) to (1, f(1)) >= (1, y'),
and the chord's value at alpha0 increases with y, so
f(alpha0) >= g(a) = (y(a)(1 - alpha0) + alpha0 - a)/(1 - a) with y(a) = d + e^eps a (export ``chord``).
g'(a) has the sign of (1 - alpha0)(d + e^eps - 1) (export ``slope``, derived here), >= 0 for eps >= 0,
so g is smallest at a = 0: g(0) = alpha0 + d (1 - alpha0).
(ii) a > alpha0 (possible only if alpha0 < a_max): the chord from (0, f(0)) >= (0, 0) to (a, y) gives
f(alpha0) >= y alpha0 / a = alpha0 (d/a + e^eps), decreasing in a, smallest at a = a_max:
alpha0 (d e^eps/(1 - d) + e^eps) = alpha0 e^eps/(1 - d) (export ``far``).
The minimum over the two cases is a bound whichever holds. []

verifier.certify.methods.profile_tpr takes the largest of these over a grid of eps (with d a
rigorous LOWER end of delta(eps) from any method), in ball arithmetic rounded down; the UPPER side
is Lemma 1 of tradeoff_conversion on the same grid.

Exports of :func:`derive`:

=======  ==============================================  ====================
name     expression                                      free symbols
=======  ==============================================  ====================
chord    (y (1 - alpha0) + alpha0 - a)/(1 - a)           a, alpha0, d, epsilon
slope    (1 - alpha0) (d + e^eps - 1)                    alpha0, d, epsilon
far      alpha0 e^eps / (1 - d)                          alpha0, d, epsilon
=======  ==============================================  ====================
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/tradeoff_from_profile.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, epsilon, merge_claims, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {"chord": ("a", "alpha0", "d", "epsilon"), "slope": ("alpha0", "d", "epsilon"), "far": ("alpha0", "d", "epsilon")}

a, alpha0, d = sp.symbols("a alpha0 d", nonnegative=True)


def claims() -> dict[str, sp.Expr]:
    y = d + sp.exp(epsilon) * a
    return {
        "chord": (y * (1 - alpha0) + alpha0 - a) / (1 - a),
        "slope": (1 - alpha0) * (d + sp.exp(epsilon) - 1),
        "far": alpha0 * sp.exp(epsilon) / (1 - d),
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """The chord at alpha0, the sign of its derivative in a, and case (ii) at a_max. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    y = d + sp.exp(epsilon) * a
    points = [{a: sp.Rational(1, 10), alpha0: al, d: dd, epsilon: e} for al in (sp.Rational(1, 5), sp.Rational(1, 2))
              for dd in (0, sp.Rational(1, 3)) for e in (0, sp.Rational(1, 2), 2)]
    chord = y + (alpha0 - a) * (1 - y) / (1 - a)  # the line through (a, y) and (1, 1) at alpha0
    require_equal(chord, claim["chord"], "chord from (a, y) to (1, 1)", points)
    derivative = sp.together(sp.diff(claim["chord"], a))
    numerator, denominator = sp.fraction(derivative)
    if sp.simplify(denominator - (1 - a) ** 2) != 0 and sp.simplify(denominator - (a - 1) ** 2) != 0:
        raise DerivationFailed(f"the chord's derivative has denominator {denominator}, not (1 - a)^2")
    require_equal(sp.expand(numerator), claim["slope"], "sign of the chord's derivative in a", points)
    a_max = (1 - d) * sp.exp(-epsilon)
    far = (alpha0 * y / a).subs(a, a_max)
    require_equal(sp.simplify(far), claim["far"], "case (ii) at a = a_max", [{k: v for k, v in p.items() if k is not a} for p in points])
    if sp.simplify(sp.diff(alpha0 * y / a, a) + alpha0 * d / a**2) != 0:
        raise DerivationFailed("case (ii) is not alpha0 (d/a + e^eps)")
    return {"chord": claim["chord"], "slope": sp.expand(numerator), "far": sp.simplify(far)}


if __name__ == "__main__":  # pragma: no cover
    derive()
    print("tradeoff_from_profile: ok")
