"""The clone reduction keeping the clones' reports (verifier.shuffle.clone_sum): the law of the sum
of likelihood ratios, for the Laplace randomizer.

Setting: n users, one report each from a local randomizer R, released in uniformly random order;
the changed user's inputs x, x'; M = (R(x) + R(x'))/2. If every other user's law is R(x_i) >= w M
pointwise (the clone share w; proofs/shuffle_binary.py step 3 for Laplace, proofs/shuffle_coupling.py
step 2 for why this is all the reduction needs), the shuffled reports are a post-processing of
"C ~ Bin(n - 1, w) clones drawing from M, plus the changed user's report, as a multiset" (Feldman,
McMillan & Talwar 2021, arXiv:2012.12803, Thm 3.2: the other users' reports are revealed).

1. Multiset likelihood ratio (export ``multiset_ratio``). Write R(x) = M (1 + t), R(x') = M (1 - t),
   t(y) = (R(x) - R(x'))/(R(x) + R(x')) in [-1, 1]. Given C = c the c + 1 reports in random order have
   density prod_i M(y_i) * (1/(c + 1)) sum_j (1 + t(y_j)) under x and the same with 1 - t under x', so
   the ratio is (c + 1 + S)/(c + 1 - S), S = sum_j t(y_j): derived here for c <= 2 by symmetrising
   the ordered densities. It is increasing in S, so S (or its mean tbar) is a sufficient statistic.
2. Hockey stick (export ``reduced_hockey``). With E = e^eps, (P - E Q)_+ = prod M *
   ((1 + tbar) - E (1 - tbar))_+ = prod M * (1 + E)(tbar - tanh(eps/2))_+, so
   delta_c(eps) = (1 + E) E_M[(tbar - tanh(eps/2))_+], tbar the mean of c + 1 i.i.d. draws of t under M.
3. Laplace's t-law (exports ``t_atom``, ``t_density``). Scale 1 (losses in units of b), x = 0,
   x' = l: t = tanh(L/2) with the privacy loss L(y) = |y - l| - |y|, so t = tanh(l/2) = T on y <= 0
   (M-mass (1 + e^-l)/4), -T on y >= l (the same), and for 0 < y < l, L = l - 2y: the density of t is
   e^(-l/2) (1 - t^2)^(-3/2) / 2 on (-T, T) (derived by the change of variables). Checked: total
   mass 1, mean 0, and (1 + E) E[(t - tanh(eps/2))_+] equals the Laplace pair's own delta
   1 - e^((eps - l)/2) (c = 0: the changed user's report alone) for 0 <= eps <= l.
4. Mean-preserving spread (exports ``t_mass``, ``t_moment``, ``spread_right``). On a grid
   -T = g_0 < ... < g_K = T, the cell [a, b] has mass F(b) - F(a) and first moment G(b) - G(a) with
   F = e^(-l/2) t/(2 sqrt(1 - t^2)), G = e^(-l/2)/(2 sqrt(1 - t^2)) (derived by integrating the
   density); splitting it to its ends with right share (G(b) - G(a) - a (F(b) - F(a)))/(b - a) keeps
   the mass and the mean. Each draw of the spread law is the true draw plus a mean-zero jump given
   it, so E[phi(tbar_spread)] >= E[phi(tbar)] for the convex phi = (. - tau)_+ (Jensen, conditionally
   on the true draws): the spread law's delta_c is an UPPER bound. With K = 1 it is FMT's bit (t = +-T
   with probability 1/2 each): the clone count pair.
5. Monotonicity. delta_c does not increase with c: the mean of c + 2 i.i.d. draws is a conditional
   expectation of the mean of c + 1 of them (given the multiset of all c + 2, each (c + 1)-subset is
   equally likely), so by Jensen E phi(tbar_(c+2)) <= E phi(tbar_(c+1)); C is bucketed at left ends
   (checked for the spread law, K = 4, c <= 4, l in {1/2, 1, 3}).
   Over the distance: the Laplace location family has a log-concave density, so its trade-off curve
   falls as the distance grows and the pair at distance d is a post-processing (a Markov kernel K,
   Blackwell) of the pair at d' > d; then M_d = K M_d' and every report of the reduced experiment goes
   through K: delta grows with the distance at a fixed share, and falls with the share (C grows
   stochastically). So a range of distances takes the t-law of its top and the share of its bottom.
   Checked (brute force): the bound at the pair's own distance and share (computed here
   independently: every c, every lattice tuple, K = 4) is above the exact delta of the shuffled reports binned to 60 (n = 2) or 20 (n = 3) cells
   (a post-processing, so a LOWER bound on the true delta) for every dataset on the grid {-1/2, 0,
   1/2} of inputs (scale 1, eps0 = 1) and eps in {0, 1/5, 1/2}.

Sources: FMT's reduction as cited; steps 1-5 derived here (the coordinator's lead, issue 38).
Typos found: none.

Exports of :func:`derive`:

===============  =============================================  ==========================
name             expression                                     free symbols
===============  =============================================  ==========================
multiset_ratio   (c + 1 + S)/(c + 1 - S)                        S, c
reduced_hockey   (1 + e^eps)(tbar - tanh(eps/2))                epsilon, tbar
t_atom           (1 + e^-l)/4                                   l
t_density        e^(-l/2) (1 - t^2)^(-3/2)/2                    l, t
t_mass           e^(-l/2) t/(2 sqrt(1 - t^2))                   l, t
t_moment         e^(-l/2)/(2 sqrt(1 - t^2))                     l, t
spread_right     (Gb - Ga - a (Fb - Fa))/(b - a)                Fa, Fb, Ga, Gb, a, b
===============  =============================================  ==========================
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):  # run as `python proofs/shuffle_clone_sum.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, epsilon, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "binned_shuffle_delta", "clone_sum_reference"]

EXPORT_SYMBOLS = {
    "multiset_ratio": ("S", "c"),
    "reduced_hockey": ("epsilon", "tbar"),
    "t_atom": ("l",),
    "t_density": ("l", "t"),
    "t_mass": ("l", "t"),
    "t_moment": ("l", "t"),
    "spread_right": ("Fa", "Fb", "Ga", "Gb", "a", "b"),
}

S = sp.Symbol("S", real=True)
C = sp.Symbol("c", nonnegative=True, integer=True)
TBAR = sp.Symbol("tbar", real=True)
LOSS = sp.Symbol("l", positive=True)
T = sp.Symbol("t", real=True)
FA, FB, GA, GB = sp.symbols("Fa Fb Ga Gb", real=True)
A_END, B_END = sp.symbols("a b", real=True)


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {
        "multiset_ratio": (C + 1 + S) / (C + 1 - S),
        "reduced_hockey": (1 + sp.exp(epsilon)) * (TBAR - sp.tanh(epsilon / 2)),
        "t_atom": (1 + sp.exp(-LOSS)) / 4,
        "t_density": sp.exp(-LOSS / 2) * (1 - T**2) ** sp.Rational(-3, 2) / 2,
        "t_mass": sp.exp(-LOSS / 2) * T / (2 * sp.sqrt(1 - T**2)),
        "t_moment": sp.exp(-LOSS / 2) / (2 * sp.sqrt(1 - T**2)),
        "spread_right": (GB - GA - A_END * (FB - FA)) / (B_END - A_END),
    }


def _check_multiset_ratio(claimed: sp.Expr) -> None:
    """Symmetrised ordered densities (the common factor prod M cancels) for c = 0, 1, 2."""
    for c in range(3):
        ts = sp.symbols(f"t0:{c + 1}", real=True)
        under_x = sum(1 + tj for tj in ts)  # (c + 1) times the mixture over the changed user's position
        under_x2 = sum(1 - tj for tj in ts)
        got = claimed.subs({C: c, S: sum(ts)})
        if sp.simplify(under_x / under_x2 - got) != 0:
            raise DerivationFailed(f"multiset_ratio at c = {c}: {under_x / under_x2} != {got}")
    record_check("symbolic")


def _reduced_hockey_derived() -> sp.Expr:
    big = sp.exp(epsilon)
    slope = sp.Poly(sp.expand((1 + TBAR) - big * (1 - TBAR)), TBAR)
    a1, a0 = slope.all_coeffs()  # (1 + E) tbar - (E - 1)
    return a1 * (TBAR + a0 / a1)


def _laplace_t_law() -> tuple[sp.Expr, sp.Expr]:
    """(atom at T, density of t on (-T, T)) from Laplace(0, 1) and Laplace(l, 1), by direct integration."""
    y = sp.Symbol("y", real=True)
    m_left = (sp.integrate(sp.exp(y) / 2, (y, -sp.oo, 0)) + sp.integrate(sp.exp(y - LOSS) / 2, (y, -sp.oo, 0))) / 2
    # inside: y in (0, l), L = l - 2y, t = tanh(L/2), y = (l - artanh(t) 2)/2 ... dy/dt = -1/(1 - t^2)
    m_inside = (sp.exp(-y) / 2 + sp.exp(y - LOSS) / 2) / 2
    y_of_t = (LOSS - 2 * sp.atanh(T)) / 2
    density = sp.simplify((m_inside.subs(y, y_of_t) * sp.Abs(sp.diff(y_of_t, T))).rewrite(sp.exp))
    return sp.simplify(m_left), density


def _check_t_law(atom: sp.Expr, density: sp.Expr, mass: sp.Expr, moment: sp.Expr) -> None:
    """Mass 1, mean 0, and delta_0 = the Laplace pair's delta, at rational losses and levels."""
    import mpmath

    for loss in (sp.Rational(1, 2), 1, 2):
        big_t = sp.tanh(sp.Rational(loss) / 2)
        f = sp.lambdify(T, density.subs(LOSS, loss), "mpmath")
        fa, ga = (sp.lambdify(T, e.subs(LOSS, loss), "mpmath") for e in (mass, moment))
        with mpmath.workdps(40):
            tt = mpmath.mpf(sp.N(big_t, 50))
            a = mpmath.mpf(sp.N(atom.subs(LOSS, loss), 50))
            total = 2 * a + mpmath.quad(f, [-tt, 0, tt])
            if abs(total - 1) > mpmath.mpf("1e-30") or abs(fa(tt) - fa(-tt) - mpmath.quad(f, [-tt, tt])) > mpmath.mpf("1e-30"):
                raise DerivationFailed(f"t-law at l = {loss}: mass {total}, F difference off")
            if abs(ga(tt) - ga(-tt) - mpmath.quad(lambda s: s * f(s), [-tt, tt])) > mpmath.mpf("1e-30"):
                raise DerivationFailed(f"t-law at l = {loss}: G is not the first moment's antiderivative")
            for eps in (mpmath.mpf(0), mpmath.mpf(loss) / 3, mpmath.mpf(loss) * 2 / 3):
                tau = mpmath.tanh(eps / 2)
                got = (1 + mpmath.exp(eps)) * (a * (tt - tau) + mpmath.quad(lambda s: (s - tau) * f(s), [tau, tt]))
                want = 1 - mpmath.exp((eps - loss) / 2)
                if abs(got - want) > mpmath.mpf("1e-30"):
                    raise DerivationFailed(f"delta_0 of the t-law {got} != Laplace's {want} (l = {loss}, eps = {eps})")
    for expr, what in ((mass, "t_mass"), (moment, "t_moment")):
        integrand = density if what == "t_mass" else T * density
        if sp.simplify(sp.diff(expr, T) - integrand) != 0:
            raise DerivationFailed(f"{what}' is not the density (times t)")
    record_check("points")


def _spread_right_derived() -> sp.Expr:
    right, left = sp.symbols("right left")
    solution = sp.solve([right + left - (FB - FA), right * B_END + left * A_END - (GB - GA)], [right, left], dict=True)[0]
    return solution[right]


def _spread_law(loss: float, cells: int, mass, moment, atom, right) -> list[float]:
    big_t = math.tanh(loss / 2)
    grid = [-big_t + k * 2 * big_t / cells for k in range(cells + 1)]
    law = [0.0] * (cells + 1)
    law[0] = law[cells] = atom(loss)
    for k in range(cells):
        a, b = grid[k], grid[k + 1]
        fa, fb, ga, gb = mass(loss, a), mass(loss, b), moment(loss, a), moment(loss, b)
        r = right(fa, fb, ga, gb, a, b)
        law[k + 1] += r
        law[k] += (fb - fa) - r
    return law


def clone_sum_reference(epsilon0: float, loss: float, users: int, eps: float, cells: int, exports: Mapping[str, sp.Expr]) -> float:
    """The clone-sum bound for changed inputs at loss ``loss`` (its t-law and its Laplace share
    2 e^-eps0/(1 + e^-l)), every c, every lattice tuple enumerated (no DFT, no buckets): the
    reference of the brute-force check."""
    lam = {name: sp.lambdify(sorted(exports[name].free_symbols, key=lambda s: s.name), exports[name], "math")
           for name in ("t_atom", "t_mass", "t_moment", "spread_right")}
    mass = lambda loss, t: lam["t_mass"](loss, t)  # noqa: E731 (free symbols sorted: l, t)
    moment = lambda loss, t: lam["t_moment"](loss, t)  # noqa: E731
    right = lambda fa, fb, ga, gb, a, b: lam["spread_right"](fa, fb, ga, gb, a, b)  # noqa: E731 (Fa Fb Ga Gb a b)
    law = _spread_law(loss, cells, mass, moment, lam["t_atom"], right)
    big_t = math.tanh(loss / 2)
    grid = [-big_t + k * 2 * big_t / cells for k in range(cells + 1)]
    share = 2 * math.exp(-epsilon0) / (1 + math.exp(-loss))
    hockey = sp.lambdify((epsilon, TBAR), exports["reduced_hockey"], "math")
    return sum(math.comb(users - 1, c) * share**c * (1 - share) ** (users - 1 - c) * _lattice_delta(law, grid, c, eps, hockey)
               for c in range(users))


def _lattice_delta(law: list[float], grid: list[float], c: int, eps: float, hockey) -> float:
    """delta_c(eps) of a law on ``grid``: every tuple of c + 1 draws enumerated."""
    return sum(math.prod(law[k] for k in tup) * max(0.0, hockey(eps, sum(grid[k] for k in tup) / (c + 1)))
               for tup in itertools.product(range(len(grid)), repeat=c + 1))


def _check_monotone_in_c(exports: Mapping[str, sp.Expr]) -> None:
    """delta_c of the spread law (K = 4) does not increase with c (c <= 4; module docstring, step 5)."""
    lam = {name: sp.lambdify(sorted(exports[name].free_symbols, key=lambda s: s.name), exports[name], "math")
           for name in ("t_atom", "t_mass", "t_moment", "spread_right")}
    hockey = sp.lambdify((epsilon, TBAR), exports["reduced_hockey"], "math")
    for loss in (0.5, 1.0, 3.0):
        law = _spread_law(loss, 4, lam["t_mass"], lam["t_moment"], lam["t_atom"], lam["spread_right"])
        big_t = math.tanh(loss / 2)
        grid = [-big_t + k * big_t / 2 for k in range(5)]
        for eps in (0.0, loss / 5):
            values = [_lattice_delta(law, grid, c, eps, hockey) for c in range(5)]
            if any(b > a * (1 + 1e-12) for a, b in zip(values, values[1:])):
                raise DerivationFailed(f"delta_c increases with c at l = {loss}, eps = {eps}: {values}")
    record_check("points")


def binned_shuffle_delta(data0: tuple[float, ...], data1: tuple[float, ...], eps: float, edges: list[float]) -> float:
    """Exact delta of the shuffled Laplace(., 1) reports binned at ``edges`` (a post-processing of the
    release: a LOWER bound on its delta), by summing the ordered tuples into multisets."""
    def cell_probs(x: float) -> list[float]:
        cdf = [0.0] + [0.5 * math.exp(e - x) if e < x else 1 - 0.5 * math.exp(x - e) for e in edges] + [1.0]
        return [b - a for a, b in zip(cdf, cdf[1:])]

    laws0, laws1 = [cell_probs(x) for x in data0], [cell_probs(x) for x in data1]
    p: dict[tuple[int, ...], float] = {}
    q: dict[tuple[int, ...], float] = {}
    for tup in itertools.product(range(len(edges) + 1), repeat=len(data0)):
        key = tuple(sorted(tup))
        p[key] = p.get(key, 0.0) + math.prod(law[j] for law, j in zip(laws0, tup))
        q[key] = q.get(key, 0.0) + math.prod(law[j] for law, j in zip(laws1, tup))
    big = math.exp(eps)
    return sum(max(0.0, p[key] - big * q[key]) for key in p)


def _check_brute_force(exports: Mapping[str, sp.Expr]) -> None:
    """The bound at eps0 = 1 (inputs in [-1/2, 1/2], scale 1) above the binned exact delta of every
    dataset on the grid {-1/2, 0, 1/2}, n = 2 and 3 (module docstring, step 5)."""
    half = 0.5
    for users, cells in ((2, 60), (3, 20)):
        edges = [-half - 6 + k * (12 + 2 * half) / (cells - 2) for k in range(cells - 1)]
        for eps in (0.0, 0.2, 0.5):
            bounds = {loss: clone_sum_reference(2 * half, loss, users, eps, 4, exports) for loss in (half, 2 * half)}
            for others in itertools.product((-half, 0.0, half), repeat=users - 1):
                for x, x2 in ((-half, half), (half, -half), (-half, 0.0), (0.0, half)):
                    bound = bounds[abs(x - x2)]
                    exact = binned_shuffle_delta((x,) + others, (x2,) + others, eps, edges)
                    if exact > bound + 1e-12:
                        raise DerivationFailed(f"clone-sum bound {bound} < binned delta {exact} (n = {users}, eps = {eps}, "
                                               f"x = {x}, x' = {x2}, others = {others})")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    _check_multiset_ratio(claim["multiset_ratio"])
    require_equal(_reduced_hockey_derived(), claim["reduced_hockey"], "reduced pair's hockey-stick integrand",
                  [{epsilon: e, TBAR: tb} for e in (0, sp.Rational(1, 3), 2) for tb in (sp.Rational(-1, 2), sp.Rational(1, 5))])
    atom, density = _laplace_t_law()
    points = [{LOSS: lo, T: tt} for lo in (sp.Rational(1, 2), 2) for tt in (sp.Rational(-1, 5), sp.Rational(1, 3))]
    require_equal(atom, claim["t_atom"], "Laplace t-law atom", [{LOSS: lo} for lo in (sp.Rational(1, 2), 2)])
    require_equal(density, claim["t_density"], "Laplace t-law density", points)
    _check_t_law(claim["t_atom"], claim["t_density"], claim["t_mass"], claim["t_moment"])
    require_equal(_spread_right_derived(), claim["spread_right"], "mean-preserving split's right share",
                  [{FA: 0, FB: sp.Rational(1, 3), GA: 0, GB: sp.Rational(1, 7), A_END: sp.Rational(1, 5), B_END: sp.Rational(1, 2)}])
    _check_monotone_in_c(claim)
    _check_brute_force(claim)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
