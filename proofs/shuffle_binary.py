"""Shuffled randomized response: the exact scan over backgrounds (verifier.shuffle.binary), and the
clone share of randomized response and Laplace behind verifier.shuffle.clones.CloneWeight.TAILED.

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
3. Clone share (exports ``clone_share_rr``, ``clone_share_laplace``). FMT's clone reduction needs
   only that every other user's report law R(x_i) dominates w (R(x) + R(x'))/2 pointwise for the
   changed user's inputs x != x' (proofs/shuffle_coupling.py, step 2); then C ~ Bin(n - 1, w) clones
   and, given C = c, the count pair (p, 1 - p, 1/2, c) of proofs/shuffle_count.py. Any eps0-DP
   randomizer has w = e^-eps0 (FMT Thm 3.2). The infimum of the ratio is derived here for k-ary
   randomized response, any k: at y = x (x_i != x) it is (1/Z)/((e^eps0 + 1)/(2Z)) = 2/(e^eps0 + 1),
   elsewhere >= 1. For the Laplace mechanism (scale b, inputs in an interval of length Delta,
   eps0 = Delta/b) with the changed user's inputs x < x' at distance d (loss l = d/b) the infimum is
   (export ``clone_share_laplace``) 2 e^-eps0/(1 + e^-l): for y >= x' (and y <= x) the ratio is
   2 e^(-(x' - x_i)/b)/(1 + e^-l) >= 2 e^-eps0/(1 + e^-l); for y = x' - s inside, |y - x_i| <= Delta -
   min(s, d - s), so the ratio is >= 2 e^-eps0/(e^(-2 min(s, d-s)/b) + e^-l), larger (checked on a grid
   of x_i, x, x', y). It tends to e^-eps0 as d -> 0, so verifier bounds the supremum over d by ranges:
   on [l_i, l_{i+1}] the clone bound at loss l_{i+1} with the share at l_i, valid because the clone
   bound grows with the loss (the count pair at loss l is the mixture lambda (pair at l') +
   (1 - lambda)(the same law twice), lambda = (2p - 1)/(2p' - 1), so joint convexity; checked) and
   falls with the share (C grows stochastically and delta_c falls with c). This is the weight of FMT's SODA 2023 "stronger clones" and of Wang et al.'s (VLDB 2024) binary-RR
   bound, derived here for these two randomizers only (FMT's erratum restricts the general theorem).
   Checked: with C ~ Bin(n - 1, 2/(e^eps0 + 1)) the clone bound is above the exact delta of every
   dataset pair (n <= 5, k = 2 and 3; rational points), and the share is attained, so no larger w
   satisfies the condition.

Sources: as cited; the mirror and the window are derived here. Typos found: none.

Exports of :func:`derive`:

=================  =====================================================  =====================
name               expression                                             free symbols
=================  =====================================================  =====================
mirror_background  n - 1 - m                                              m, n
chernoff_tail      exp(-N (a ln(a/rho) + (1 - a) ln((1 - a)/(1 - rho))))  N, a, rho
clone_share_rr     2/(e^eps0 + 1)                                         epsilon0
clone_share_laplace 2 e^-eps0/(1 + e^-l)                                  epsilon0, l
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
    "clone_share_rr": ("epsilon0",),
    "clone_share_laplace": ("epsilon0", "l"),
}

n, m = sp.symbols("n m", positive=True, integer=True)
LOSS = sp.Symbol("l", positive=True)
N = sp.Symbol("N", positive=True)
a, rho = sp.symbols("a rho", positive=True)
_E0 = sp.exp(epsilon0)

Law = dict[tuple[int, ...], Fraction]


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {
        "mirror_background": n - 1 - m,
        "chernoff_tail": sp.exp(-N * (a * sp.log(a / rho) + (1 - a) * sp.log((1 - a) / (1 - rho)))),
        "clone_share_rr": 2 / (_E0 + 1),
        "clone_share_laplace": 2 * sp.exp(-epsilon0) / (1 + sp.exp(-LOSS)),
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


def _share_rr_derived() -> sp.Expr:
    """inf over y of R(x_i)(y)/((R(x)(y) + R(x')(y))/2), x != x', for k-RR: the three cases of y."""
    z = _E0 + k - 1
    at_x = (1 / z) / ((_E0 / z + 1 / z) / 2)  # y = x, x_i != x (x_i = x gives e^eps0/Z on top: larger)
    elsewhere = (1 / z) / ((1 / z + 1 / z) / 2)  # y outside {x, x'}: 1
    if not sp.simplify(elsewhere - 1) == 0:
        raise DerivationFailed("k-RR share: the ratio outside {x, x'} is not 1")
    return sp.simplify(at_x)


def _share_laplace_derived() -> sp.Expr:
    """The ratio for y >= x', x' - x_i = Delta (x_i at the far end), in units of b (eps0 = Delta/b, l = d/b)."""
    y = sp.Symbol("y", positive=True)  # y - x', in units of b
    dens = lambda dist: sp.exp(-dist) / 2  # noqa: E731
    return sp.simplify(dens(y + epsilon0) / ((dens(y + LOSS) + dens(y)) / 2))


def _check_laplace_grid(claimed: sp.Expr) -> None:
    """ratio(x_i, x, x', y) >= the claimed share at l = |x - x'| on a grid (b = 1, inputs in [-1, 1])."""
    import mpmath

    for scale in (1, 2):
        dens = lambda y, c: mpmath.exp(-abs(y - c) / scale) / (2 * scale)  # noqa: E731
        points = [mpmath.mpf(i) / 4 for i in range(-4, 5)]
        for x in points:
            for x2 in points:
                if x >= x2:
                    continue
                share = float(claimed.subs({epsilon0: sp.Rational(2, scale), LOSS: sp.nsimplify(float((x2 - x) / scale))}))
                for xi in points:
                    for y in [mpmath.mpf(j) / 4 for j in range(-12, 13)]:
                        ratio = dens(y, xi) / ((dens(y, x) + dens(y, x2)) / 2)
                        if ratio < share * (1 - 1e-12):
                            raise DerivationFailed(f"clone_share_laplace: ratio {float(ratio)} < {share} at x_i={xi}, x={x}, x'={x2}, y={y}")
    record_check("points")


def _check_loss_monotone() -> None:
    """delta_c(eps) of the count pair (p, 1 - p, 1/2, c) does not decrease with the loss (c <= 6)."""
    for c in range(7):
        for level in (Fraction(1), Fraction(5, 4)):
            values = [_count_delta(c, big, level) for big in (Fraction(6, 5), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(7))]
            if any(a > b for a, b in zip(values, values[1:])):
                raise DerivationFailed(f"count pair delta decreases with the loss at c = {c}: {[float(v) for v in values]}")
    record_check("points")


def _count_delta(c: int, big0: Fraction, level: Fraction) -> Fraction:
    """delta of the count pair (p, 1 - p, 1/2, c) at E = ``level``, by direct summation."""
    p = big0 / (big0 + 1)
    s = [Fraction(int(sp.binomial(c, j)), 2**c) for j in range(c + 1)]
    pmf = lambda j: s[j] if 0 <= j <= c else Fraction(0)  # noqa: E731
    return sum((max(Fraction(0), p * pmf(j - 1) + (1 - p) * pmf(j) - level * ((1 - p) * pmf(j - 1) + p * pmf(j))) for j in range(c + 2)), Fraction(0))


def _check_clone_bound(share: sp.Expr) -> None:
    for kk in (2, 3):
        for big in (Fraction(3), Fraction(7, 5)):
            w_sym = sp.nsimplify(share.subs({epsilon0: sp.log(sp.Rational(big))}))
            w = Fraction(int(sp.numer(w_sym)), int(sp.denom(w_sym)))
            if not 0 <= w <= 1:
                raise DerivationFailed(f"clone share {w} is not a probability")
            for users in range(2, 6 if kk == 2 else 5):
                for level in (Fraction(1), Fraction(6, 5)):
                    bound = sum((Fraction(int(sp.binomial(users - 1, c))) * w**c * (1 - w) ** (users - 1 - c) * _count_delta(c, big, level)
                                 for c in range(users)), Fraction(0))
                    worst = max(hockey(histogram_law((1,) + others, big, kk), histogram_law((0,) + others, big, kk), level)
                                for others in itertools.combinations_with_replacement(range(kk), users - 1))
                    if bound < worst:
                        raise DerivationFailed(f"clone bound {float(bound)} < exact {float(worst)} (k = {kk}, n = {users}, E0 = {big}, E = {level})")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    _check_mirror(claim["mirror_background"])
    require_equal(_chernoff_derived(), claim["chernoff_tail"], "Chernoff bound at its optimal theta",
                  [{N: s, a: sp.Rational(j, 10), rho: sp.Rational(r, 10)} for s in (3, 40) for j in (5, 9) for r in (1, 4)])
    _check_chernoff_tails(claim["chernoff_tail"])
    require_equal(_share_rr_derived(), claim["clone_share_rr"], "k-RR clone share (any k)",
                  [{epsilon0: e, k: kk} for e in (sp.Rational(1, 2), 2) for kk in (2, 3, 10)])
    _check_clone_bound(claim["clone_share_rr"])
    require_equal(_share_laplace_derived(), claim["clone_share_laplace"], "Laplace clone share at loss l",
                  [{epsilon0: e, LOSS: lo} for e in (1, 2) for lo in (sp.Rational(1, 3), 1)])
    _check_laplace_grid(claim["clone_share_laplace"])
    _check_loss_monotone()
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
