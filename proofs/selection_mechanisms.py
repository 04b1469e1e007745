"""The exponential mechanism and permute-and-flip: their worst single-run hockey-stick divergences.

Setting: m candidates with scores u(x) in R^m, each score moving by at most Delta between
neighbours; write eps0 for the mechanism's epsilon and gamma = e^eps >= 1.

Exponential mechanism (weights e^{eps0 u/(2 Delta)}). Every log-ratio ln(P(r)/Q(r)) equals
eps0 (u_r - u'_r)/(2 Delta) minus the log-ratio of the normalisers, so all of them lie in one
interval of length eps0: the mechanism is eps0-bounded range (Durfee & Rogers 2019).

1. (two points are the worst) For a BR pair, X = P/Q under Q lies in [A, A e^{eps0}] with
   E_Q[X] = 1 and H_gamma(P||Q) = E_Q[(X - gamma)_+]. The map X -> (X - gamma)_+ is convex, so it
   lies below its chord on [A, A e^eps0]; the chord's expectation depends on E_Q[X] = 1 only, and
   is attained by the law on the two end points with mean 1. So the sup over BR pairs is the sup
   over x = A in [e^{-eps0}, 1] of the two-point pair: Q-mass w = (1 - x)/(x (e^eps0 - 1)) on
   X = x e^eps0, the rest on X = x, H = w (x e^eps0 - gamma)_+.
2. (the sup, export ``br_delta``) For 1 <= gamma <= e^eps0 the maximum over x is at
   x* = sqrt(gamma e^{-eps0}) (the stationary point, inside the range) and equals
   (e^{eps0/2} - e^{eps/2})^2 / (e^eps0 - 1); at eps = 0 this is tanh(eps0/4). Derived here by
   solving d/dx = 0 and checked at points; for eps < 0 the swapped family (also BR) gives
   H_gamma = 1 - gamma + gamma H_{1/gamma}(Q||P), the same formula on [-eps0, eps0] (export
   ``br_delta`` is the Piecewise over every real eps).
3. (the pair, export ``br_pair_delta``) The pair with loss density under Q
   q(l) = e^{eps0/2} e^{-l/2} / (2 (e^eps0 - 1)) on [-eps0, eps0] (under P: q(l) e^l) is a
   probability pair whose hockey stick, integrated here from the density, equals ``br_delta`` at
   every eps: it is the class's tight dominating pair (verifier.pairs.bounded_range).
4. (attained, export ``em_loss_gap``) Two candidates with scores (a, 0) against (a + Delta, -Delta):
   the two log-ratios differ by exactly eps0 (derived), so the instance is the two-point pair of
   step 1 with x running over (e^{-eps0}, 1) as a runs over R: every x*, hence every value of
   ``br_delta``, is attained (the supremum for eps in (-eps0, eps0)).

Permute-and-flip (McKenna & Sheldon 2020: candidates in a uniformly random order, candidate r kept
with probability p_r = e^{eps0 (u_r - u*)/(2 Delta)}, u* the best score).

5. (output law, export ``pf_two``) Two candidates with score gap s = u_1 - u_2 >= 0: candidate 1
   is output with probability 1 - e^{-eps0 s/(2 Delta)}/2 (enumerating the two orders), and
   e^{eps0 s/(2 Delta)}/2 for s <= 0: the CDF of Laplace(2 Delta/eps0) at s. A neighbour moves s by
   at most 2 Delta, so the instance releases 1{s + Z > 0}, Z ~ Laplace(2 Delta/eps0): a threshold
   of the Laplace mechanism with Delta/b = eps0 (in units of the sensitivity 2 Delta). Its hockey
   stick is therefore at most Laplace's (post-processing) and every threshold {loss > eps} of the
   Laplace pair is such an instance, so the supremum over two-candidate instances equals the
   Laplace pair's delta(eps) at every eps (verifier's LOWER side for one run).
6. (m candidates, export ``pf_integral``) The output law for any m is
   P(r) = p_r int_0^1 prod_{s != r} (1 - t p_s) dt (random arrival times), checked here against
   the enumeration of all 3! orders at exact rational points; tests/certify/test_selection.py
   uses the enumeration with exact rationals as its reference.

dp_accounting (main after 0.6.0) says permute-and-flip's privacy loss distribution "is identical
to that of the Laplace mechanism with parameter 1/epsilon". By step 5 no instance's PLD is
Laplace's (a two-candidate instance's loss takes two values), and the Laplace curve is the
supremum of the two-candidate instances; proofs/permute_and_flip.py proves that it also dominates
every instance with any number of candidates, so the statement is a valid and tight upper bound.

Exports of :func:`derive`:

=============  =====================================================================  ==================
name           expression                                                             free symbols
=============  =====================================================================  ==================
br_delta       Piecewise((1 - e^eps, eps < -eps0),                                    epsilon, epsilon0
                         ((e^{eps0/2} - e^{eps/2})^2/(e^eps0 - 1), eps < eps0), (0, True))
br_pair_delta  the same (the tight pair's hockey stick)                                epsilon, epsilon0
em_loss_gap    eps0                                                                   epsilon0
pf_two         1 - exp(-eps0 s/(2 Delta))/2   (s >= 0)                                Delta, epsilon0, s
pf_integral    the integral formula's P(r_1) for three candidates                     epsilon0
=============  =====================================================================  ==================
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/selection_mechanisms.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import Delta, DerivationFailed, epsilon, epsilon0, merge_claims, require_equal, require_piecewise_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "pf_output_law"]

EXPORT_SYMBOLS = {
    "br_delta": ("epsilon", "epsilon0"),
    "br_pair_delta": ("epsilon", "epsilon0"),
    "em_loss_gap": ("epsilon0",),
    "pf_two": ("Delta", "epsilon0", "s"),
    "pf_integral": ("epsilon0",),
}

#: A score gap (s >= 0), a lower ratio x and an integration variable.
s = sp.Symbol("s", nonnegative=True)
_x = sp.Symbol("x", positive=True)
_t = sp.Symbol("t", nonnegative=True)
_l = sp.Symbol("l", real=True)
#: The three candidates' scores of the pf_integral check (in units of Delta).
PF_SCORES = (0, -1, -sp.Rational(5, 2))


def _br(eps: sp.Expr) -> sp.Expr:
    return sp.Piecewise(
        (1 - sp.exp(eps), eps < -epsilon0),
        ((sp.exp(epsilon0 / 2) - sp.exp(eps / 2)) ** 2 / (sp.exp(epsilon0) - 1), eps < epsilon0),
        (0, True),
    )


def pf_output_law(scores: tuple, eps0: sp.Expr) -> list[sp.Expr]:
    """Permute-and-flip's output law by enumerating every order (scores in units of Delta)."""
    best = max(scores)
    keep = [sp.exp(eps0 * (u - best) / 2) for u in scores]
    orders = list(itertools.permutations(range(len(scores))))
    law = [sp.Integer(0)] * len(scores)
    for order in orders:
        reach = sp.Integer(1)
        for r in order:
            law[r] += reach * keep[r] / len(orders)
            reach *= 1 - keep[r]
    return law


def claims() -> dict[str, sp.Expr]:
    best = max(PF_SCORES)
    keep = [sp.exp(epsilon0 * (u - best) / 2) for u in PF_SCORES]
    integral = keep[0] * sp.integrate(sp.expand((1 - _t * keep[1]) * (1 - _t * keep[2])), (_t, 0, 1))
    return {
        "br_delta": _br(epsilon),
        "br_pair_delta": _br(epsilon),
        "em_loss_gap": epsilon0,
        "pf_two": 1 - sp.exp(-epsilon0 * s / (2 * Delta)) / 2,
        "pf_integral": integral,
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive steps 2-6 of the module docstring; check them against the claims. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    gamma, big = sp.exp(epsilon), sp.exp(epsilon0)
    e_pts = (sp.Rational(-3, 1), sp.Rational(-1, 2), 0, sp.Rational(1, 4), sp.Rational(9, 10), 3)
    e0_pts = (sp.Rational(1, 2), 1, 3)
    points = [{epsilon: e, epsilon0: e0} for e in e_pts for e0 in e0_pts]

    # Step 2: the two-point pair's H as a function of x, maximised over x.
    two_point = (1 - _x) / (_x * (big - 1)) * (_x * big - gamma)
    stationary = sp.solve(sp.diff(two_point, _x), _x)
    inside = [root for root in stationary if sp.simplify(root - sp.sqrt(gamma / big)) == 0]
    if not inside:
        raise DerivationFailed(f"the stationary point of the two-point H is {stationary}, not sqrt(gamma e^-eps0)")
    if sp.diff(two_point, _x, 2).subs(_x, inside[0]).subs({epsilon: 0, epsilon0: 1}) >= 0:
        raise DerivationFailed("the stationary point is not a maximum")
    peak = sp.simplify(two_point.subs(_x, inside[0]))
    swapped = 1 - gamma + gamma * peak.subs(epsilon, -epsilon)  # eps < 0: the swapped family at 1/gamma
    derived_br = sp.Piecewise((1 - gamma, epsilon < -epsilon0), (swapped, epsilon < 0), (peak, epsilon < epsilon0), (0, True))
    require_piecewise_equal(derived_br, claim["br_delta"], epsilon, "BR sup over two-point pairs", points)
    require_equal(claim["br_delta"].subs(epsilon, 0), sp.tanh(epsilon0 / 4), "BR delta(0) = tanh(eps0/4)", [{epsilon0: e0} for e0 in e0_pts])

    # Step 3: the pair's hockey stick integrated from its densities (l >= max(eps, -eps0)).
    density_q = sp.exp(epsilon0 / 2) * sp.exp(-_l / 2) / (2 * (big - 1))
    if sp.simplify(sp.integrate(density_q, (_l, -epsilon0, epsilon0)) - 1) != 0:
        raise DerivationFailed("the BR pair's Q-density does not integrate to 1")
    inner = sp.integrate(density_q * (sp.exp(_l) - gamma), (_l, epsilon, epsilon0))
    pair_delta = sp.Piecewise((1 - gamma, epsilon < -epsilon0), (inner, epsilon < epsilon0), (0, True))
    require_piecewise_equal(pair_delta, claim["br_pair_delta"], epsilon, "BR pair's hockey stick", points)

    # Step 4: two candidates, scores (a, 0) against (a + Delta, -Delta), weights e^{eps0 u/(2 Delta)}.
    a = sp.Symbol("a", real=True)

    def em(u1: sp.Expr, u2: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
        w1, w2 = sp.exp(epsilon0 * u1 / (2 * Delta)), sp.exp(epsilon0 * u2 / (2 * Delta))
        return w1 / (w1 + w2), w2 / (w1 + w2)

    (p1, p2), (q1, q2) = em(a, 0), em(a + Delta, -Delta)
    gap = sp.expand_log(sp.log(q1 / p1) - sp.log(q2 / p2), force=True)
    require_equal(sp.simplify(gap), claim["em_loss_gap"], "two-candidate EM loss gap", [{epsilon0: e0, Delta: 1, a: 0} for e0 in e0_pts])

    # Step 5: two candidates, gap s >= 0: candidate 1 first (kept surely) or second (after candidate 2's coin).
    law = pf_output_law((s / Delta, 0), epsilon0)
    require_equal(law[0], claim["pf_two"], "two-candidate permute-and-flip", [{epsilon0: e0, Delta: 1, s: v} for e0 in e0_pts for v in (0, sp.Rational(1, 2), 2)])

    # Step 6: the integral formula against the enumeration of the 3! orders.
    enumerated = pf_output_law(PF_SCORES, epsilon0)
    require_equal(enumerated[0], claim["pf_integral"], "permute-and-flip: integral formula vs 3! orders", [{epsilon0: e0} for e0 in e0_pts])
    return {
        "br_delta": claim["br_delta"],
        "br_pair_delta": pair_delta,
        "em_loss_gap": sp.simplify(gap.subs(a, 0)),
        "pf_two": law[0],
        "pf_integral": enumerated[0],
    }


if __name__ == "__main__":  # pragma: no cover
    derive()
    print("selection_mechanisms: ok")
