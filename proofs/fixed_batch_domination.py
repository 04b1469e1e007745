"""Fixed-size batches under replace-one, Gaussian noise: which elementary steps a Bellman recursion
over a finite family must dominate, and the ordering lemmas that make a finite family of cell
dominators enough (issue 29). What is proven here is the reduction to a two-dimensional set of Gram
matrices and the domination of a cell by one pair; the finite cover is built and checked by
verifier.pld.gram_cover, and the UPPER bound that rests on it is the adaptive-cover method (README).

Setting: n records, batches of B drawn without replacement (q = B/n), the sum of the batch's
gradients (each clipped to norm <= 1; scale sigma by the clipping norm) plus N(0, sigma^2 I),
replace-one neighbours D (target x) and D' (x'), an adaptive adversary that picks every gradient
map after seeing the past outputs.

1. Reduction to elementary steps (text). Given the history, couple the batches: draw R (B - 1 of the
   other n - 1 records) and j (one more of the others); R + {j} is a uniform batch without the target
   and R + {target} a uniform batch with it. So the step is, with common weights over (R, j) and up to
   the translation by the sum over R plus z = g(record j),
       P = E[(1 - q) N(0) + q N(a)],  Q = E[(1 - q) N(0) + q N(b)],  a = x - z,  b = x' - z,
   |x|, |x'|, |z| <= 1 (x, x', z the clipped gradients of the target, its replacement, record j).
   E(a, b) depends only on the Gram matrix G = [[A, C], [C, B]], A = |a|^2, B = |b|^2, C = <a, b>.
2. What the recursion needs (text). The adaptive value with k steps left is W_k(l) = f_k(e^-l) with
   f_k convex and non-increasing in r, f_k(inf) = 0 (a supremum of strategies' payoffs
   E[(1 - e^eps r prod Q/P)_+], each convex in r), and W_k(l) <= sup over steps of
   E_P[W_{k-1}(l + ln P/Q)] = E_P[phi(Q/P)] with phi(x) = f_{k-1}(e^-l x). Such phi is
   phi(inf) + int (c - x)_+ dmu(c), mu = phi'' >= 0, so E_P[phi(Q/P)] = phi(inf) + int c H_{1/c}(P||Q)
   dmu(c): a step whose hockey stick H_kappa(P||Q) lies below a member's for every kappa > 0 has a
   smaller step value, and a common-weight mixture is below the largest component (H is jointly
   convex). So it suffices that every E(G) is profile-dominated by some member, per component.
3. Contraction (numpy check in antipodal_dominance step 2, the same map): G <= G* in Loewner order
   makes E(G) a post-processing of E(G*) (y -> My + N(0, sigma^2 (I - MM^T)), ||M|| <= 1).
4. Plackett with unequal norms (sympy): with s = <a, y>/sigma^2, t = <b, y>/sigma^2 (centred
   bivariate normal, variances tau_a^2 = A/sigma^2, tau_b^2 = B/sigma^2, correlation rho),
   H_kappa = E[(u(s) - kappa v(t))_+] with u, v increasing; the integrand is submodular (the softplus
   argument of antipodal_dominance step 4, any kappa > 0) and the ``plackett_unequal`` identity
   d phi_rho/d rho = tau_a tau_b d^2 phi_rho/ds dt gives d/d rho H_kappa <= 0: H_kappa does not
   increase as C = rho sqrt(AB) grows with A, B fixed. The ``perspective_mixed_partial``
   psi_uv = -(v/u^2) phi''(v/u) of psi(u, v) = u phi(v/u) is the same submodularity for a general
   convex phi, step 2's functional itself.
   Together with 3: G = (A, B, C) is dominated by G* = (A*, B*, C*) whenever A <= A*, B <= B* and
   C* <= C + sqrt((A* - A)(B* - B)) (add the PSD matrix [[A* - A, s], [s, B* - B]], s the square
   root, then lower C by Plackett), with C* >= -sqrt(A* B*).
5. The realisable Gram set (numpy check over random configurations; extremal configurations attain
   it): C >= Cmin(A, B), A, B in [0, 4], with
       Cmin = -sqrt(AB)                              if sqrt(A) + sqrt(B) <= 2   (x' = -x, z between),
       Cmin = (A + B - 4)/2                          if sqrt(A) + sqrt(B) >= 2 and A + B <= 4
                                                     (x' = -x on the sphere, z inside),
       Cmin = (AB - sqrt(AB(4 - A)(4 - B)))/4        if A + B >= 4   (x, x', z on one great circle).
   Proof: C = (A + B - |x - x'|^2)/2 >= (A + B - 4)/2 always, and C >= -sqrt(AB) always. If A + B
   >= 4 the angle theta at z of the triangle (x, x', z) is at most 90 degrees (else |x - x'|^2 > A + B
   >= 4). Obtuse at x or x': then C > A or C > B, both >= the claim. Acute: the three points lie in
   a disc of radius <= 1 (a plane section of the ball), which contains the circumcircle, so
   |x - x'| = 2R sin theta <= 2 sin theta; with |x - x'|^2 = A + B - 2 sqrt(AB) cos theta this is
   4 kappa^2 - 2 sqrt(AB) kappa + A + B - 4 <= 0 for kappa = cos theta, whose smaller root is the
   ``circumradius_root`` (sympy), and C = sqrt(AB) kappa >= the ``cmin_r3`` form. Cmin is
   non-decreasing in A and in B where sqrt(A) + sqrt(B) >= 2 and non-increasing where <= 2.
6. A cell [A0, A1] x [B0, B1] is dominated by the single pair E(A1, B1, C*) with
   C* = max(-sqrt(A1 B1), min over the cell of Cmin(A, B) + sqrt((A1 - A)(B1 - B))): steps 4 and 5.
   :func:`cell_dominator` computes a rigorous lower bound of that minimum by monotonicity on a
   sub-grid; :func:`_check_cells` samples realisable configurations in random cells and checks step
   4's order against the dominator, and refutes the wrong-way rule C* = Cmin(A1, B1) (the top corner).
7. No member of {remove, add} dominates every step alone (mpmath, the obstacle of issue 29): the
   antipodal step E(1, 1, -1) (x = e, x' = -e, z = 0) has a larger hockey stick than remove at one
   kappa and than add at another, at (sigma, q) = (1.1, 0.1). So a finite family must hold more
   members than the two orientations: cell dominators of step 6.

8. Transitivity of step 4's order (sympy ``cauchy_schwarz_gap``): if G <= G' <= G'' then
   C'' <= C' + sqrt((A'' - A')(B'' - B')) <= C + sqrt((A' - A)(B' - B)) + sqrt((A'' - A')(B'' - B'))
   <= C + sqrt((A'' - A)(B'' - B)), since (x1 + x2)(y1 + y2) - (sqrt(x1 y1) + sqrt(x2 y2))^2 =
   (sqrt(x1 y2) - sqrt(x2 y1))^2 >= 0 (it is also the composition of the two post-processings and
   Plackett steps: profile domination is transitive). So a member dominated by another member may be
   dropped, and a cell whose step-6 dominator taken at any corner (A*, B*) >= (A1, B1) has C at least
   a member's C* (same A*, B*) is covered by that member: verifier.pld.gram_cover builds such a
   finite cover (graded dyadic cells, rigorous outward-rounded floors) and checks it; ``_check_cells``
   also runs its cell_floor as a rule.

The theorem the recursion (verifier.pld.adaptive) rests on: if the cells of a finite family
cover [0, 4]^2 and the family holds each cell's dominator and its mirror (A <-> B), the recursion over
the members' DOMINATING PLDs is an UPPER bound on delta(eps) for every adaptive adversary, in both
directions. It is used by the adaptive-cover method (verifier.certify.methods.adaptive_batches) with
the cover of verifier.pld.gram_cover (check_cover re-checks the tiling and every cell before use) and
the member PLDs of verifier.pld.gram_step (proofs/gram_step_split.py); at the DP-SGD setting the
cells touching the corners (4, 0) and (0, 4) set the cost (README).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/fixed_batch_domination.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import math

import mpmath
import numpy as np
import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal

__all__ = ["A", "B", "EXPORT_SYMBOLS", "claims", "cell_dominator", "cmin", "derive", "dominated"]

EXPORT_SYMBOLS = {
    "cauchy_schwarz_gap": ("x1", "x2", "y1", "y2"),
    "circumradius_root": ("A", "B"),
    "cmin_r3": ("A", "B"),
    "perspective_mixed_partial": ("u", "v"),
    "plackett_unequal": ("rho", "s", "t", "tau_a", "tau_b"),
}

A = sp.Symbol("A", positive=True)
B = sp.Symbol("B", positive=True)
_KAPPA = sp.Symbol("kappa", real=True)
_U, _V = sp.symbols("u v", positive=True)
_S, _T = sp.symbols("s t", real=True)
_RHO = sp.Symbol("rho", real=True)
_TA, _TB = sp.symbols("tau_a tau_b", positive=True)
_PHI = sp.Function("phi")
_X1, _X2, _Y1, _Y2 = sp.symbols("x1 x2 y1 y2", positive=True)

#: Random configurations of step 5 and random cells of step 6 (fixed seeds: the check is repeatable).
_SAMPLES = 20000
_CELLS = 300
_SUBGRID = 16
#: Float slack of the numeric order checks (the quantities are O(1) sums of a few products).
_ATOL = 1e-12


def claims() -> dict[str, sp.Expr]:
    rab = sp.sqrt(A * B)
    return {
        "cauchy_schwarz_gap": (sp.sqrt(_X1 * _Y2) - sp.sqrt(_X2 * _Y1)) ** 2,
        "circumradius_root": (rab - sp.sqrt((4 - A) * (4 - B))) / 4,
        "cmin_r3": (A * B - sp.sqrt(A * B * (4 - A) * (4 - B))) / 4,
        "perspective_mixed_partial": -(_V / _U**2) * sp.Subs(sp.Derivative(_PHI(_KAPPA), _KAPPA, 2), _KAPPA, _V / _U),
        "plackett_unequal": _TA * _TB * sp.diff(_bivariate(), _S, _T),
    }


def _bivariate() -> sp.Expr:
    """Centred bivariate normal density, variances tau_a^2, tau_b^2, correlation rho."""
    z = (_S / _TA) ** 2 - 2 * _RHO * (_S / _TA) * (_T / _TB) + (_T / _TB) ** 2
    return sp.exp(-z / (2 * (1 - _RHO**2))) / (2 * sp.pi * _TA * _TB * sp.sqrt(1 - _RHO**2))


def cmin(a_sq: float, b_sq: float) -> float:
    """Step 5's Cmin(A, B) (float)."""
    ra, rb = math.sqrt(a_sq), math.sqrt(b_sq)
    if ra + rb <= 2:
        return -ra * rb
    if a_sq + b_sq <= 4:
        return (a_sq + b_sq - 4) / 2
    return (a_sq * b_sq - math.sqrt(max(0.0, a_sq * b_sq * (4 - a_sq) * (4 - b_sq)))) / 4


def _cmin_lower(a0: float, a1: float, b0: float, b1: float) -> float:
    """A lower bound of Cmin over [a0, a1] x [b0, b1] (step 5's monotonicity: the box inside
    sqrt(A) + sqrt(B) <= 2 has its minimum at (a1, b1), outside at (a0, b0); a box across the curve
    is bounded below by both global bounds, -sqrt(a1 b1) and (a0 + b0 - 4)/2)."""
    if math.sqrt(a1) + math.sqrt(b1) <= 2:
        return -math.sqrt(a1 * b1)
    if math.sqrt(a0) + math.sqrt(b0) >= 2:
        return cmin(a0, b0)
    return max(-math.sqrt(a1 * b1), (a0 + b0 - 4) / 2)


def cell_dominator(a0: float, a1: float, b0: float, b1: float) -> tuple[float, float, float]:
    """Step 6: (A1, B1, C*) dominating every realisable step with (A, B) in the cell; C* a lower
    bound of min Cmin(A, B) + sqrt((A1 - A)(B1 - B)) over the cell on a _SUBGRID^2 sub-grid (each
    sub-box: Cmin's lower bound plus the square root at the box's upper corner)."""
    edges_a, edges_b = np.linspace(a0, a1, _SUBGRID + 1), np.linspace(b0, b1, _SUBGRID + 1)
    low = math.inf
    for i in range(_SUBGRID):
        for j in range(_SUBGRID):
            box = _cmin_lower(edges_a[i], edges_a[i + 1], edges_b[j], edges_b[j + 1])
            slack = math.sqrt(max(0.0, (a1 - edges_a[i + 1]) * (b1 - edges_b[j + 1])))
            low = min(low, box + slack)
    return a1, b1, max(-math.sqrt(a1 * b1), low - _ATOL)


def _package_dominator(a0: float, a1: float, b0: float, b1: float) -> tuple[float, float, float]:
    """Step 6's dominator with verifier.pld.gram_cover's rigorous cell floor (the cover's rule)."""
    from verifier.pld.gram_cover import cell_floor

    return a1, b1, max(-math.sqrt(a1 * b1), float(cell_floor(a0, a1, b0, b1, a1, b1)))


def dominated(gram: tuple[float, float, float], dominator: tuple[float, float, float]) -> bool:
    """Step 4's order: A <= A*, B <= B*, C* <= C + sqrt((A* - A)(B* - B)) (float, slack _ATOL)."""
    a_sq, b_sq, c = gram
    a_star, b_star, c_star = dominator
    if a_sq > a_star + _ATOL or b_sq > b_star + _ATOL:
        return False
    return c_star <= c + math.sqrt(max(0.0, (a_star - a_sq) * (b_star - b_sq))) + _ATOL


def _configurations(rng: np.random.Generator, count: int) -> np.ndarray:
    """(A, B, C) of random x, x', z in the unit ball of R^3: half inside, half with some on the sphere."""
    points = rng.normal(size=(count, 3, 3))
    points /= np.linalg.norm(points, axis=2, keepdims=True)
    radii = rng.uniform(0, 1, size=(count, 3, 1)) ** (1 / 3)
    radii[: count // 2][rng.uniform(size=(count // 2, 3, 1)) < 0.5] = 1.0
    points *= radii
    a = points[:, 0] - points[:, 2]
    b = points[:, 1] - points[:, 2]
    return np.stack([np.sum(a * a, 1), np.sum(b * b, 1), np.sum(a * b, 1)], axis=1)


def _check_cmin(cmin_r3: sp.Expr) -> None:
    """Step 5 numerically: no random configuration goes below Cmin (with the claimed R3 piece), and
    the extremal configurations attain it."""
    r3 = sp.lambdify((A, B), cmin_r3, "math")

    def claimed(a_sq: float, b_sq: float) -> float:
        return r3(a_sq, b_sq) if a_sq + b_sq >= 4 else cmin(a_sq, b_sq)

    rng = np.random.default_rng(29)
    for a_sq, b_sq, c in _configurations(rng, _SAMPLES):
        if c < claimed(a_sq, b_sq) - _ATOL:
            raise DerivationFailed(f"realisable (A, B, C) = ({a_sq}, {b_sq}, {c}) below Cmin = {claimed(a_sq, b_sq)}")
    for alpha, beta in rng.uniform(0, math.pi, size=(200, 2)):  # x, x' on a circle through z = e
        if alpha + beta < math.pi:
            continue
        a_sq, b_sq = 2 - 2 * math.cos(alpha), 2 - 2 * math.cos(beta)
        c = 1 - math.cos(alpha) - math.cos(beta) + math.cos(alpha + beta)
        if abs(c - claimed(a_sq, b_sq)) > 1e-9:
            raise DerivationFailed(f"the great-circle configuration ({a_sq}, {b_sq}, {c}) does not attain Cmin = {claimed(a_sq, b_sq)}")
    record_check("points")


def _check_cells(rule=cell_dominator) -> None:
    """Step 6: realisable configurations whose (A, B) fall in a random cell are dominated by the
    cell's dominator under ``rule`` (the wrong-way rule C* = Cmin(A1, B1) must fail this)."""
    rng = np.random.default_rng(2029)
    grams = _configurations(rng, _SAMPLES)
    for _ in range(_CELLS):
        a0, b0 = rng.uniform(0, 3.9, size=2)
        a1, b1 = a0 + rng.uniform(0.02, 0.6), b0 + rng.uniform(0.02, 0.6)
        a1, b1 = min(a1, 4.0), min(b1, 4.0)
        star = rule(a0, a1, b0, b1)
        inside = grams[(grams[:, 0] >= a0) & (grams[:, 0] <= a1) & (grams[:, 1] >= b0) & (grams[:, 1] <= b1)]
        for gram in inside:
            if not dominated(tuple(gram), star):
                raise DerivationFailed(f"cell [{a0}, {a1}] x [{b0}, {b1}]: {tuple(gram)} is not dominated by {star}")
    record_check("points")


def _hockey_1d(a: mpmath.mpf, b: mpmath.mpf, sigma: mpmath.mpf, q: mpmath.mpf, kappa: mpmath.mpf) -> mpmath.mpf:
    """H_kappa((1 - q)N(0) + qN(a) || (1 - q)N(0) + qN(b)) in one dimension, a >= 0 >= b, a > b (the
    likelihood ratio increases in y, so the supremum is over half-lines: bisection of the threshold)."""

    def sf(y, mean):
        return mpmath.erfc((y - mean) / (sigma * mpmath.sqrt(2))) / 2

    def dens(y, mean):
        return mpmath.exp(-((y - mean) ** 2) / (2 * sigma**2))

    def excess(y):
        return (1 - q) * dens(y, 0) + q * dens(y, a) - kappa * ((1 - q) * dens(y, 0) + q * dens(y, b))

    lo, hi = mpmath.mpf(-60), mpmath.mpf(60)
    if excess(lo) > 0:  # p >= kappa q everywhere far left: the set is the whole line or a half-line
        return max(mpmath.mpf(0), 1 - kappa) if excess(hi) > 0 else mpmath.mpf(0)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) <= 0 else (lo, mid)
    return (1 - q) * sf(hi, 0) + q * sf(hi, a) - kappa * ((1 - q) * sf(hi, 0) + q * sf(hi, b))


def _check_obstacle() -> None:
    """Step 7: the antipodal step (a, b) = (1, -1) beats remove (2, 0) at one kappa and add (0, -2)
    (the mirror of (0, 2)) at another."""
    with mpmath.workdps(30):
        sigma, q = mpmath.mpf("1.1"), mpmath.mpf("0.1")
        gains = {"remove": False, "add": False}
        for kappa in (mpmath.mpf(x) / 8 for x in range(1, 33)):
            antipodal = _hockey_1d(mpmath.mpf(1), mpmath.mpf(-1), sigma, q, kappa)
            remove = _hockey_1d(mpmath.mpf(2), mpmath.mpf(0), sigma, q, kappa)
            add = _hockey_1d(mpmath.mpf(0), mpmath.mpf(-2), sigma, q, kappa)
            gains["remove"] |= antipodal > remove + mpmath.mpf("1e-20")
            gains["add"] |= antipodal > add + mpmath.mpf("1e-20")
        if not all(gains.values()):
            raise DerivationFailed(f"the antipodal step is dominated by one orientation alone: {gains}")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check steps 4-7 against the claims; returns the verified expressions. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    rab = sp.sqrt(A * B)
    quadratic = 4 * _KAPPA**2 - 2 * rab * _KAPPA + A + B - 4
    points = [{A: sp.Rational(p), B: sp.Rational(r)} for p, r in (("5/2", "3/2"), ("4", "1/2"), ("3", "3"), ("7/2", "2"))]
    require_equal(quadratic.subs(_KAPPA, claim["circumradius_root"]), sp.Integer(0), "circumradius root of step 5", points)
    require_equal(rab * claim["circumradius_root"], claim["cmin_r3"], "C = sqrt(AB) cos(theta) at the root", points)
    psi = _U * _PHI(_V / _U)
    require_equal(sp.diff(psi, _U, _V).doit(), claim["perspective_mixed_partial"].doit(), "psi_uv of the perspective")
    rho_points = [
        {_TA: ta, _TB: tb, _RHO: r, _S: s0, _T: t0}
        for ta, tb in ((1, 2), (sp.Rational(3, 10), sp.Rational(7, 4)))
        for r in (sp.Rational(-9, 10), 0, sp.Rational(1, 2))
        for s0, t0 in ((0, 0), (sp.Rational(1, 3), -2))
    ]
    require_equal(sp.diff(_bivariate(), _RHO), claim["plackett_unequal"], "Plackett: d phi/d rho = tau_a tau_b d^2 phi/ds dt", rho_points)
    gap = (_X1 + _X2) * (_Y1 + _Y2) - (sp.sqrt(_X1 * _Y1) + sp.sqrt(_X2 * _Y2)) ** 2
    xy_points = [{_X1: sp.Rational(1, 3), _X2: 2, _Y1: sp.Rational(5, 7), _Y2: 3}, {_X1: 4, _X2: sp.Rational(1, 9), _Y1: 1, _Y2: sp.Rational(7, 2)}]
    require_equal(gap, claim["cauchy_schwarz_gap"], "step 8: Cauchy-Schwarz gap", xy_points)
    _check_cmin(claim["cmin_r3"])
    _check_cells()
    _check_cells(rule=_package_dominator)
    _check_obstacle()
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
