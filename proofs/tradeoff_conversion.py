"""From delta(eps) to the trade-off curve: TPR at FPR alpha, both sides, with every inequality's direction.

Setting. In one adjacency direction let W be the output law *with* the record and O the law
*without* it (REMOVE: W = P, O = Q; ADD: W = Q, O = P), and for every real eps

    delta(eps) = H_{e^eps}(W||O) = sup_S W(S) - e^eps O(S),

the curve verifier brackets in that direction (negative eps included). A membership test is a
measurable phi: outputs -> [0, 1] ("in" with probability phi); its false-positive rate is
FPR = E_O phi and its true-positive rate TPR = E_W phi. The attacker's best TPR at FPR <= alpha is

    TPR*(alpha) = sup { E_W phi : E_O phi <= alpha },     beta(alpha) = 1 - TPR*(alpha),

beta being Dong, Roth & Su's trade-off function T(O, W) (JRSS-B 2022, Def 2.1, null O).

Lemma 1 (weak duality; the direction of every UPPER bound on TPR). For every test with
E_O phi <= alpha and every real eps, E_W phi = (E_W phi - e^eps E_O phi) + e^eps E_O phi
<= delta(eps) + e^eps alpha, because E_W phi - e^eps E_O phi = int phi d(W - e^eps O) is at most
the integral over the set where W - e^eps O is positive, i.e. <= delta(eps). Hence
TPR*(alpha) <= delta(eps) + e^eps alpha for EVERY eps, and therefore for an upper bound
delta_U >= delta at any finite set E of eps,

    TPR*(alpha) <= min_{eps in E} (delta_U(eps) + e^eps alpha).       (UPPER on TPR = LOWER on beta)

A finite E only makes the minimum larger: the finite-grid error is on the safe side.

Lemma 2 (strong duality). TPR*(alpha) = min(1, inf_{eps real} (delta(eps) + e^eps alpha)).
By Neyman-Pearson the supremum is attained by a likelihood-ratio test phi* = 1{L > l} + g 1{L = l}
(L = log dW/dO, +inf where O has no mass) with E_O phi* = alpha; at eps = l, phi* keeps exactly
the outputs where dW - e^l dO > 0 (and a part of those where it is 0), so E_W phi* - e^l E_O phi*
= delta(l), i.e. E_W phi* = delta(l) + e^l alpha, and Lemma 1 makes it the infimum. When alpha
exceeds O(L > -inf) every output with W-mass can be flagged, TPR* = 1, the limit eps -> -inf
(delta(eps) -> W(space) = 1). This is Dong, Roth & Su 2022, Prop 2.12 (f-DP iff (eps, 1 + f*(-e^eps))-DP
for all eps) read for one pair; the issue's symmetric form
beta = sup_{eps>=0} max(0, 1 - delta(eps) - e^eps alpha, e^-eps (1 - delta'(eps) - alpha)) is the same
supremum with the eps < 0 half rewritten through the opposite direction delta' by the duality
delta(-eps) = 1 - e^-eps + e^-eps delta'(eps) (proofs/hockey_stick_duality.py).

Theorem (the LOWER side). If delta_L(eps) <= delta(eps) for EVERY real eps, then
TPR*(alpha) >= inf_{eps real} (delta_L(eps) + e^eps alpha) (Lemma 2 and monotonicity of inf).
Evaluating that infimum at finitely many eps is NOT a lower bound in general: it can only be too
large (Gaussian mu = 1, alpha = 1e-2, E = {0}: delta(0) + alpha = 0.393 > TPR* = 0.092). It is exact
for a (sub-probability) PLD delta_L(eps) = sum_i p_i (1 - e^{eps - l_i})_+ + p_inf, by

Lemma 3 (convex conjugate of a discrete PLD). In t = e^eps > 0, g(t) = sum_i p_i (1 - t e^{-l_i})_+
+ p_inf + alpha t is convex (a sum of convex functions) and affine between consecutive kinks
t_i = e^{l_i}; on the last piece [t_max, inf) its slope is alpha >= 0. So its infimum over t > 0 is
min(min_i g(t_i), lim_{t->0} g = sum_i p_i + p_inf). Moreover for convex g and t_a < t_m with
g(t_m) <= g(t_a): every t <= t_a has g(t) >= g(t_a) (t_a lies between t and t_m, so
g(t_a) <= lam g(t) + (1 - lam) g(t_m) <= lam g(t) + (1 - lam) g(t_a)); mirrored on the right.
So evaluating g rigorously on a window of consecutive kinks and finding, inside it, a kink whose
upper bound is below the lower bound at each end (or the end of the grid) proves that the window's
smallest lower bound is below the infimum over all eps. verifier.tradeoff.pld_tpr does exactly this,
with directed rounding; also TPR* >= alpha (the coin flip) and TPR* <= 1.

Lemma 4 (a finite grid on the LOWER side, by monotonicity). delta is non-increasing in eps (H_kappa
falls as kappa grows). So for ascending eps_0 < ... < eps_n with delta_L(eps_i) <= delta(eps_i):
on [eps_i, eps_{i+1}], delta(eps) + e^eps alpha >= delta_L(eps_{i+1}) + e^{eps_i} alpha; for eps <= eps_0
it is >= delta_L(eps_0); for eps >= eps_n it is >= e^{eps_n} alpha. The smallest of these is a LOWER
bound on TPR*(alpha) from finitely many points of any method's lower delta curve (its gap is first
order in the grid spacing; verifier.pld.tradeoff.staircase_tpr, used by the exact method).

Checks in :func:`derive`:

1. Lemmas 2-4 in exact rational arithmetic on 400 random finite pairs (atoms with O = 0 or W = 0
   included): the Neyman-Pearson optimum by brute force (atoms sorted by likelihood ratio, the last
   one split) equals min(kink values, total mass); a grid of 40 other rational t never goes below it
   (Lemma 1); the staircase of Lemma 4 on that grid never goes above it; and the finite-grid minimum
   over eps in {0} is above it for some pair (the theorem's warning is not vacuous).
2. Gaussian (sensitivity Delta, noise sigma, mu = Delta/sigma): with
   delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), d(delta)/d(eps) =
   -e^eps Phi(-mu/2 - eps/mu) symbolically, so g'(eps) = e^eps (alpha - Phi(-mu/2 - eps/mu)) changes
   sign once, at eps* = -mu (z + mu/2) with alpha = Phi(z); g(eps*) = Phi(z + mu) symbolically: the
   closed form TPR*(alpha) = Phi(Phi^-1(alpha) + mu), beta = Phi(Phi^-1(1 - alpha) - mu).
3. Binary randomized response (eps0): the kinks are t = e^{-eps0}, e^{eps0}; g there is
   1 - e^{-eps0}(1 - alpha) and e^{eps0} alpha, the limit t -> 0 is 1: the piecewise-linear trade-off,
   checked at exact rational points against the brute-force Neyman-Pearson optimum.

Exports of :func:`derive`:

============  =====================================================  ====================
name          expression                                             free symbols
============  =====================================================  ====================
gaussian_tpr  Phi(Phi^-1(fpr) + Delta/sigma)                         Delta, fpr, sigma
rr_tpr        Piecewise((e^eps0 fpr, fpr <= 1/(1 + e^eps0)),         epsilon0, fpr
                        (1 - e^-eps0 (1 - fpr), True))
============  =====================================================  ====================
``fpr`` is :data:`FPR` (positive; meaningful in (0, 1)).
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/tradeoff_conversion.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs.hockey_stick_duality import _random_distribution as random_distribution  # the same random pairs
from proofs._common import Delta, DerivationFailed, Phi, epsilon, epsilon0, merge_claims, record_check, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "FPR", "claims", "derive", "np_tpr", "kink_tpr", "staircase"]

EXPORT_SYMBOLS = {
    "gaussian_tpr": ("Delta", "fpr", "sigma"),
    "rr_tpr": ("epsilon0", "fpr"),
}

#: The false-positive rate alpha (not the Renyi order of proofs._common.alpha).
FPR = sp.Symbol("fpr", positive=True)

_N_PAIRS = 400
_SEED = 20261127


def _phi_inv(x: sp.Expr) -> sp.Expr:
    """Phi^-1(x) = sqrt(2) erfinv(2x - 1) (sympy evaluates erfinv numerically, not erfcinv)."""
    return sp.sqrt(2) * sp.erfinv(2 * x - 1)


def claims() -> dict[str, sp.Expr]:
    """The closed forms: Gaussian DP (Dong, Roth & Su 2022, Eq. (2.3)) and binary RR's trade-off."""
    e = sp.exp(epsilon0)
    return {
        "gaussian_tpr": Phi(_phi_inv(FPR) + Delta / sigma),
        "rr_tpr": sp.Piecewise((e * FPR, FPR <= 1 / (1 + e)), (1 - (1 - FPR) / e, True)),
    }


# ---- 1. exact rational checks of Lemmas 1-3 ---------------------------------------------------


def np_tpr(w: list[Fraction], o: list[Fraction], alpha: Fraction) -> Fraction:
    """Neyman-Pearson by brute force: flag atoms in decreasing likelihood ratio W/O (O = 0 first),
    splitting the last one, until the FPR budget alpha is spent."""
    order = sorted(range(len(w)), key=lambda i: (o[i] != 0, -(w[i] / o[i]) if o[i] else 0))
    tpr, budget = Fraction(0), alpha
    for i in order:
        if w[i] == 0:
            continue  # flagging an atom without W-mass only spends budget
        if o[i] <= budget:
            tpr, budget = tpr + w[i], budget - o[i]
        else:
            tpr += w[i] * budget / o[i]
            break
    return tpr


def _g(w: list[Fraction], o: list[Fraction], alpha: Fraction, t: Fraction) -> Fraction:
    """delta(log t) + t alpha = sum max(0, W - t O) + t alpha."""
    return sum((max(Fraction(0), wi - t * oi) for wi, oi in zip(w, o)), Fraction(0)) + t * alpha


def staircase(w: list[Fraction], o: list[Fraction], alpha: Fraction, ts: list[Fraction]) -> Fraction:
    """Lemma 4 on ascending t_i = e^{eps_i}: min(delta(t_0), delta(t_{i+1}) + t_i alpha, t_n alpha)."""
    delta = [_g(w, o, Fraction(0), t) for t in ts]
    return min([delta[0], ts[-1] * alpha] + [delta[i + 1] + ts[i] * alpha for i in range(len(ts) - 1)])


def kink_tpr(w: list[Fraction], o: list[Fraction], alpha: Fraction) -> Fraction:
    """Lemma 3: min over the kinks t_i = W_i/O_i (finite, positive) and the limit t -> 0 (total W mass)."""
    kinks = [wi / oi for wi, oi in zip(w, o) if oi and wi]
    return min([sum(w, Fraction(0))] + [_g(w, o, alpha, t) for t in kinks])


def _check_lemmas() -> None:
    rng = random.Random(_SEED)
    grid = [Fraction(j, 8) for j in range(1, 33)] + [Fraction(1, 64), Fraction(1, 32), Fraction(1, 16), Fraction(9, 1), Fraction(20), Fraction(100), Fraction(1000), Fraction(10**6)]
    finite_grid_too_high = False
    for trial in range(_N_PAIRS):
        n = 1 + trial % 6
        w, o = random_distribution(rng, n), random_distribution(rng, n)
        alpha = Fraction(rng.randint(0, 40), 40)
        best = np_tpr(w, o, alpha)
        via_kinks = min(Fraction(1), kink_tpr(w, o, alpha))
        if best != via_kinks:
            raise DerivationFailed(f"Lemmas 2-3 fail at W={w}, O={o}, alpha={alpha}: Neyman-Pearson {best}, kinks {via_kinks}")
        for t in grid:
            if _g(w, o, alpha, t) < best:
                raise DerivationFailed(f"Lemma 1 fails at W={w}, O={o}, alpha={alpha}, t={t}")
        if min(Fraction(1), staircase(w, o, alpha, sorted(grid))) > best:
            raise DerivationFailed(f"Lemma 4 fails at W={w}, O={o}, alpha={alpha}")
        finite_grid_too_high |= _g(w, o, alpha, Fraction(1)) > best
    if not finite_grid_too_high:
        raise DerivationFailed("no pair shows a one-point grid above the infimum: the lower-side warning is untested")
    record_check("points")


# ---- 2. Gaussian -------------------------------------------------------------------------------


def _gaussian_tpr() -> sp.Expr:
    mu = sp.Symbol("mu", positive=True)
    z = sp.Symbol("z", real=True)
    delta = Phi(mu / 2 - epsilon / mu) - sp.exp(epsilon) * Phi(-mu / 2 - epsilon / mu)
    require_equal(sp.diff(delta, epsilon), -sp.exp(epsilon) * Phi(-mu / 2 - epsilon / mu), "Gaussian d delta / d eps")
    a = Phi(z)  # alpha = Phi(z): the stationarity Phi(-mu/2 - eps/mu) = alpha at eps* = -mu (z + mu/2)
    star = -mu * (z + mu / 2)
    require_equal(Phi(-mu / 2 - star / mu), a, "Gaussian stationary point")
    value = (delta + sp.exp(epsilon) * a).subs(epsilon, star)
    require_equal(value, Phi(z + mu), "Gaussian g(eps*)")
    return Phi(z + mu).subs({z: _phi_inv(FPR), mu: Delta / sigma})


# ---- 3. randomized response --------------------------------------------------------------------


def _rr_tpr() -> sp.Expr:
    """min(1, g at the two kinks) for W = (e, 1)/(1 + e), O = (1, e)/(1 + e)."""
    e = sp.exp(epsilon0)
    w, o = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]

    def g(t: sp.Expr) -> sp.Expr:
        return sp.Add(*[sp.Max(0, sp.simplify(wi - t * oi)) for wi, oi in zip(w, o)]) + t * FPR

    return sp.Min(1, sp.simplify(g(e)), sp.simplify(g(1 / e)))


def _check_rr(claim: sp.Expr, derived: sp.Expr) -> None:
    for kappa in (Fraction(3, 2), Fraction(5, 2), Fraction(20)):  # e^eps0 rational: eps0 = log kappa
        for j in range(0, 41):
            alpha = Fraction(j, 40)
            at = {epsilon0: sp.log(sp.Rational(kappa.numerator, kappa.denominator)), FPR: sp.Rational(alpha.numerator, alpha.denominator)}
            w = [kappa / (1 + kappa), 1 / (1 + kappa)]
            o = [1 / (1 + kappa), kappa / (1 + kappa)]
            want = np_tpr(w, o, alpha)
            for name, expr in (("claimed", claim), ("derived", derived)):
                got = sp.nsimplify(sp.simplify(expr.subs(at)))
                if got != sp.Rational(want.numerator, want.denominator):
                    raise DerivationFailed(f"rr_tpr ({name}) = {got} but Neyman-Pearson gives {want} at e^eps0 = {kappa}, fpr = {alpha}")
    record_check("points")


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    _check_lemmas()
    return {"gaussian_tpr": _gaussian_tpr(), "rr_tpr": _rr_tpr()}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Prove the conversion's lemmas (exact rationals), derive the Gaussian and randomized-response
    trade-offs from it and compare them with :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [{FPR: sp.Rational(1, 10**4), Delta: 1, sigma: 1}, {FPR: sp.Rational(1, 100), Delta: 3, sigma: 2},
              {FPR: sp.Rational(1, 2), Delta: sp.Rational(1, 2), sigma: 1}, {FPR: sp.Rational(9, 10), Delta: 2, sigma: 1}]
    require_equal(got["gaussian_tpr"], claim["gaussian_tpr"], "Gaussian TPR closed form", points)
    _check_rr(claim["rr_tpr"], got["rr_tpr"])
    return {"gaussian_tpr": claim["gaussian_tpr"], "rr_tpr": claim["rr_tpr"]}


if __name__ == "__main__":
    derive()
    print("tradeoff_conversion: ok")
