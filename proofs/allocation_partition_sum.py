"""The random-allocation partition sum equals a coefficient of a power of a power series.

Result: for t steps, an integer order alpha and the privacy-ratio moments m_p = E_Q[(P/Q)^p],

    S_t(alpha) := sum_{Pi in Partitions_t(alpha)} binom(t; C(Pi)) binom(alpha; Pi) prod_{p in Pi} m_p
                = alpha! [x^alpha] ( sum_{a>=0} m_a x^a / a! )^t          (m_0 = 1),

so that e^{(alpha-1) R_alpha(Pbar_t || Q^t)} = S_t(alpha) / t^alpha (Feldman & Shenfeld, Thm 4.8 /
Lemma E.1, with the corrected factor e^{(p-1)R_p} = m_p: notes/random-allocation.md section 6.2
item 9 and footnote 12's corrected coefficient binom(t; C(Pi)) = t! / ((t-|Pi|)! prod_c c!)).
It also proves J.C.P. Miller's recurrence for the power b = a^t of a series with a_0 = 1,

    b_0 = 1,  b_m = (1/m) sum_{j=1}^{m} ((t+1) j - m) a_j b_{m-j},

which the kernel src/fast/rdp_series.pyx uses (notes/shuffled-check-in.md section 4.4).

Derivation: with t symbolic, (1 + R(x))^t = sum_j binomial(t, j) R(x)^j (R has no constant term,
so the coefficient of x^alpha is a finite sum and a polynomial in t); the partition sum is built
literally by enumerating the partitions of alpha (sympy.utilities.iterables.partitions) with the
falling factorial t(t-1)...(t-|Pi|+1) for t!/(t-|Pi|)!. Both are compared as polynomials in t and
m_1..m_alpha for alpha = 2..8 (symbolic t, so every t >= 1 at once, including t < alpha where the
falling factorial vanishes for partitions with more than t parts); the same coefficients are checked
against the explicit polynomial power for t = 1..4, and Miller's recurrence is checked against the
binomial-series coefficients for alpha <= 6.

Typos found: the printed Lemma E.1 has e^{(alpha-1) R_p}; the correct factor is e^{(p-1) R_p}.

Exports of :func:`derive` (free symbols: t = number of steps, m1..m4 = moments):

=============  ===========================================================  =================
name           expression                                                   free symbols
=============  ===========================================================  =================
coefficient_3  t*m3 + 3*t*(t-1)*m1*m2 + t*(t-1)*(t-2)*m1**3                 t, m1, m2, m3
coefficient_4  t*m4 + 4t(t-1) m1 m3 + 3t(t-1) m2^2 + 6t(t-1)(t-2) m1^2 m2   t, m1, m2, m3, m4
               + t(t-1)(t-2)(t-3) m1^4
=============  ===========================================================  =================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/allocation_partition_sum.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp
from sympy.utilities.iterables import partitions

from proofs._common import DerivationFailed, merge_claims, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "t", "moments", "partition_sum", "series_coefficient"]

#: Number of steps (a positive integer; kept symbolic).
t = sp.Symbol("t", positive=True, integer=True)
#: m_1 … m_8, the privacy-ratio moments.
moments = sp.symbols("m1:9", positive=True)
_x = sp.Symbol("x")
MAX_ORDER = 8
MILLER_MAX_ORDER = 6

EXPORT_SYMBOLS = {
    "coefficient_3": ("m1", "m2", "m3", "t"),
    "coefficient_4": ("m1", "m2", "m3", "m4", "t"),
}


def _m(p: int) -> sp.Expr:
    return sp.Integer(1) if p == 0 else moments[p - 1]


def partition_sum(alpha: int, steps: sp.Expr = t) -> sp.Expr:
    """Thm 4.8's sum over the partitions of alpha, literally (falling factorial for t!/(t-|Pi|)!)."""
    total = sp.Integer(0)
    for part in partitions(alpha):  # {value: multiplicity}
        parts = sum(part.values())
        ways_t = sp.ff(steps, parts)
        for mult in part.values():
            ways_t /= sp.factorial(mult)
        ways_alpha = sp.factorial(alpha)
        weight = sp.Integer(1)
        for value, mult in part.items():
            ways_alpha /= sp.factorial(value) ** mult
            weight *= _m(value) ** mult
        total += ways_t * ways_alpha * weight
    return sp.expand(total)


def _truncate(poly: sp.Poly) -> sp.Poly:
    """Drop the terms of x-degree above MAX_ORDER (x is the first generator)."""
    return sp.Poly.from_dict({e: c for e, c in poly.as_dict().items() if e[0] <= MAX_ORDER}, poly.gens, domain=poly.domain)


@functools.lru_cache(maxsize=None)
def _rest_powers() -> tuple[sp.Poly, ...]:
    """R(x)^j truncated at x^MAX_ORDER, j = 0..MAX_ORDER, with R(x) = sum_{a>=1} m_a x^a / a!
    (sparse polynomial arithmetic in x and the moments)."""
    gens = (_x, *moments)
    rest = sp.Poly(sum(_m(a) * _x**a / sp.factorial(a) for a in range(1, MAX_ORDER + 1)), *gens, domain="QQ")
    powers = [sp.Poly(1, *gens, domain="QQ")]
    for _ in range(MAX_ORDER):
        powers.append(_truncate(powers[-1] * rest))
    return tuple(powers)


def _coeff(poly: sp.Poly, alpha: int) -> sp.Expr:
    """The coefficient of x^alpha as an expression in the moments."""
    return sp.expand(sum(c * sp.Mul(*[g**k for g, k in zip(moments, e[1:])]) for e, c in poly.as_dict().items() if e[0] == alpha))


def series_coefficient(alpha: int) -> sp.Expr:
    """alpha! [x^alpha] (1 + R(x))^t by the binomial series, t symbolic."""
    powers = _rest_powers()
    total = sum(sp.expand_func(sp.binomial(t, j)) * _coeff(powers[j], alpha) for j in range(1, alpha + 1))
    return sp.expand(sp.factorial(alpha) * total)


def _explicit_power(alpha: int, steps: int) -> sp.Expr:
    """alpha! [x^alpha] M(x)^steps by multiplying M(x) = 1 + R(x) out ``steps`` times (integer steps)."""
    series = _rest_powers()[0] + _rest_powers()[1]
    power = series
    for _ in range(steps - 1):
        power = _truncate(power * series)
    return sp.expand(sp.factorial(alpha) * _coeff(power, alpha))


def _miller(alpha: int) -> list[sp.Expr]:
    """Coefficients b_0..b_alpha of (sum a_j x^j)^t by Miller's recurrence (a_0 = 1)."""
    a = [sp.Integer(1)] + [_m(j) / sp.factorial(j) for j in range(1, alpha + 1)]
    b = [sp.Integer(1)]
    for m in range(1, alpha + 1):
        b.append(sp.expand(sum(((t + 1) * j - m) * a[j] * b[m - j] for j in range(1, m + 1)) / m))
    return b


def claims() -> dict[str, sp.Expr]:
    """The partition sums of orders 3 and 4, written out."""
    m1, m2, m3, m4 = moments[:4]
    return {
        "coefficient_3": t * m3 + 3 * t * (t - 1) * m1 * m2 + t * (t - 1) * (t - 2) * m1**3,
        "coefficient_4": t * m4 + 4 * t * (t - 1) * m1 * m3 + 3 * t * (t - 1) * m2**2
        + 6 * t * (t - 1) * (t - 2) * m1**2 * m2 + t * (t - 1) * (t - 2) * (t - 3) * m1**4,
    }


@functools.lru_cache(maxsize=None)
def _checked_orders() -> dict[int, sp.Expr]:
    """Every order 2..MAX_ORDER: partition sum == series coefficient (symbolic t), both == the
    explicit power at t = 1..4; Miller's recurrence == series coefficients (alpha <= 6)."""
    out: dict[int, sp.Expr] = {}
    for alpha in range(2, MAX_ORDER + 1):
        literal = partition_sum(alpha)
        coefficient = series_coefficient(alpha)
        require_equal(coefficient, literal, f"partition sum of order {alpha} vs alpha! [x^alpha] M(x)^t")
        for steps in range(1, 5):
            power = _explicit_power(alpha, steps)
            require_equal(sp.expand(literal.subs(t, steps)), power, f"order {alpha} at t = {steps} (explicit power)")
        out[alpha] = literal
    miller = _miller(MILLER_MAX_ORDER)
    for alpha in range(1, MILLER_MAX_ORDER + 1):
        require_equal(sp.expand(sp.factorial(alpha) * miller[alpha]), series_coefficient(alpha) if alpha > 1 else t * _m(1),
                      f"Miller's recurrence at order {alpha}")
    return out


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check the identity for orders 2..8 and the claimed order-3 and order-4 sums (``claimed``
    replaces entries of :func:`claims`). Returns the verified expressions; raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    orders = _checked_orders()
    if set(orders) != set(range(2, MAX_ORDER + 1)):
        raise DerivationFailed(f"orders checked: {sorted(orders)}")  # pragma: no cover
    require_equal(orders[3], claim["coefficient_3"], "order-3 partition sum")
    require_equal(orders[4], claim["coefficient_4"], "order-4 partition sum")
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
