"""Shuffled k-ary randomized response: the blanket UPPER bound and the one-symbol LOWER pairs
(verifier.shuffle.blanket, verifier.shuffle.one_symbol).

Setting: n users, k-ary randomized response with p = e^eps0/Z on the user's own symbol and q = 1/Z on
each other one (Z = e^eps0 + k - 1), the release is the histogram of the n reports; the victim's input
is 0 (law r0) or 1 (law r1), the other users' inputs fixed (the background).

1. Blanket share (export ``blanket_share``). The report law of a user holding s is
   lam Uniform(k) + (1 - lam) delta_s with lam = k/Z: solved here from the masses (q = lam/k off s,
   p = lam/k + 1 - lam on s). So each other user is, with probability lam and independently of its
   input, a uniform report; revealing which users are not (their reports are then their symbols,
   known) releases more than the histogram, which is a function of the revealed release: for every
   background and both orders, H_E(P || Q) <= E_N g(N), N ~ Bin(n - 1, lam), g(N) = H_E of the
   victim's report plus N uniform reports (joint convexity over the revealed set, shift invariance).
   g does not increase with N (one more uniform report is a Markov kernel applied to both laws).
   Checked: every background, both orders, n <= 5, k in {3, 4}, E0 = e^eps0 in {3, 7/5},
   E in {1, 6/5, 2}, exactly in rationals on the full histogram (no lumping), with the bound's N
   bucketed 1 and 2 wide at the buckets' left ends; g non-increasing.
2. Likelihood of the blanket release. With M = N + 1 reports and histogram H,
   P(H) = Mult(M, uniform)(H) * k/M * sum_s r0(s) H_s (the victim is any one of the M reports):
   checked against the convolution for k in {3, 4}, N <= 4, both laws. In the counts a = H_0,
   b = H_1: P = T(a, b) (lam + k (p - q) a/M), Q = T(a, b) (lam + k (p - q) b/M) (export
   ``blanket_weight_slope`` = k(p - q) = k (e^eps0 - 1)/Z).
3. One-symbol pairs. If the other n - 1 users all hold t, with report law theta, then
   P(h) = Mult(n, theta)(h) * sum_c (r0(c)/theta(c)) h_c / n, linear in h: checked against the
   convolution for t in {0, 2}, k in {3, 4}, n <= 5. Each such pair is a pair of neighbouring
   datasets, so its hockey-stick divergence is a LOWER bound on the shuffle model's delta(eps).
4. Partial blanket (verifier.shuffle.kary_search). Revealing the blanket only for the users whose
   inputs lie outside a set S of symbols ({0, 1} in S) gives, for each order, H_E <= E_N g_S(N),
   N ~ Bin(R, lam), R the number of those users, g_S(N) = H_E of the victim, the users on S and N
   uniform reports (step 1's argument with the users on S kept); a larger S reveals less, so its
   bound is at most the smaller S's. Checked: every background, both orders, every S (k = 4, n <= 4,
   E0 in {3, 7/5}, E in {6/5, 2}), exactly in rationals on the full histogram: each bound is at
   least the background's divergence, S = every symbol gives it exactly, and S ⊂ S' never raises it.
5. Orbits (verifier.shuffle.orbits, the laws of verifier.shuffle.kary_search). The victim's two laws
   are invariant under every permutation of the third symbols that the other users hold equally
   often (relabelling them maps the background to itself), so the orbit of a histogram under those
   permutations (each group's counts sorted) is sufficient: the hockey-stick divergence of the orbit
   masses is the histogram's. And the others' reports are sum_T P(T) U^(m - |T|)(delta_T), T the
   truthful reports (each user truthful with probability 1 - lam, independently; step 1), U one
   uniform report. Checked: every background with k = 5, n <= 5, E0 in {3, 7/5}, exactly in
   rationals on the full histogram: both laws invariant, the orbit divergence equal at E in
   {1, 6/5, 2}, both orders, and the truthful-then-uniform law equal to the convolution.

Sources: the blanket decomposition is Balle, Bell, Gascon & Nissim's privacy blanket (CRYPTO 2019) for
k-ary randomized response, used here as a post-processing bound (FMT's clone argument with the
uniform share); the likelihood formulas are derived here. Typos found: none.

Exports of :func:`derive`:

====================  ================================  =================
name                  expression                        free symbols
====================  ================================  =================
blanket_share         k/(e^eps0 + k - 1)                epsilon0, k
blanket_weight_slope  k (e^eps0 - 1)/(e^eps0 + k - 1)   epsilon0, k
====================  ================================  =================
"""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):  # run as `python proofs/shuffle_blanket.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, epsilon0, k, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "histogram_law", "hockey", "blanket_bound", "partial_blanket_bound", "one_symbol_law"]

EXPORT_SYMBOLS = {
    "blanket_share": ("epsilon0", "k"),
    "blanket_weight_slope": ("epsilon0", "k"),
}

_E0 = sp.exp(epsilon0)
_Z = _E0 + k - 1


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {"blanket_share": k / _Z, "blanket_weight_slope": k * (_E0 - 1) / _Z}


def _share_derived() -> sp.Expr:
    """lam from q = lam/k (a symbol the user does not hold), checked against p = lam/k + 1 - lam."""
    lam = sp.Symbol("lam")
    found = sp.solve(sp.Eq(1 / _Z, lam / k), lam)
    if len(found) != 1:
        raise DerivationFailed(f"blanket share: {found}")
    share = sp.simplify(found[0])
    if sp.simplify(share / k + 1 - share - _E0 / _Z) != 0:
        raise DerivationFailed("blanket share: the own symbol's mass does not match")
    return share


def _slope_derived(share: sp.Expr) -> sp.Expr:
    """k (p - q): the weight of a in P = T (lam + k (p - q) a / M) (step 2)."""
    return sp.simplify(k * (_E0 / _Z - 1 / _Z))


def _report(symbol: int, size: int, big0: Fraction) -> list[Fraction]:
    z = big0 + size - 1
    return [big0 / z if y == symbol else 1 / z for y in range(size)]


def histogram_law(laws: list[list[Fraction]]) -> dict[tuple[int, ...], Fraction]:
    """Exact law of the histogram of independent reports with the given laws."""
    size = len(laws[0]) if laws else 0
    out: dict[tuple[int, ...], Fraction] = {tuple([0] * size): Fraction(1)}
    for law in laws:
        nxt: dict[tuple[int, ...], Fraction] = {}
        for h, mass in out.items():
            for y, m in enumerate(law):
                if m:
                    g = list(h)
                    g[y] += 1
                    key = tuple(g)
                    nxt[key] = nxt.get(key, Fraction(0)) + mass * m
        out = nxt
    return out


def hockey(p: dict, q: dict, level: Fraction) -> Fraction:
    """sum (P - E Q)_+ over the union of the supports."""
    return sum((max(Fraction(0), p.get(h, Fraction(0)) - level * q.get(h, Fraction(0))) for h in set(p) | set(q)), Fraction(0))


def _binomial(size: int, rho: Fraction) -> list[Fraction]:
    return [math.comb(size, j) * rho**j * (1 - rho) ** (size - j) for j in range(size + 1)]


def _g_values(users: int, size: int, big0: Fraction, level: Fraction) -> list[Fraction]:
    """g(N), N = 0 … users − 1, on the full histogram (victim 0 against 1)."""
    uniform = [Fraction(1, size)] * size
    return [hockey(histogram_law([_report(0, size, big0)] + [uniform] * n), histogram_law([_report(1, size, big0)] + [uniform] * n), level)
            for n in range(users)]


def blanket_bound(users: int, size: int, big0: Fraction, level: Fraction, share: Fraction, bucket: int) -> Fraction:
    """The claimed bound of step 1 (N bucketed ``bucket`` wide from N = 0)."""
    g = _g_values(users, size, big0, level)
    if any(x < y for x, y in zip(g, g[1:])):
        raise DerivationFailed(f"g increases with N (n = {users}, k = {size}, E0 = {big0}, E = {level})")
    weights = _binomial(users - 1, share)
    return sum((sum(weights[left:left + bucket], Fraction(0)) * g[left] for left in range(0, users, bucket)), Fraction(0))


def partial_blanket_bound(kept: list[int], pool: int, size: int, big0: Fraction, level: Fraction, share: Fraction, forward: bool) -> Fraction:
    """Step 4's bound for one order: the users with inputs ``kept`` exact, ``pool`` others revealed."""
    uniform = [Fraction(1, size)] * size
    laws = [_report(s, size, big0) for s in kept]
    first, second = (0, 1) if forward else (1, 0)
    weights = _binomial(pool, share)
    return sum((w * hockey(histogram_law([_report(first, size, big0)] + laws + [uniform] * n),
                           histogram_law([_report(second, size, big0)] + laws + [uniform] * n), level)
                for n, w in enumerate(weights)), Fraction(0))


def one_symbol_law(users: int, size: int, big0: Fraction, held: int, victim: int) -> dict[tuple[int, ...], Fraction]:
    """Step 3's claimed P(h) = Mult(n, theta)(h) sum_c (r(c)/theta(c)) h_c / n on the full histogram."""
    theta, r = _report(held, size, big0), _report(victim, size, big0)
    out = {}
    for h in itertools.product(range(users + 1), repeat=size):
        if sum(h) != users:
            continue
        mult = Fraction(math.factorial(users))
        for c in range(size):
            mult = mult / math.factorial(h[c]) * theta[c] ** h[c]
        out[h] = mult * sum((r[c] / theta[c] * h[c] for c in range(size)), Fraction(0)) / users
    return out


def _rational(expr: sp.Expr, big0: Fraction, size: int) -> Fraction:
    value = sp.nsimplify(expr.subs({epsilon0: sp.log(sp.Rational(big0.numerator, big0.denominator)), k: size}))
    return Fraction(int(sp.numer(value)), int(sp.denom(value)))


def _check_likelihoods(slope: sp.Expr) -> None:
    for size in (3, 4):
        for big0 in (Fraction(3), Fraction(7, 5)):
            uniform = [Fraction(1, size)] * size
            kg = _rational(slope, big0, size)
            lam = Fraction(size) / (big0 + size - 1)
            for others in range(5):
                m = others + 1
                for victim in (0, 1):
                    law = histogram_law([_report(victim, size, big0)] + [uniform] * others)
                    base = histogram_law([uniform] * m)
                    for h, mass in law.items():
                        claimed = base[h] * (lam + kg * Fraction(h[victim], m))
                        if claimed != mass:
                            raise DerivationFailed(f"blanket likelihood at {h} (k = {size}, N = {others}, E0 = {big0})")
            for users in range(2, 6):
                for held in (0, 2):
                    for victim in (0, 1):
                        law = histogram_law([_report(victim, size, big0)] + [_report(held, size, big0)] * (users - 1))
                        if one_symbol_law(users, size, big0, held, victim) != law:
                            raise DerivationFailed(f"one-symbol likelihood (k = {size}, n = {users}, held {held}, victim {victim})")
    record_check("points")


def _check_bound(share_expr: sp.Expr) -> None:
    for size in (3, 4):
        for big0 in (Fraction(3), Fraction(7, 5)):
            share = _rational(share_expr, big0, size)
            if not 0 < share <= 1:
                raise DerivationFailed(f"blanket share {share} is not a probability")
            for users in range(2, 6):
                for level in (Fraction(1), Fraction(6, 5), Fraction(2)):
                    worst = Fraction(0)
                    for others in itertools.combinations_with_replacement(range(size), users - 1):
                        laws = [_report(s, size, big0) for s in others]
                        p = histogram_law([_report(0, size, big0)] + laws)
                        q = histogram_law([_report(1, size, big0)] + laws)
                        worst = max(worst, hockey(p, q, level), hockey(q, p, level))
                    for bucket in (1, 2):
                        bound = blanket_bound(users, size, big0, level, share, bucket)
                        if worst > bound:
                            raise DerivationFailed(f"blanket bound {float(bound)} < exact {float(worst)} "
                                                   f"(n = {users}, k = {size}, E0 = {big0}, E = {level}, bucket {bucket})")
    record_check("points")


def _check_partial(share_expr: sp.Expr) -> None:
    size = 4
    thirds = list(range(2, size))
    subsets = [frozenset(c) for r in range(len(thirds) + 1) for c in itertools.combinations(thirds, r)]
    for big0 in (Fraction(3), Fraction(7, 5)):
        share = _rational(share_expr, big0, size)
        for users in range(2, 5):
            for level in (Fraction(6, 5), Fraction(2)):
                for others in itertools.combinations_with_replacement(range(size), users - 1):
                    laws = [_report(s, size, big0) for s in others]
                    for forward in (True, False):
                        first, second = (0, 1) if forward else (1, 0)
                        exact = hockey(histogram_law([_report(first, size, big0)] + laws), histogram_law([_report(second, size, big0)] + laws), level)
                        bounds = {}
                        for subset in subsets:
                            kept = [s for s in others if s < 2 or s in subset]
                            bounds[subset] = partial_blanket_bound(kept, len(others) - len(kept), size, big0, level, share, forward)
                            if bounds[subset] < exact:
                                raise DerivationFailed(f"partial blanket {float(bounds[subset])} < exact {float(exact)} "
                                                       f"(others {others}, kept {sorted(subset)}, E0 = {big0}, E = {level})")
                        if bounds[frozenset(thirds)] != exact:
                            raise DerivationFailed(f"partial blanket keeping every symbol is not the divergence (others {others})")
                        for small in subsets:
                            for large in subsets:
                                if small < large and bounds[large] > bounds[small]:
                                    raise DerivationFailed(f"keeping {sorted(large)} raises the bound over {sorted(small)} (others {others})")
    record_check("points")


def _truthful_then_uniform(others: tuple[int, ...], size: int, share: Fraction) -> dict[tuple[int, ...], Fraction]:
    """sum_T P(T) U^(m - |T|)(delta_T): each user truthful with probability 1 - share, else uniform."""
    out: dict[tuple[int, ...], Fraction] = {}
    uniform = [Fraction(1, size)] * size
    for truthful in itertools.product((False, True), repeat=len(others)):
        weight = math.prod(((1 - share) if t else share for t in truthful), start=Fraction(1))
        base = [0] * size
        for s, t in zip(others, truthful):
            base[s] += t
        for h, mass in histogram_law([uniform] * (len(others) - sum(truthful))).items() if sum(truthful) < len(others) else [((0,) * size, Fraction(1))]:
            key = tuple(a + b for a, b in zip(base, h))
            out[key] = out.get(key, Fraction(0)) + weight * mass
    return out


def _check_orbits(share_expr: sp.Expr) -> None:
    size = 5
    for big0 in (Fraction(3), Fraction(7, 5)):
        share = _rational(share_expr, big0, size)
        for users in range(2, 6):
            for others in itertools.combinations_with_replacement(range(size), users - 1):
                laws = [_report(s, size, big0) for s in others]
                if _truthful_then_uniform(others, size, share) != histogram_law(laws):
                    raise DerivationFailed(f"truthful-then-uniform law differs from the convolution (others {others}, E0 = {big0})")
                groups = [[s for s in range(2, size) if others.count(s) == c] for c in sorted({others.count(s) for s in range(2, size)})]

                def orbit(h: tuple[int, ...]) -> tuple[int, ...]:
                    return h[:2] + tuple(v for group in groups for v in sorted((h[s] for s in group), reverse=True))

                p, q = histogram_law([_report(0, size, big0)] + laws), histogram_law([_report(1, size, big0)] + laws)
                lumped: list[dict[tuple[int, ...], Fraction]] = []
                for law in (p, q):
                    for h, mass in law.items():
                        for perm in itertools.product(*(itertools.permutations(group) for group in groups)):
                            image = list(h)
                            for group, moved in zip(groups, perm):
                                for s, t in zip(group, moved):
                                    image[t] = h[s]
                            if law.get(tuple(image), Fraction(0)) != mass:
                                raise DerivationFailed(f"a law is not invariant under the equal-count third symbols (others {others})")
                    orbits: dict[tuple[int, ...], Fraction] = {}
                    for h, mass in law.items():
                        orbits[orbit(h)] = orbits.get(orbit(h), Fraction(0)) + mass
                    lumped.append(orbits)
                for level in (Fraction(1), Fraction(6, 5), Fraction(2)):
                    if hockey(p, q, level) != hockey(lumped[0], lumped[1], level) or hockey(q, p, level) != hockey(lumped[1], lumped[0], level):
                        raise DerivationFailed(f"the orbit divergence differs from the histogram's (others {others}, E = {level})")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    points = [{epsilon0: e, k: kk} for e in (sp.Rational(1, 2), 1, 3) for kk in (2, 3, 10)]
    require_equal(_share_derived(), claim["blanket_share"], "blanket share of k-ary randomized response", points)
    require_equal(_slope_derived(claim["blanket_share"]), claim["blanket_weight_slope"], "slope of the blanket likelihood", points)
    _check_likelihoods(claim["blanket_weight_slope"])
    _check_bound(claim["blanket_share"])
    _check_partial(claim["blanket_share"])
    _check_orbits(claim["blanket_share"])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
