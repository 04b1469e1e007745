"""Shuffled randomized response: the exact scan over backgrounds (verifier.shuffle.binary) and the
blanket decomposition behind the UPPER bound of verifier.shuffle.blanket.

Setting: n users, k-ary randomized response with parameter eps0 (truth with probability
e^eps0/Z, every other symbol 1/Z, Z = e^eps0 + k - 1), reports shuffled (the release is the histogram
of reports); replace-one neighbours change one user's input. p = e^eps0/(e^eps0 + 1) for k = 2.

1. Mirror (export ``mirror_background``). For k = 2 the count K of reported ones is the release; with
   m ones among the other n - 1 users, P_m = Bern(p) + S_m (victim 1), Q_m = Bern(1 - p) + S_m
   (victim 0), S_m = Bin(m, p) + Bin(n - 1 - m, 1 - p). K -> n - K maps Q_m to P_{n-1-m} and P_m to
   Q_{n-1-m}, so H_E(Q_m || P_m) = H_E(P_{n-1-m} || Q_{n-1-m}): the backgrounds m <= (n - 1)/2 with
   both orders cover every ordered pair of neighbouring datasets. Checked: for n <= 6, every m and
   E in a grid, exactly in rationals, and the maximum over every dataset of the others (all 2^(n-1)
   bit vectors, the histogram computed by convolving the users' laws) equals the maximum of the scan.
2. Chernoff window (export ``chernoff_tail``): Pr[Bin(N, rho) >= aN] <= inf_theta e^(-theta a N)
   (1 - rho + rho e^theta)^N = exp(-N KL(a || rho)) for a > rho; the infimum is derived here (the
   stationary point theta* = ln(a (1 - rho)/(rho (1 - a)))) and the bound checked against exact
   binomial tails for N <= 12.
3. Blanket (exports ``blanket_weight``, ``blanket_weight_k``). Each k-RR report law is a mixture
   w U + (1 - w) delta_x with U uniform on the k symbols and w = k/Z (2/(e^eps0 + 1) for k = 2;
   solved here from w/k = 1/Z). Revealing, for every OTHER user, which component it drew (and the
   input, a fixed part of the dataset) is a release the histogram is a post-processing of, and the
   joint law of those revelations does not depend on the victim, so by joint convexity
   H(hist_X || hist_X') <= E_C[ H(e_V + M_C || e_V' + M_C) ], C ~ Bin(n - 1, w) the number of uniform
   reports and M_C their (multinomial, uniform) histogram, V, V' the victim's two report laws; for
   k = 2 given C = c that is the count pair (p, 1 - p, 1/2, c) of proofs/shuffle_count.py, FMT's clone
   pair with clone probability 2/(e^eps0 + 1) in place of e^-eps0 (Feldman, McMillan & Talwar,
   arXiv:2012.12803, Thm 3.2, and their SODA 2023 "stronger clones"; Wang et al., VLDB 2024, use the
   same weight for binary RR; derived here without their general theorem). Checked: the bound is
   above the exact delta of every dataset pair (n <= 5, k = 2 and 3) at rational points.

Sources: as cited; the mirror and the window are derived here. Typos found: none.

Exports of :func:`derive`:

=================  =====================================================  =====================
name               expression                                             free symbols
=================  =====================================================  =====================
mirror_background  n - 1 - m                                              m, n
chernoff_tail      exp(-N (a ln(a/rho) + (1 - a) ln((1 - a)/(1 - rho))))  N, a, rho
blanket_weight     2/(e^eps0 + 1)                                         epsilon0
blanket_weight_k   k/(e^eps0 + k - 1)                                     epsilon0, k
=================  =====================================================  =====================
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):  # run as `python proofs/shuffle_binary.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, epsilon0, k, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "histogram_law", "hockey"]

EXPORT_SYMBOLS = {
    "mirror_background": ("m", "n"),
    "chernoff_tail": ("N", "a", "rho"),
    "blanket_weight": ("epsilon0",),
    "blanket_weight_k": ("epsilon0", "k"),
}

n, m = sp.symbols("n m", positive=True, integer=True)
N = sp.Symbol("N", positive=True)
a, rho = sp.symbols("a rho", positive=True)
_E0 = sp.exp(epsilon0)

Law = dict[tuple[int, ...], Fraction]


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {
        "mirror_background": n - 1 - m,
        "chernoff_tail": sp.exp(-N * (a * sp.log(a / rho) + (1 - a) * sp.log((1 - a) / (1 - rho)))),
        "blanket_weight": 2 / (_E0 + 1),
        "blanket_weight_k": k / (_E0 + k - 1),
    }


def _report(x: int, big: Fraction, kk: int) -> list[Fraction]:
    z = big + kk - 1
    return [big / z if y == x else 1 / z for y in range(kk)]


def histogram_law(data: tuple[int, ...], big: Fraction, kk: int) -> Law:
    """Exact law of the histogram of k-RR reports (E = e^eps0 = ``big``) of the users' inputs ``data``."""
    law: Law = {tuple([0] * kk): Fraction(1)}
    for x in data:
        step = _report(x, big, kk)
        out: Law = {}
        for hist, mass in law.items():
            for y in range(kk):
                h = list(hist)
                h[y] += 1
                out[tuple(h)] = out.get(tuple(h), Fraction(0)) + mass * step[y]
        law = out
    return law


def hockey(p: Law, q: Law, big: Fraction) -> Fraction:
    """H_E(P || Q) = sum (P - E Q)_+ for finite laws (dicts)."""
    return sum((max(Fraction(0), mass - big * q.get(h, Fraction(0))) for h, mass in p.items()), Fraction(0))


def _count_law(users: int, ones: int, victim: int, big: Fraction) -> list[Fraction]:
    law = histogram_law((victim,) + (1,) * ones + (0,) * (users - 1 - ones), big, 2)
    return [law.get((users - j, j), Fraction(0)) for j in range(users + 1)]


def _check_mirror(claimed: sp.Expr) -> None:
    bigs = (Fraction(3), Fraction(7, 5))
    levels = (Fraction(1), Fraction(11, 10), Fraction(3, 2))
    for users in range(2, 7):
        for big in bigs:
            for ones in range(users):
                image = claimed.subs({n: users, m: ones})
                if not (image.is_integer and 0 <= int(image) <= users - 1):
                    raise DerivationFailed(f"mirror_background: n = {users}, m = {ones} maps to {image}, not a background")
                q_law = dict(enumerate(_count_law(users, ones, 0, big)))
                p_law = dict(enumerate(_count_law(users, ones, 1, big)))
                p_img = dict(enumerate(_count_law(users, int(image), 1, big)))
                q_img = dict(enumerate(_count_law(users, int(image), 0, big)))
                for level in levels:
                    if hockey(q_law, p_law, level) != hockey(p_img, q_img, level):
                        raise DerivationFailed(f"mirror_background: n = {users}, m = {ones}, E = {level}: H(Q_m||P_m) != H(P_m'||Q_m')")
            for level in levels:  # the half scan against every dataset of the others
                scan = max(max(hockey(dict(enumerate(_count_law(users, j, 1, big))), dict(enumerate(_count_law(users, j, 0, big))), level),
                               hockey(dict(enumerate(_count_law(users, j, 0, big))), dict(enumerate(_count_law(users, j, 1, big))), level))
                           for j in range((users - 1) // 2 + 1))
                brute = max(hockey(histogram_law((u,) + others, big, 2), histogram_law((1 - u,) + others, big, 2), level)
                            for others in itertools.product((0, 1), repeat=users - 1) for u in (0, 1))
                if scan != brute:
                    raise DerivationFailed(f"half scan {scan} != every dataset {brute} (n = {users}, E0 = {big}, E = {level})")
    record_check("points")


def _chernoff_derived() -> sp.Expr:
    theta = sp.Symbol("theta", real=True)
    exponent = -theta * a + sp.log(1 - rho + rho * sp.exp(theta))  # per trial
    stationary = sp.solve(sp.diff(exponent, theta), theta)
    if len(stationary) != 1:
        raise DerivationFailed(f"chernoff: expected one stationary point, got {stationary}")
    return sp.exp(N * exponent.subs(theta, stationary[0]))


def _check_chernoff_tails(claimed: sp.Expr) -> None:
    for size in range(1, 13):
        for r in (Fraction(1, 5), Fraction(1, 2), Fraction(3, 4)):
            for j in range(size + 1):
                if Fraction(j, size) <= r:
                    continue
                tail = sum(sp.binomial(size, i) * sp.Rational(r) ** i * (1 - sp.Rational(r)) ** (size - i) for i in range(j, size + 1))
                if j == size:
                    bound = sp.Rational(r) ** size  # the a -> 1 limit of the claim: exp(-N ln(1/rho))
                    value = claimed.subs({N: size, rho: sp.Rational(r)}).limit(a, 1) if claimed.has(a) else claimed
                    if sp.N(value - bound, 30) < -1e-25:
                        raise DerivationFailed(f"chernoff_tail at a = 1 below rho^N (N = {size})")
                    continue
                value = claimed.subs({N: size, a: sp.Rational(j, size), rho: sp.Rational(r)})
                if sp.N(value - tail, 30) < -1e-25:
                    raise DerivationFailed(f"chernoff_tail: N = {size}, j = {j}, rho = {r}: {sp.N(value)} < Pr[Bin >= j] = {sp.N(tail)}")
    record_check("points")


def _blanket_derived_k() -> sp.Expr:
    w, z = sp.Symbol("w", positive=True), _E0 + k - 1
    roots = sp.solve(sp.Eq(w / k, 1 / z), w)  # a non-input symbol's mass: only the uniform part
    if len(roots) != 1:
        raise DerivationFailed(f"blanket weight: expected one root, got {roots}")
    weight = roots[0]
    truth = weight / k + (1 - weight)  # the input's mass must come out e^eps0/Z
    require_equal(truth, _E0 / z, "blanket mixture gives the input e^eps0/Z")
    return weight


def _blanket_bound(users: int, big: Fraction, kk: int, level: Fraction, weight: Fraction) -> Fraction:
    """E_C[H(e_V + M_C || e_V' + M_C)], C ~ Bin(n - 1, w), V, V' the reports on inputs 1 and 0."""
    total = Fraction(0)
    for c in range(users):
        uniform = [Fraction(1, kk)] * kk
        law: Law = {tuple([0] * kk): Fraction(1)}
        for _ in range(c):
            nxt: Law = {}
            for hist, mass in law.items():
                for y in range(kk):
                    h = list(hist)
                    h[y] += 1
                    nxt[tuple(h)] = nxt.get(tuple(h), Fraction(0)) + mass * uniform[y]
            law = nxt
        victim = {}
        for x in (1, 0):
            out: Law = {}
            for hist, mass in law.items():
                for y, py in enumerate(_report(x, big, kk)):
                    h = list(hist)
                    h[y] += 1
                    out[tuple(h)] = out.get(tuple(h), Fraction(0)) + mass * py
            victim[x] = out
        prob = sp.binomial(users - 1, c) * weight**c * (1 - weight) ** (users - 1 - c)
        total += Fraction(int(sp.numer(prob)), int(sp.denom(prob))) * hockey(victim[1], victim[0], level)
    return total


def _check_blanket(weight_k: sp.Expr) -> None:
    for kk in (2, 3):
        for big in (Fraction(3), Fraction(7, 5)):
            weight_sym = sp.nsimplify(weight_k.subs({epsilon0: sp.log(sp.Rational(big)), k: kk}))
            weight = Fraction(int(sp.numer(weight_sym)), int(sp.denom(weight_sym)))
            if not 0 <= weight <= 1:
                raise DerivationFailed(f"blanket weight {weight} is not a probability")
            for users in range(2, 6 if kk == 2 else 4):
                for level in (Fraction(1), Fraction(6, 5)):
                    bound = _blanket_bound(users, big, kk, level, weight)
                    worst = max(hockey(histogram_law((1,) + others, big, kk), histogram_law((0,) + others, big, kk), level)
                                for others in itertools.combinations_with_replacement(range(kk), users - 1))
                    if bound < worst:
                        raise DerivationFailed(f"blanket bound {float(bound)} < exact {float(worst)} (k = {kk}, n = {users}, E0 = {big})")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    _check_mirror(claim["mirror_background"])
    require_equal(_chernoff_derived(), claim["chernoff_tail"], "Chernoff bound at its optimal theta",
                  [{N: s, a: sp.Rational(j, 10), rho: sp.Rational(r, 10)} for s in (3, 40) for j in (5, 9) for r in (1, 4)])
    _check_chernoff_tails(claim["chernoff_tail"])
    weight_k = _blanket_derived_k()
    require_equal(weight_k, claim["blanket_weight_k"], "k-RR blanket weight", [{epsilon0: e, k: kk} for e in (sp.Rational(1, 2), 2) for kk in (2, 3, 10)])
    require_equal(weight_k.subs(k, 2), claim["blanket_weight"], "binary RR blanket weight", [{epsilon0: e} for e in (sp.Rational(1, 2), 2)])
    _check_blanket(claim["blanket_weight_k"])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
