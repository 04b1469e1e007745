"""The coupling term that carries FMT's clone bound from eps0-DP to (eps0, delta0)-DP local randomizers
(verifier.shuffle.approx), derived here for the CLONE bound (not only FMT's closed form).

Setting: n users, one report each from a fixed local randomizer R that is (eps0, delta0)-DP under
replace-one neighbours (H_{e^eps0}(R(x) || R(x')) <= delta0 for every ordered pair of inputs), the
reports released in uniformly random order; eps0 > 0; E = e^eps0, u = e^-eps0, c = 1/(1 + E).

Claim: for every eps >= 0 and every pair of neighbouring datasets X0 = (x0, x2..xn), X1 = (x1, x2..xn),

    H_{e^eps}(A(X0) || A(X1)) <= delta_clone(eps0, n, eps) + coupling,
    coupling = (1 + e^eps) (tv_victim + (n - 1) tv_other),

    tv_victim = delta0 / (1 + E),        tv_other = u (delta0 + tv_victim),

where delta_clone is the hockey-stick divergence of FMT's clone pair (Thm 3.2 of Feldman, McMillan &
Talwar, arXiv:2012.12803; verifier.shuffle.clones). Proof (each step checked below):

1. Victim (tv_victim). With e_b = (P_b - E P_{1-b})_+ (P_b = R(x_b); masses a_b <= delta0), put
   P0' = P0 - c e0 + c e1 and P1' = P1 + c e0 - c e1 (c solves 1 - alpha = E alpha: the largest ratio
   after the move is exactly E). Then P0' <= E P1' and P1' <= E P0' pointwise, but the masses are
   1 -+ d, d = c (a0 - a1). Move d from P1' to P0' (say d >= 0) at points where E P1' - P0' > 0, at most
   (E P1' - P0')/(1 + E) at each: that keeps both ratios, and the room is
   c * sum(E P1' - P0') = c (E - 1) + d >= d. Each TV(P_b, P_b') = c max(a0, a1) <= tv_victim.
2. Others (tv_other). The clone reduction needs only: P0', P1' are eps0-indistinguishable (so
   P_b' = p W_b + (1 - p) W_{1-b} with p = E/(1 + E), W0 = (E P0' - P1')/(E - 1) >= 0) and every other
   user's law Q' >= u (P0' + P1')/2 = u (W0 + W1)/2 (then Q' = u (W0 + W1)/2 + (1 - u) LO with LO a
   law, and the shuffle of the modified reports is the clone pair post-processed: the clone set is
   uniform given its size). For Q = R(x_i) put T = u (P0' + P1')/2; the deficit
   D = sum (T - Q)_+ <= (u/2) sum_b sum (P_b' - E Q)_+ <= u (delta0 + tv_victim), since
   (x + y)_+ <= x_+ + y_+ gives H(P_b' || Q) <= H(P_b || Q) + TV(P_b, P_b'). Q' = max(Q, T) minus D
   taken from (Q - T)_+ in proportion; that room is 1 - u + D >= D because T has mass u. TV(Q, Q') = D.
3. Coupling (export ``coupling``). The modified reports' product law is within the sum of the users'
   TVs of the true one, so TV(A(X_b), A'(X_b)) <= tv_victim + (n - 1) tv_other for b = 0, 1, and
   P(S) - e^eps Q(S) <= P'(S) - e^eps Q'(S) + TV(P, P') + e^eps TV(Q, Q') for every event S.

Relation to the source: FMT Thm 3.8 states the term (e^eps + 1)(1 + e^-eps0/2) n delta0 (as transcribed
by Liew et al. Eq. (11) and used by verifier; the primary text of its Lemma 3.7 was not read here). Per
user it exceeds what is proved here by ``fmt_margin`` >= 0 (tv_other/delta0 <= 1 + u/2, and
tv_victim/delta0 = c <= 1/2 < 1 + u/2), so verifier's term is a valid (looser) coupling for the clone
bound whatever Lemma 3.7's exact constant is. tv_victim cannot be smaller: for n = 1 and the
(eps0, delta0)-randomized-response pair the claim holds with equality for 0 <= eps < eps0 (checked).

Checks: the identities symbolically; steps 1-2 by running the constructions in exact rational
arithmetic on finite randomizers (every victim pair, every other input) and checking ratios, masses
and TVs against the claimed tv_victim, tv_other; the claim end to end against the exact delta of the
shuffled histogram (every dataset, n <= 4) with the clone pair's exact delta, at rational e^eps0, e^eps.

Typos found: none in the implemented term; the implementation's docstring had attributed a
per-input TV of (1 + e^-eps0/2) delta0 to Lemma 3.7 from the transcription only.

Exports of :func:`derive`:

============  ==============================================================  ===============================
name          expression                                                      free symbols
============  ==============================================================  ===============================
tv_victim     delta0/(1 + e^eps0)                                             delta0, epsilon0
tv_other      e^-eps0 (delta0 + delta0/(1 + e^eps0))                          delta0, epsilon0
coupling      (1 + e^eps)(tv_victim + (n - 1) tv_other)                       delta0, epsilon, epsilon0, n
fmt_margin    (1 - e^-eps0)(1 + 3 e^-eps0/2)/(1 + e^-eps0)                    epsilon0
============  ==============================================================  ===============================
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/shuffle_coupling.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, delta0, epsilon, epsilon0, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "victim_pair", "other_law", "clone_delta", "shuffled_delta"]

EXPORT_SYMBOLS = {
    "tv_victim": ("delta0", "epsilon0"),
    "tv_other": ("delta0", "epsilon0"),
    "coupling": ("delta0", "epsilon", "epsilon0", "n"),
    "fmt_margin": ("epsilon0",),
}

n = sp.Symbol("n", positive=True, integer=True)
_E0 = sp.exp(epsilon0)
_U = sp.exp(-epsilon0)

Law = list[Fraction]


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    tv_victim = delta0 / (1 + _E0)
    tv_other = _U * (delta0 + delta0 / (1 + _E0))
    return {
        "tv_victim": tv_victim,
        "tv_other": tv_other,
        "coupling": (1 + sp.exp(epsilon)) * (tv_victim + (n - 1) * tv_other),
        "fmt_margin": (1 - _U) * (1 + sp.Rational(3, 2) * _U) / (1 + _U),
    }


# ---- the constructions of steps 1 and 2, in exact rationals ------------------------------------


def _hockey(p: Sequence[Fraction], q: Sequence[Fraction], big: Fraction) -> Fraction:
    return sum((max(Fraction(0), a - big * b) for a, b in zip(p, q)), Fraction(0))


def _tv(p: Sequence[Fraction], q: Sequence[Fraction]) -> Fraction:
    return sum((max(Fraction(0), a - b) for a, b in zip(p, q)), Fraction(0))


def victim_pair(p0: Law, p1: Law, big: Fraction) -> tuple[Law, Law]:
    """Step 1: (P0', P1') eps0-indistinguishable (E = ``big`` > 1) near (P0, P1)."""
    c = 1 / (1 + big)
    e0 = [max(Fraction(0), a - big * b) for a, b in zip(p0, p1)]
    e1 = [max(Fraction(0), b - big * a) for a, b in zip(p0, p1)]
    q0 = [a - c * x + c * y for a, x, y in zip(p0, e0, e1)]
    q1 = [b + c * x - c * y for b, x, y in zip(p1, e0, e1)]
    d = c * (sum(e0) - sum(e1))
    low, high = (q0, q1) if d >= 0 else (q1, q0)  # move |d| from ``high`` to ``low``
    room = [(big * h - l) / (1 + big) for l, h in zip(low, high)]
    if min(room) < 0 or sum(room) < abs(d):
        raise DerivationFailed(f"victim pair: no room to move {abs(d)} (room {sum(room)})")
    total = sum(room)
    for i, r in enumerate(room):
        s = abs(d) * r / total if total > 0 else Fraction(0)
        low[i] += s
        high[i] -= s
    return q0, q1


def other_law(q: Law, p0: Law, p1: Law, big: Fraction) -> Law:
    """Step 2: Q' >= (P0' + P1')/(2E) near Q (``p0``, ``p1`` the modified victim laws)."""
    target = [(a + b) / (2 * big) for a, b in zip(p0, p1)]
    deficit = sum(max(Fraction(0), t - x) for t, x in zip(target, q))
    excess = [max(Fraction(0), x - t) for t, x in zip(target, q)]
    if sum(excess) < deficit:
        raise DerivationFailed("other user: no room for the deficit")
    theta = deficit / sum(excess) if deficit > 0 else Fraction(0)
    return [max(x, t) - theta * e for x, t, e in zip(q, target, excess)]


def _randomizers() -> list[list[Law]]:
    """Finite randomizers (rows: inputs; columns: outputs), rational, some with zero masses."""
    raw = [
        [[5, 3, 1, 1], [1, 4, 4, 1], [2, 2, 1, 5]],
        [[9, 1, 0], [3, 3, 4], [1, 2, 7]],
        [[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 1, 1]],
        [[7, 2, 1], [6, 3, 1], [2, 2, 6], [1, 8, 1]],
    ]
    out = [[[Fraction(v, sum(row)) for v in row] for row in rr] for rr in raw]
    for big, d0 in ((Fraction(2), Fraction(1, 20)), (Fraction(3, 2), Fraction(1, 100))):
        w = (1 - d0) / (1 + big)
        out.append([[d0, w * big, w, Fraction(0)], [Fraction(0), w, w * big, d0]])  # (eps0, delta0)-RR
    return out


def _local_delta0(rows: list[Law], big: Fraction) -> Fraction:
    return max(_hockey(a, b, big) for a, b in itertools.permutations(rows, 2))


def _check_constructions(tv_victim: sp.Expr, tv_other: sp.Expr) -> None:
    for rows in _randomizers():
        for big in (Fraction(11, 10), Fraction(3, 2), Fraction(2), Fraction(5), Fraction(40)):
            d0 = _local_delta0(rows, big)
            point = {epsilon0: sp.log(sp.Rational(big.numerator, big.denominator)), delta0: sp.Rational(d0.numerator, d0.denominator)}
            bound_v = sp.nsimplify(tv_victim.subs(point))
            bound_o = sp.nsimplify(tv_other.subs(point))
            for i, j in itertools.permutations(range(len(rows)), 2):
                p0, p1 = victim_pair(rows[i], rows[j], big)
                for law in (p0, p1):
                    if min(law) < 0 or sum(law) != 1:
                        raise DerivationFailed(f"victim pair is not a law: {law}")
                if any(a > big * b or b > big * a for a, b in zip(p0, p1)):
                    raise DerivationFailed(f"victim pair not eps0-indistinguishable at E = {big}")
                tv = max(_tv(rows[i], p0), _tv(rows[j], p1))
                if sp.Rational(tv.numerator, tv.denominator) > bound_v:
                    raise DerivationFailed(f"tv_victim: construction moved {tv} > claimed {bound_v} (E = {big}, delta0 = {d0})")
                for q in rows:  # every input, the victim's two included
                    new = other_law(q, p0, p1, big)
                    if min(new) < 0 or sum(new) != 1 or any(x < (a + b) / (2 * big) for x, a, b in zip(new, p0, p1)):
                        raise DerivationFailed(f"other user's law fails the clone decomposition at E = {big}")
                    moved = _tv(q, new)
                    if sp.Rational(moved.numerator, moved.denominator) > bound_o:
                        raise DerivationFailed(f"tv_other: construction moved {moved} > claimed {bound_o} (E = {big}, delta0 = {d0})")
    record_check("points")


# ---- end to end: exact delta of the shuffle against clone + coupling ----------------------------


def clone_delta(users: int, big: Fraction, big_eps: Fraction) -> Fraction:
    """Exact delta(eps) of FMT's clone pair (A + D, C - A + 1 - D) vs (A + 1 - D, C - A + D),
    C ~ Bin(users - 1, 1/E), A ~ Bin(C, 1/2), D ~ Bern(E/(E + 1)); ``big_eps`` = e^eps."""
    u, p = 1 / big, big / (big + 1)
    law_p: dict[tuple[int, int], Fraction] = {}
    law_q: dict[tuple[int, int], Fraction] = {}
    for c in range(users):
        wc = sp.binomial(users - 1, c)
        w = Fraction(int(wc)) * u**c * (1 - u) ** (users - 1 - c)
        for a in range(c + 1):
            wa = w * Fraction(int(sp.binomial(c, a)), 2**c)
            for d, pd in ((1, p), (0, 1 - p)):
                kp = (a + d, c - a + 1 - d)
                kq = (a + 1 - d, c - a + d)
                law_p[kp] = law_p.get(kp, Fraction(0)) + wa * pd
                law_q[kq] = law_q.get(kq, Fraction(0)) + wa * pd
    keys = set(law_p) | set(law_q)
    return sum((max(Fraction(0), law_p.get(k, Fraction(0)) - big_eps * law_q.get(k, Fraction(0))) for k in keys), Fraction(0))


def _histogram_law(data: Sequence[int], rows: list[Law]) -> dict[tuple[int, ...], Fraction]:
    m = len(rows[0])
    law = {tuple([0] * m): Fraction(1)}
    for x in data:
        nxt: dict[tuple[int, ...], Fraction] = {}
        for hist, mass in law.items():
            for y, py in enumerate(rows[x]):
                if py:
                    h = list(hist)
                    h[y] += 1
                    nxt[tuple(h)] = nxt.get(tuple(h), Fraction(0)) + mass * py
        law = nxt
    return law


def shuffled_delta(rows: list[Law], users: int, big_eps: Fraction) -> Fraction:
    """Exact worst delta(eps) of the shuffled reports over every neighbouring pair of datasets."""
    worst = Fraction(0)
    for others in itertools.combinations_with_replacement(range(len(rows)), users - 1):
        for a, b in itertools.permutations(range(len(rows)), 2):
            p, q = _histogram_law((a, *others), rows), _histogram_law((b, *others), rows)
            worst = max(worst, sum((max(Fraction(0), v - big_eps * q.get(h, Fraction(0))) for h, v in p.items()), Fraction(0)))
    return worst


def _check_end_to_end(coupling: sp.Expr) -> None:
    cases = _randomizers()
    for rows in (cases[1], cases[3], cases[4], cases[5]):
        for big in (Fraction(3, 2), Fraction(4)):
            d0 = _local_delta0(rows, big)
            for users in (1, 2, 3, 4):
                for big_eps in (Fraction(1), Fraction(6, 5)):
                    truth = shuffled_delta(rows, users, big_eps)
                    term = coupling.subs({epsilon0: sp.log(sp.Rational(big.numerator, big.denominator)),
                                          delta0: sp.Rational(d0.numerator, d0.denominator),
                                          epsilon: sp.log(sp.Rational(big_eps.numerator, big_eps.denominator)), n: users})
                    cl = clone_delta(users, big, big_eps)
                    bound = sp.Rational(cl.numerator, cl.denominator) + sp.nsimplify(sp.simplify(term))
                    if sp.Rational(truth.numerator, truth.denominator) > bound:
                        raise DerivationFailed(f"coupling: exact delta {float(truth):.6g} > clone + coupling {float(bound):.6g} "
                                               f"(n = {users}, E = {big}, e^eps = {big_eps}, delta0 = {d0})")
    record_check("points")


def _check_tight_at_one_user(coupling: sp.Expr) -> None:
    """n = 1, the (eps0, delta0)-RR pair (delta(eps) = delta0 + (1 - delta0)(E - e^eps)/(1 + E) on
    0 <= eps < eps0, proofs/approx_dp.py): clone (e^eps0 - e^eps)/(e^eps0 + 1) + coupling equals it."""
    truth = delta0 + (1 - delta0) * (_E0 - sp.exp(epsilon)) / (1 + _E0)
    clone_one = (_E0 - sp.exp(epsilon)) / (_E0 + 1)
    require_equal(clone_one + coupling.subs(n, 1), truth, "coupling tight at n = 1 (RR pair)",
                  [{epsilon0: e0, epsilon: e, delta0: d} for e0 in (sp.Rational(1, 2), 2)
                   for e in (0, sp.Rational(1, 4)) for d in (sp.Rational(1, 10), sp.Rational(1, 1000))])


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    pts = [{epsilon0: e0, delta0: d, epsilon: e, n: m} for e0 in (sp.Rational(1, 3), 2) for d in (sp.Rational(1, 7),)
           for e in (0, sp.Rational(1, 2)) for m in (1, 5)]
    # step 1: alpha = beta with 1 - alpha = E beta (the largest ratio after the move is E)
    alpha = sp.Symbol("alpha_", positive=True)
    (root,) = sp.solve(sp.Eq(1 - alpha, _E0 * alpha), alpha)
    require_equal(root * delta0, claim["tv_victim"], "tv_victim", pts)
    # the room to rebalance: c * sum(E P1' - P0') with masses 1 + d, 1 - d is c (E - 1) + d
    d = sp.Symbol("d_", real=True)
    require_equal(root * (_E0 * (1 + d) - (1 - d)), root * (_E0 - 1) + d, "victim rebalancing room", None)
    # step 2: the deficit against u (P0' + P1')/2 is at most u/2 * 2 (delta0 + tv_victim)
    require_equal(_U / 2 * 2 * (delta0 + claim["tv_victim"]), claim["tv_other"], "tv_other", pts)
    # step 3: TV perturbation of both sides of the hockey stick
    require_equal((1 + sp.exp(epsilon)) * (claim["tv_victim"] + (n - 1) * claim["tv_other"]), claim["coupling"], "coupling", pts)
    # FMT's per-user constant 1 + u/2 minus the proved one
    require_equal(1 + _U / 2 - claim["tv_other"] / delta0, claim["fmt_margin"], "fmt_margin", pts)
    u = sp.Symbol("u_", positive=True)
    margin_u = sp.factor(claim["fmt_margin"].subs(epsilon0, -sp.log(u)))
    for value in (sp.Rational(1, 10**6), sp.Rational(1, 3), sp.Rational(999, 1000)):
        if not margin_u.subs(u, value) > 0:
            raise DerivationFailed(f"fmt_margin not positive at u = {value}: {margin_u}")
    if sp.simplify(margin_u.subs(u, 1)) != 0:
        raise DerivationFailed("fmt_margin should vanish at eps0 = 0")
    record_check("points")
    _check_tight_at_one_user(claim["coupling"])
    _check_constructions(claim["tv_victim"], claim["tv_other"])
    _check_end_to_end(claim["coupling"])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
