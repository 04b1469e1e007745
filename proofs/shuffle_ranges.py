"""Shuffled binary randomized response: one upper bound for a whole range of backgrounds
(verifier.shuffle.ranges).

Setting (as proofs/shuffle_binary.py): n users, binary randomized response, p = e^eps0/(e^eps0 + 1),
the release is the count of reported ones; background m = the number of ones among the other n - 1
users; P_m = Bern(p) + S_m, Q_m = Bern(1 - p) + S_m, S_m = Bin(m, p) + Bin(n - 1 - m, 1 - p).

1. Coin decomposition (export ``coin_share``). With w = 2/(e^eps0 + 1) = 2(1 - p), a one-user's
   report is Bern(p) = w Bern(1/2) + (1 - w) delta_1 and a zero-user's Bern(1 - p) = w Bern(1/2) +
   (1 - w) delta_0: derived here by solving the generating functions' coefficients for w (both users
   give the same w). So each user reports a fair coin with probability w whatever its bit, and its
   bit otherwise.
2. Range bound. Fix 0 <= a <= b <= n - 1. Every background m in [a, b] is a ones and n - 1 - b zeros
   (shared by all of them; their count A = Bin(a, p) + Bin(n - 1 - b, 1 - p)) plus b - a free users
   (m - a ones, b - m zeros). Draw for each free user whether it reports a coin (probability w,
   independently): given those draws Z, the free users' count is Bin(K, 1/2) plus a shift fixed by
   Z and m (the non-coin users' bits), K = the number of coins ~ Bin(b - a, w) whatever m. Joint
   convexity of H_E(P || Q) = sum (P - E Q)_+ over the mixture on Z, and its invariance under a
   shift of both laws, give for every m in [a, b] and both orders

       H_E(P_m || Q_m) <= E_K g(K),   g(k) = H_E(Bern(p) + A + Bin(k, 1/2) || Bern(1 - p) + A + Bin(k, 1/2))

   (and the same with the orders swapped). g does not increase with k (data processing: Bin(k + 1,
   1/2) is Bin(k, 1/2) plus an independent coin, a Markov kernel applied to both laws), so for
   bucket ends k_0 < k_1 < ..., E_K g(K) <= sum_j Pr[k_j <= K < k_(j+1)] g(k_j) + Pr[K < k_0].
   Checked: for n <= 12, E0 = e^eps0 in {3, 7/5}, E in {1, 6/5, 2}, every [a, b], every m in it
   and both orders, exactly in rationals, with buckets of width 1, 2 and 3; and g non-increasing.
3. Coin variance loss (export ``coin_variance_loss``): the bound's variance, given the coins, is
   smaller than the free users' by p(1 - p) - w/4 = (1 - p)(2p - 1)/2 per free user (derived here);
   since S_m's variance is (n - 1) p (1 - p) for every m, a range of b - a users costs about
   (b - a)(2p - 1)/(2 n p) of eps relatively. verifier uses this only to choose the ranges' widths,
   never in a bound.

Sources: the decomposition is FMT's clone idea (Feldman, McMillan & Talwar 2021, arXiv:2012.12803)
with randomized response's share (proofs/shuffle_binary.py, step 3), applied here to a range's free
users only; the range argument is derived here. Typos found: none.

Exports of :func:`derive`:

==================  ===============================  =============
name                expression                       free symbols
==================  ===============================  =============
coin_share          2/(e^eps0 + 1)                   epsilon0
coin_variance_loss  (e^eps0 - 1)/(2 (e^eps0 + 1)^2)  epsilon0
==================  ===============================  =============
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):  # run as `python proofs/shuffle_ranges.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, epsilon0, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "count_law", "derive", "range_bound", "hockey"]

EXPORT_SYMBOLS = {
    "coin_share": ("epsilon0",),
    "coin_variance_loss": ("epsilon0",),
}

_E0 = sp.exp(epsilon0)
_P = _E0 / (_E0 + 1)
_Z = sp.Symbol("z")


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {
        "coin_share": 2 / (_E0 + 1),
        "coin_variance_loss": (_E0 - 1) / (2 * (_E0 + 1) ** 2),
    }


def _coin_share_derived() -> sp.Expr:
    """w from Bern(1 - p) = w Bern(1/2) + (1 - w) delta_0 and Bern(p) = w Bern(1/2) + (1 - w) delta_1."""
    w = sp.Symbol("w")
    zero_user = sp.Poly(_P + (1 - _P) * _Z - (w * (1 + _Z) / 2 + (1 - w)), _Z).all_coeffs()
    one_user = sp.Poly((1 - _P) + _P * _Z - (w * (1 + _Z) / 2 + (1 - w) * _Z), _Z).all_coeffs()
    roots = [sp.solve(c, w) for c in zero_user + one_user if sp.simplify(c) != 0]
    found = {sp.simplify(r[0]) for r in roots if r}
    if len(found) != 1:
        raise DerivationFailed(f"coin share: the coefficients give {found}, not one w")
    return found.pop()


def _variance_loss_derived(share: sp.Expr) -> sp.Expr:
    """p(1 - p) (a free user's variance) - E[Var | coin drawn] = p(1 - p) - w/4."""
    return sp.simplify(_P * (1 - _P) - share / 4)


def _convolve(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _binomial(size: int, rho: Fraction) -> list[Fraction]:
    law = [Fraction(1)]
    for _ in range(size):
        law = _convolve(law, [1 - rho, rho])
    return law


def count_law(ones: int, zeros: int, coins: int, big0: Fraction) -> list[Fraction]:
    """Exact law of Bin(ones, p) + Bin(zeros, 1 - p) + Bin(coins, 1/2), p = E0/(E0 + 1)."""
    p = big0 / (big0 + 1)
    return _convolve(_convolve(_binomial(ones, p), _binomial(zeros, 1 - p)), _binomial(coins, Fraction(1, 2)))


def hockey(s: list[Fraction], big0: Fraction, level: Fraction, order: int) -> Fraction:
    """H_E(Bern(p) + S || Bern(1 - p) + S) (order 0) or the reverse (order 1), S's law ``s``."""
    p = big0 / (big0 + 1)
    first, second = _convolve(s, [1 - p, p]), _convolve(s, [p, 1 - p])
    if order:
        first, second = second, first
    return sum((max(Fraction(0), x - level * y) for x, y in zip(first, second)), Fraction(0))


def range_bound(users: int, first: int, last: int, big0: Fraction, level: Fraction, order: int, share: Fraction, bucket: int) -> Fraction:
    """The claimed bound of step 2 for backgrounds first … last (buckets ``bucket`` wide from k = 0)."""
    g = _g_values(users, first, last, big0, level, order)
    coins = _binomial(last - first, share)
    return sum((sum(coins[left:left + bucket], Fraction(0)) * g[left] for left in range(0, len(coins), bucket)), Fraction(0))


def _g_values(users: int, first: int, last: int, big0: Fraction, level: Fraction, order: int) -> list[Fraction]:
    """g(k) of step 2 for k = 0 … last - first."""
    key = (users, first, last, big0, level, order)
    if key not in _G_CACHE:
        law, values = count_law(first, users - 1 - last, 0, big0), []
        for _ in range(last - first + 1):
            values.append(hockey(law, big0, level, order))
            law = _convolve(law, [Fraction(1, 2), Fraction(1, 2)])
        _G_CACHE[key] = values
    return _G_CACHE[key]


_G_CACHE: dict[tuple, list[Fraction]] = {}


def _check_range_bound(share_expr: sp.Expr) -> None:
    for big0 in (Fraction(3), Fraction(7, 5)):
        value = sp.nsimplify(share_expr.subs(epsilon0, sp.log(sp.Rational(big0))))
        share = Fraction(int(sp.numer(value)), int(sp.denom(value)))
        if not 0 < share <= 1:
            raise DerivationFailed(f"coin share {share} is not a probability (E0 = {big0})")
        for users in range(2, 13):
            for level in (Fraction(1), Fraction(6, 5), Fraction(2)):
                exact = {(m, order): _g_values(users, m, m, big0, level, order)[0] for m in range(users) for order in (0, 1)}
                for first in range(users):
                    for last in range(first, users):
                        for order in (0, 1):
                            g = _g_values(users, first, last, big0, level, order)
                            if any(x < y for x, y in zip(g, g[1:])):
                                raise DerivationFailed(f"g increases with k (n = {users}, [{first}, {last}], E0 = {big0}, E = {level})")
                            worst = max(exact[m, order] for m in range(first, last + 1))
                            for bucket in (1, 2, 3):
                                bound = range_bound(users, first, last, big0, level, order, share, bucket)
                                if worst > bound:
                                    raise DerivationFailed(
                                        f"range bound {float(bound)} < exact {float(worst)} (n = {users}, [{first}, {last}], "
                                        f"order {order}, E0 = {big0}, E = {level}, bucket {bucket})")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    require_equal(_coin_share_derived(), claim["coin_share"], "coin share of randomized response",
                  [{epsilon0: e} for e in (sp.Rational(1, 2), 1, 3)])
    _check_range_bound(claim["coin_share"])
    require_equal(_variance_loss_derived(claim["coin_share"]), claim["coin_variance_loss"], "variance lost per free user",
                  [{epsilon0: e} for e in (sp.Rational(1, 2), 1, 3)])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
