"""Rigorous UPPER and LOWER bounds on δ(ε) of the exact Lemma 2.8 pair when its Gram matrix is
cyclically tridiagonal (2-banded strategies, any number of batches and epochs), by a dynamic
programme along the cycle of batches [derived here, not in the paper; proofs/matrix_chain.py].

Units of σ: P = (1/b) Σ_i N(μ_i, I), Q = N(0, I), Γ = Gram matrix of the μ_i. Under Q the scores
s_i = μ_i·x are jointly Gaussian with covariance Γ and p/q(x) = S = (1/b) Σ_i exp(s_i − Γ_ii/2), so

    δ_remove(ε) = ∫ (p − e^ε q)_+ = E_Q[(S − e^ε)_+],     δ_add(ε) = ∫ (q − e^ε p)_+ = E_Q[(1 − e^ε S)_+]

depend on Γ only through the law of S under Q.

REPRESENTATION. If Γ_ij = 0 whenever the cyclic distance of i and j is >= 2, the scores are
s_i = α_i w_i + β_i w_{i+1 mod b} + γ_i u_i with independent standard normals w, u and coefficients
>= 0 (Γ_ii = α_i² + β_i² + γ_i², Γ_{i,i+1} = β_i α_{i+1}): :func:`chain_coefficients` takes the
fixed point of α_i² = Γ_ii − Γ_{i,i+1}²/α_{i+1}² (γ ≈ 0; then shrinks α by 1e-8 so every γ_i² >= 0
exactly), or the symmetric split α_i = √Γ_{i−1,i}, β_i = √Γ_{i,i+1} where Γ is diagonally dominant
(proofs/matrix_chain.py, item 1).

DYNAMIC PROGRAMME. With w_0 fixed (outer sum), T = Σ_i exp(s_i − Γ_ii/2) is accumulated along
i = 0..b−1; the state after step i is (w_{i+1}, T), T on a grid of M cells of [0, t_max) with
t_max = b·e^ε (remove: above it (T/b − e^ε)_+ is linear, so the absorbed part keeps its mass and
mean exactly) or b·e^{−ε} (add: above it the integrand is 0). The Gaussians are discretised on K
cells of [−R, R]:

- UPPER, remove: F = (S − e^ε)_+ is convex in every variable (S is a sum of exponentials of
  affine functions, t ↦ (t − e^ε)_+ is convex and non-decreasing). Replacing a variable's law by one
  larger in convex order raises E F (one variable at a time, the others fixed and independent):
  each cell's mass is spread over its two end points keeping its mean, and T's landing point over
  the two grid points around it (the rest of the computation is convex in T). The mass beyond ±R
  is dropped and its contribution bounded by E_Q[S·1{some |v| > R}] = (1/b) Σ_i P_i(some |v| > R)
  (under the tilt by e^{s_i − Γ_ii/2} each variable is shifted by its coefficient in s_i);
- UPPER, add: F = (1 − e^ε S)_+ is convex in v = e^{κw}, κ the variable's largest coefficient (S is
  then a sum of v^r with 0 <= r <= 1, concave in v, and t ↦ (1 − e^ε t)_+ is convex and
  non-increasing), so the spread keeps the cell's mean of e^{κw}; the mass beyond ±R is bounded by
  its probability (F <= 1);
- LOWER, both: each cell's mass is contracted to the one point whose w (remove) or e^{κw} (add) is
  the cell's conditional mean (Jensen), everything landing in a T cell is merged at its mean (a
  mass and a first moment per cell), and the mass beyond ±R is dropped (F >= 0).

For C >= 0 the pair is attained (:mod:`verifier.matrix.evidence`), so LOWER bounds the mechanism.

Floating point: the cell masses and first moments of N(0, 1) are computed in ball arithmetic and
rounded outward; every increment's exponent is moved by 1e-9·(1 + |exponent|) toward the safe side
(covering the float factorisation of Γ, checked to 1e-12 relative, and exp's rounding); the sums are
of non-negative terms (relative error below 2^-30 at these sizes); the remove direction's δ is the
difference of two such sums, each widened by a relative 1e-9 before subtracting, and the results
are widened by a relative 1e-9 and an absolute 1e-300. Cost: K²·b·M per outer point of w_0, so
about K³·b·M operations for K cells and M sum cells, in :mod:`verifier._fast.chain_dp`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import with_precision
from verifier._types import Direction, Side
from verifier._validation import check_integer, check_open_unit, check_real
from verifier.errors import InvalidArgument, NotApplicable, NumericalFailure

__all__ = ["CITATION", "Chain", "chain_coefficients", "delta_bound", "epsilon_bound"]

CITATION = "dynamic programme along the batch cycle of the Lemma 2.8 pair (Schuchardt & Kalinin) for a cyclically tridiagonal Gram matrix: derived rigorous upper and lower bounds"

#: Cells of the Gaussian grids and of the partial-sum grid (defaults).
CELLS = 64
SUM_CELLS = 512
#: Half-width of the Gaussian grid beyond the largest coefficient (tails below 1e-17 per variable).
_RADIUS = 8.5
_MARGIN = 1e-9
#: Relative error allowed for the two sums whose difference is the absorbed part's δ (each a sum of
#: at most cells²·b·4·cells non-negative terms: below 2^-30 relative at every size offered).
_CANCEL = 1e-9
#: Below this γ_i·R a node variable is discretised by two points (UPPER) or its mean (LOWER).
_TINY = 1e-3
#: Bisection steps of the ε searches (each ε found is a valid bound whatever the count).
_BISECTIONS = 10


@dataclass(frozen=True)
class Chain:
    """s_i = α_i w_i + β_i w_{i+1 mod b} + γ_i u_i (module docstring)."""

    alpha: npt.NDArray[np.float64]
    beta: npt.NDArray[np.float64]
    gamma: npt.NDArray[np.float64]


def _is_cyclic_tridiagonal(g: npt.NDArray[np.float64]) -> bool:
    b = g.shape[0]
    i = np.arange(b)
    diff = np.abs(i[:, None] - i[None, :])
    return bool(np.all(g[np.minimum(diff, b - diff) >= 2] == 0.0))


def _check(chain: Chain, g: npt.NDArray[np.float64]) -> bool:
    a, be, ga = chain.alpha, chain.beta, chain.gamma
    if np.any(a < 0) or np.any(be < 0) or np.any(ga < 0) or not np.all(np.isfinite(np.concatenate([a, be, ga]))):
        return False
    b = len(a)
    cov = np.diag(a * a + be * be + ga * ga)
    nxt = (np.arange(b) + 1) % b
    cov[np.arange(b), nxt] += be * a[nxt]
    cov[nxt, np.arange(b)] += be * a[nxt]
    return float(np.abs(cov - g).max()) <= 1e-12 * max(float(np.abs(g).max()), 1e-300)


def chain_coefficients(gamma: npt.ArrayLike) -> Chain:
    """The representation of the module docstring; NotApplicable if Γ is not cyclically tridiagonal
    with b >= 3, or has no representation of either kind."""
    g = np.asarray(gamma, dtype=float)
    b = g.shape[0]
    if b < 3 or not _is_cyclic_tridiagonal(g):
        raise NotApplicable("the chain bound needs b >= 3 batches and a cyclically tridiagonal Gram matrix (a strategy with at most 2 bands)")
    diag = np.diagonal(g).copy()
    off = g[np.arange(b), (np.arange(b) + 1) % b].copy()  # Γ_{i,i+1}
    alpha = np.sqrt(diag)
    for _ in range(2000):
        nxt = np.roll(alpha, -1)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = np.sqrt(np.maximum(diag - np.where(off > 0, off * off / (nxt * nxt), 0.0), 0.0))
        if not np.all(new > 0) and np.any(off > 0):
            break
        done = float(np.abs(new - alpha).max()) <= 1e-15 * float(alpha.max())
        alpha = new
        if done:
            shrunk = alpha * (1 - 1e-8)
            beta = np.where(off > 0, off / np.roll(shrunk, -1), 0.0)
            rest = diag - shrunk**2 - beta**2
            if np.all(rest >= 0):
                chain = Chain(shrunk, beta, np.sqrt(rest))
                if _check(chain, g):
                    return chain
            break
    root = np.sqrt(off)
    rest = diag - root**2 - np.roll(root, 1) ** 2
    if np.all(rest >= 0):
        chain = Chain(np.roll(root, 1), root, np.sqrt(rest))
        if _check(chain, g):
            return chain
    raise NotApplicable("the Gram matrix has no chain representation with non-negative coefficients")


@lru_cache(maxsize=256)
def _grid(cells: int, radius: float, kappa: float, kind: str) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """(points, weights, mass dropped per side) of N(0, 1) restricted to [−R, R] in ``cells`` cells:
    "spread" puts each cell's mass on its two end points keeping E f(w), "mean" on the one point w*
    with f(w*) = E[f(w) | cell], where f(w) = w (κ = 0) or e^{κw} (κ > 0). The masses and
    ∫_cell f dΦ = φ(a) − φ(b) (κ = 0) or e^{κ²/2}(Φ(b − κ) − Φ(a − κ)) (κ > 0) are computed in ball
    arithmetic; weights are rounded up for "spread" (UPPER bounds of a non-negative functional) and
    down for "mean" (LOWER)."""
    edges = np.linspace(-radius, radius, cells + 1)
    with with_precision():
        root2 = arb(2).sqrt()
        k = arb(kappa)

        def cdf(t: arb) -> arb:
            return (-t / root2).erfc() / 2

        def f(t: float) -> arb:
            return arb(t) if kappa == 0 else (k * arb(t)).exp()

        plain = [cdf(arb(float(t))) for t in edges]
        masses = [plain[i + 1] - plain[i] for i in range(cells)]
        if kappa == 0:
            pdf = [(-(arb(float(t)) ** 2) / 2).exp() / (2 * arb.pi()).sqrt() for t in edges]
            integrals = [pdf[i] - pdf[i + 1] for i in range(cells)]
        else:
            shifted = [cdf(arb(float(t)) - k) for t in edges]
            integrals = [(k * k / 2).exp() * (shifted[i + 1] - shifted[i]) for i in range(cells)]
        dropped = _round(plain[0], up=True)
        if kind == "spread":
            weights = np.zeros(cells + 1)
            for i in range(cells):
                fa, fb = f(float(edges[i])), f(float(edges[i + 1]))
                right = (integrals[i] - fa * masses[i]) / (fb - fa)
                weights[i + 1] += _round(right, up=True)
                weights[i] += _round(masses[i] - right, up=True)
            return edges.copy(), weights, dropped
        if kind == "mean":
            points, weights = [], []
            for i in range(cells):
                ratio = integrals[i] / masses[i]
                points.append(float((ratio if kappa == 0 else ratio.log() / k).mid()))
                weights.append(_round(masses[i], up=False))
            return np.array(points), np.array(weights), dropped
    raise InvalidArgument("kind", kind, "must be spread or mean")


def _round(x: arb, up: bool) -> float:
    if up:
        return (float(x.mid()) + float(x.rad())) * (1 + 2.0**-50) + 5e-324
    return max(0.0, (float(x.mid()) - float(x.rad())) * (1 - 2.0**-50))


def _variable_grid(coefficient: float, remove: bool, kind: str, cells: int, radius: float):
    """The grid of a variable whose largest coefficient is ``coefficient``, in the transform of the
    module docstring (w for remove, e^{κw} with κ = ``coefficient`` for add); one cell when the
    coefficient is tiny (the one-cell law is still a valid spread or contraction, only coarser)."""
    kappa = 0.0 if remove else float(coefficient)
    return _grid(1 if coefficient * radius < _TINY else cells, radius, kappa, kind)


def delta_bound(gamma: npt.ArrayLike, epsilon: float, direction: Direction, side: Side, cells: int = CELLS, sum_cells: int = SUM_CELLS) -> float:
    """A rigorous bound on δ(ε) on ``side`` in ``direction`` (module docstring)."""
    from verifier._fast.chain_dp import chain_step

    eps = check_real("epsilon", epsilon)
    if not isinstance(direction, Direction) or side not in (Side.UPPER, Side.LOWER):
        raise InvalidArgument("direction/side", (direction, side), "must be a Direction and Side.UPPER or Side.LOWER")
    k = check_integer("cells", cells, minimum=1)
    m = check_integer("sum_cells", sum_cells, minimum=1)
    g = np.ascontiguousarray(gamma, dtype=np.float64)
    chain = chain_coefficients(g)
    b = g.shape[0]
    remove = direction is Direction.REMOVE
    kind, mode = ("spread", 0) if side is Side.UPPER else ("mean", 1)
    coef_max = float(max(chain.alpha.max(), chain.beta.max(), chain.gamma.max()))
    radius = _RADIUS + coef_max
    # the transform each variable is spread/contracted in: w itself (remove: the integrand is convex
    # in w), or e^{κw} with κ its largest coefficient (add: the integrand is convex there)
    w_grids = [_variable_grid(float(c), remove, kind, k, radius) for c in np.maximum(chain.alpha, np.roll(chain.beta, 1))]
    u_grids = [_variable_grid(float(c), remove, kind, k, radius) for c in chain.gamma]
    tmax = b * math.exp(eps if remove else -eps)
    h = tmax / m
    half = np.diagonal(g) / 2
    raise_s = 1.0 if remove == (side is Side.UPPER) else -1.0  # move S up (UPPER remove, LOWER add) or down

    def increments(i: int, prev: npt.NDArray[np.float64], nxt: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        u_points = u_grids[i][0]
        z = chain.alpha[i] * prev[:, None, None] + chain.beta[i] * nxt[None, :, None] + chain.gamma[i] * u_points[None, None, :] - half[i]
        z = z + raise_s * _MARGIN * (1.0 + np.abs(z))
        return np.ascontiguousarray(np.exp(z))

    total = 0.0
    points0, weights0, _ = w_grids[0]
    for v0, p0 in zip(points0, weights0):
        if p0 == 0.0:
            continue
        mass = np.zeros((1, m))
        mass[0, 0] = 1.0
        moment = np.zeros((1, m))
        bmass, bsum = np.zeros(1), np.zeros(1)
        prev = np.array([v0])
        for i in range(b):
            last = i == b - 1
            nxt = np.array([v0]) if last else w_grids[i + 1][0]
            wt = np.outer(np.ones(1) if last else w_grids[i + 1][1], u_grids[i][1])
            out = [np.zeros((len(nxt), m)), np.zeros((len(nxt), m)), np.zeros(len(nxt)), np.zeros(len(nxt))]
            if chain_step(mode, int(remove), mass, moment, bmass, bsum, increments(i, prev, nxt), np.ascontiguousarray(wt), h, *out):
                raise NumericalFailure("chain_dp: inconsistent work arrays")
            mass, moment, bmass, bsum = out
            prev = nxt
        if remove:  # only the absorbed part has T >= b·e^ε, where (T/b − e^ε)_+ = T/b − e^ε
            mean, floor = float(bsum[0]) / b, math.exp(eps) * float(bmass[0])
            value = mean - floor + (1.0 if side is Side.UPPER else -1.0) * _CANCEL * (mean + floor)
        else:  # (1 − e^ε T/b)_+ = (1 − T/t_max)_+ at the grid points (SPREAD) or the cell means (JENSEN)
            t = np.arange(m) * h if mode == 0 else np.divide(moment[0], mass[0], out=np.zeros(m), where=mass[0] > 0)
            value = float((mass[0] * np.maximum(1.0 - t / tmax, 0.0)).sum())
        total += p0 * max(value, 0.0)
    if side is Side.LOWER:
        return float(max(0.0, total * (1 - 1e-9)))
    n_vars = 2 * b  # the w_i and the u_i, each dropped beyond ±R on both sides
    if remove:  # E_Q[S; some variable beyond ±R] <= max_i P_i(...) (module docstring)
        tail = n_vars * math.erfc((radius - coef_max) / math.sqrt(2)) * (1 + 1e-6)
    else:  # the integrand is <= 1
        tail = n_vars * 2 * max(g_[2] for g_ in w_grids + u_grids)
    return float(min(1.0, total * (1 + 1e-9) + tail + 1e-300))


def epsilon_bound(gamma: npt.ArrayLike, delta: float, direction: Direction, side: Side, **kwargs) -> float:
    """A rigorous bound on ε(δ) on ``side``: UPPER the smallest ε found with δ_upper(ε) <= δ, LOWER the
    largest with δ_lower(ε) > δ (0 if none), by bisection (each value a valid bound)."""
    target = check_open_unit("delta", delta)
    if side is Side.UPPER:
        lo, hi = 0.0, 1.0
        while delta_bound(gamma, hi, direction, side, **kwargs) > target:
            lo, hi = hi, 2 * hi
            if hi > 1e3:
                return math.inf
        for _ in range(_BISECTIONS):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if delta_bound(gamma, mid, direction, side, **kwargs) <= target else (mid, hi)
        return hi
    if delta_bound(gamma, 0.0, direction, side, **kwargs) <= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while delta_bound(gamma, hi, direction, side, **kwargs) > target:
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return lo
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_bound(gamma, mid, direction, side, **kwargs) > target else (lo, mid)
    return lo
