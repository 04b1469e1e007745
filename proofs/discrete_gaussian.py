"""The discrete Gaussian pair N_Z(1, sigma^2) against N_Z(0, sigma^2): the tail bound and the
tail outcomes of verifier.pairs.DiscreteGaussian.

1. Weights w(x) = exp(-x^2/(2 sigma^2)) on the integers. Consecutive terms have the ratio
   w(x+1)/w(x) = exp(-(2x+1)/(2 sigma^2)) (export ``ratio``), which decreases in x, so for x >= m
   it is at most r = exp(-(2m+1)/(2 sigma^2)) < 1 and Sum_{x >= m} w(x) <= w(m) Sum_j r^j
   = w(m)/(1 - r) (export ``tail``, a geometric series). Checked at points against 40-digit sums.
2. Z = Sum_Z w is bracketed by its terms |x| <= K+2 plus [0, 2 tail(K+3)]; P(x) = w(x)/Z and
   Q(x) = w(x-1)/Z (the same Z: Z is shift invariant).
3. The outcomes x <= -K-1 (and x >= K+2) form one tail outcome each. Their true contribution
   Sum_tail (P - e^eps Q)_+ lies in [0, P(tail)] for every eps, because each term lies in
   [0, P(x)]. The pair gives the tail outcome the masses [0, P-tail bound] and [0, Q-tail bound];
   the ball of (p - e^eps q)_+ over those intervals is [0, P-tail bound], which holds the truth.
   Likewise any loss-law mass of the tail lies between 0 and its mass (the tail's loss is
   undecided, its mass widens the ball), and D_alpha is bounded by +inf (q's ball holds 0).

Exports of :func:`derive`:

============  ===============================================  ==================
name          expression                                       free symbols
============  ===============================================  ==================
ratio         exp(-(2x+1)/(2 sigma^2))                         sigma, x
tail          exp(-m^2/(2 sigma^2))/(1 - exp(-(2m+1)/(2 sigma^2)))  m, sigma
============  ===============================================  ==================
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/discrete_gaussian.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {"ratio": ("sigma", "x"), "tail": ("m", "sigma")}

x, m = sp.symbols("x m", integer=True, nonnegative=True)


def _w(v: sp.Expr) -> sp.Expr:
    return sp.exp(-(v**2) / (2 * sigma**2))


def claims() -> dict[str, sp.Expr]:
    """The ratio of consecutive weights and the geometric tail bound."""
    return {"ratio": sp.exp(-(2 * x + 1) / (2 * sigma**2)), "tail": _w(m) / (1 - sp.exp(-(2 * m + 1) / (2 * sigma**2)))}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive the ratio; check the tail bound against 40-digit sums. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    require_equal(sp.simplify(_w(x + 1) / _w(x)), claim["ratio"], "discrete Gaussian: ratio of consecutive weights")
    # the geometric series w(m) Sum_j r^j with r the ratio at x = m
    r = claim["ratio"].subs(x, m)
    require_equal(_w(m) / (1 - r), claim["tail"], "discrete Gaussian: geometric tail bound")
    mpmath.mp.dps = 40
    for s_value in (sp.Rational(3, 10), 1, sp.Rational(7, 2), 40):
        for m_value in (0, 1, 5, 30, 600):
            s_mp = mpmath.mpf(sp.Rational(s_value).p) / sp.Rational(s_value).q
            exact = mpmath.nsum(lambda t: mpmath.e ** (-(t**2) / (2 * s_mp**2)), [m_value, mpmath.inf])
            bound = sp.N(claim["tail"].subs({sigma: s_value, m: m_value}), 40)
            if not exact <= mpmath.mpf(str(bound)) * (1 + mpmath.mpf(10) ** -30):
                raise DerivationFailed(f"tail bound {bound} below the sum {exact} at sigma = {s_value}, m = {m_value}")
            record_check("points")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
