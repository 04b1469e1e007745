"""Discrete PLDs of a dominating pair, on either side, with O(h²) discretisation error per step.

Both constructions work on the privacy profile as a function of κ = e^ε,

    f(κ) = H_κ(P‖Q) = sup_S P(S) − κQ(S),

which is convex and non-increasing on [0, ∞), with f(0) = 1, f(κ) >= max(1 − κ, p_∞) and
f(κ) → p_∞ = P(Q = 0). A convex, non-increasing, piecewise-linear g with g(0) = 1, first slope
>= −1 and breakpoints κ_k = e^{ℓ_k} on the loss grid is the profile of the grid pair with
P-masses p_k = κ_k·(slope jump of g at κ_k) at loss ℓ_k, P-mass g(∞) at +∞ and the remaining Q-mass
where P = 0 (Σ_k p_k + g(∞) = g(0) = 1, Σ_k p_k/κ_k = −g'(0+) <= 1). For probability pairs, g >= f
for all κ means the grid pair dominates the true pair in Blackwell's sense (the true pair is a
post-processing of it), and g <= f the reverse; Blackwell order survives composition (Zhu, Dong &
Wang 2022, Thm 10).

DOMINATING — connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, Alg. 1):
g is the lower convex hull of (0, 1) and (κ_i, f⁺_i), f⁺_i an upper end of a rigorous ball of f(κ_i),
continued flat after the last vertex whose outgoing slope is not certainly negative. On every hull
segment, g is a chord through points on or above f, and f lies below its own chords, so g >= f
there; after the flat start, g = g(κ_v) >= f(κ_v) >= f(κ). The top flat value is the mass at +∞.

DOMINATED — a chord interpolation pushed below f by a bound on the chord-to-curve gap. On an interval
I = [κ_{i−1}, κ_i] the chord c of f is at most the chord through the upper ends, and f is at least
max(L, R), where L extends the secant of the interval on the left to the right and R the secant of
the interval on the right to the left (for convex f, extended secants lie below f; using a lower end
at the shared point and an upper end at the far point makes the slope of L smaller and that of R
larger, so both stay below f). Hence c − f <= G_I := max over I of (c⁺ − max(L, R)), reached at an
end of I or where L and R cross. Values w_i = f⁻_i − max(G of the two intervals at κ_i) − μ give
a chord interpolation <= f − μ (chord of w on I <= c − G_I <= f); G_I is computed in outward-rounded
float interval arithmetic (in ball arithmetic where f may exceed 1/2, see :func:`_gap_bounds`). At the bottom, g = 1 − κ up to the
first grid point b where w_b >= 1 − κ_b (1 − κ <= f everywhere; this also makes the first slope exactly
−1); at the top, g ends at (κ_{a+1}, p∞⁻) where L of I_{a+1} is still >= p∞⁻ at κ_{a+1}, so the last
segment lies below L, and is flat at p∞⁻ <= f beyond.
Where f is exactly linear next to κ = 0 (Q-mass where P = 0), the profile starts with slope −1 only
up to a virtual vertex κ_v = 2^-64 whose tiny P-mass is dropped. The lower convex hull of these points is
<= their interpolation <= f. The hull is built with ball-arithmetic tests; a point whose convexity
is uncertain is removed, and every removed point is checked afterwards to lie above the hull by at
most μ (the slack already subtracted), so the result is <= f even then. Where a corrected value
dips below p∞⁻ (gaps larger than f, on coarse grids next to a kink), the hull is ended at its last
vertex at or above p∞⁻: max(hull, p∞⁻) is a valid profile, and its one off-grid vertex's P-mass is
moved down to that vertex (stochastically smaller).

Every proof above uses neighbouring points only, so the profile points may be any increasing subset
of the grid: :func:`_tail_coarsened` thins them where a loss tail is light, and the masses still sit
on grid losses.

Masses are second differences of g (balls); they are rounded toward the safe side: DOMINATED masses
down (entrywise smaller: stochastically smaller, the deficit is dropped), DOMINATING masses down
with every deficit sent to +∞ and the first vertex topped up so the total is >= 1 (stochastically
larger). The grid spans the [tail, 1 − tail] quantiles of the loss (any span is valid; it only
affects tightness).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import ARB_PRECISION_BITS, Intervals, arb_bound, arb_bounds_many, down, loss_index, up, with_precision
from verifier._types import Direction, Dominance, Measure, Side
from verifier._validation import check_open_unit
from verifier.errors import AccuracyNotReachable, InvalidArgument, NumericalFailure
from verifier.pairs import DominatingPair
from verifier.pairs.base import evaluate_many
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD, check_step, sum_down, sum_up

__all__ = ["MAX_GRID", "pld_from_pair", "pld_sides_from_pair", "pld_sides_from_profile", "profile_balls"]

#: Default memory limit: the most grid points one constructed PLD may span.
MAX_GRID = 1 << 22

#: Slack (absolute, in δ) subtracted from the dominated values so that hull points removed on an
#: uncertain convexity test cannot lift the result above f (checked after the hull is built).
_MU = arb(2) ** -100

#: Profile points in the far tails (:func:`_tail_coarsened`): the spacing doubles each time the smaller
#: tail mass beyond a point falls by a further factor COARSEN_RATIO below the caller's threshold.
COARSEN_RATIO = 10.0
COARSEN_MAX_LEVEL = 12

#: The dominated profile's virtual first vertex κ_v = 2^-64 (its P-mass, at most κ_v, is dropped).
_KAPPA_V = arb(2) ** -64


def pld_from_pair(
    pair: DominatingPair,
    direction: Direction,
    dominance: Dominance,
    step: float,
    tail_mass: float = DEFAULT_TAIL_MASS,
    *,
    max_grid: int = MAX_GRID,
    coarsen_below: float | None = None,
) -> DiscretePLD:
    """DOMINATING (connect-the-dots) or DOMINATED (gap-corrected chords) discrete PLD of ``pair`` in
    ``direction`` on the grid {i·step}; see the module docstring for the constructions and proofs.
    The PLD yields UPPER (DOMINATING) or LOWER (DOMINATED) bounds on δ(ε) that stay valid under
    composition. Each step's error in δ is O(step²) (chords of a smooth convex profile)."""
    return pld_sides_from_pair(
        pair, direction, step, tail_mass, max_grid=max_grid, sides=(dominance,), coarsen_below=coarsen_below
    )[0]


def pld_sides_from_pair(
    pair: DominatingPair,
    direction: Direction,
    step: float,
    tail_mass: float = DEFAULT_TAIL_MASS,
    *,
    max_grid: int = MAX_GRID,
    sides: tuple[Dominance, ...] = (Dominance.DOMINATING, Dominance.DOMINATED),
    coarsen_below: float | None = None,
) -> list[DiscretePLD]:
    """:func:`pld_from_pair` for several sides at once, sharing the profile evaluations. With
    ``coarsen_below`` = τ the profile is evaluated on a subset of the grid whose spacing grows where
    a loss tail holds less than τ (:func:`_tail_coarsened`); the masses still sit on the grid
    {i·step}. Meant for many-fold compositions, where a far-tail cell enters only through its mass."""
    if not isinstance(pair, DominatingPair):
        raise InvalidArgument("pair", pair, "must be a DominatingPair")
    for dominance in sides:
        if not isinstance(dominance, Dominance):
            raise InvalidArgument("dominance", dominance, "must be Dominance.DOMINATING or Dominance.DOMINATED")
    h = check_step(step)
    tail = check_open_unit("tail_mass", tail_mass)
    oriented = pair.oriented(direction)
    j_lo, j_hi = _grid_span(oriented, h, tail)
    if j_hi - j_lo + 1 > max_grid:
        raise AccuracyNotReachable(
            f"the loss range of {pair!r} needs {j_hi - j_lo + 1} grid points at step {h}, above max_grid={max_grid}"
        )
    if coarsen_below is None:
        indices = np.arange(j_lo, j_hi + 1)
    else:
        indices = _tail_coarsened(oriented, j_lo, j_hi, h, check_open_unit("coarsen_below", coarsen_below))
    balls, kappas, p_inf = profile_balls(oriented, indices * h)
    return [_side(dominance, direction, h, indices, balls, kappas, p_inf) for dominance in sides]


def pld_sides_from_profile(
    direction: Direction,
    step: float,
    j_lo: int,
    lower: np.ndarray,
    upper: np.ndarray,
    inf_lower: float,
    sides: tuple[Dominance, ...] = (Dominance.DOMINATING, Dominance.DOMINATED),
) -> list[DiscretePLD]:
    """The constructions of :func:`pld_from_pair` from rigorous float bounds ``lower <= f(e^ℓ_i) <= upper``
    of a (convex, non-increasing) privacy profile at the grid losses ℓ_i = (j_lo + i)·step and a lower
    bound on its limit p_∞; the module docstring's proofs use nothing else."""
    h = check_step(step)
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.shape != hi.shape or lo.ndim != 1 or (lo > hi).any():
        raise InvalidArgument("profile bounds", (lo.shape, hi.shape), "need lower <= upper, one per grid loss")
    with with_precision(ARB_PRECISION_BITS):
        balls = [arb(float(a)).union(arb(float(b))) for a, b in zip(lo, hi)]
        kappas = [arb(float(j * h)).exp() for j in range(j_lo, j_lo + lo.size)]
        p_inf = arb(float(max(0.0, inf_lower)))
    indices = np.arange(j_lo, j_lo + lo.size)
    return [_side(dominance, direction, h, indices, balls, kappas, p_inf) for dominance in sides]


def _side(
    dominance: Dominance,
    direction: Direction,
    h: float,
    indices: np.ndarray,
    balls: list[arb],
    kappas: list[arb],
    p_inf: arb,
) -> DiscretePLD:
    with with_precision(ARB_PRECISION_BITS):
        if dominance is Dominance.DOMINATING:
            masses, inf_mass, index0 = _dominating(balls, kappas, p_inf)
            probs, inf_mass, budget = _round_dominating(masses, inf_mass, index0)
            dropped = 0.0
        else:
            found = _dominated(balls, kappas, p_inf)
            if found is None:  # no safe chord construction on this grid: the identical pair's profile
                return DiscretePLD(h, 0, np.ones(1), 0.0, 0.0, dominance, direction, 0.0)
            masses, inf_mass = found
            probs = np.maximum(arb_bounds_many(masses)[0], 0.0)
            inf_mass = max(0.0, arb_bound(inf_mass, Side.LOWER))
            if down(sum_down(probs) + inf_mass) > 1.0:  # lower ends of masses summing to 1 − g(∞)
                raise NumericalFailure("dominated PLD construction: masses exceed one (not a sub-probability)")
            dropped = max(0.0, up(1.0 - sum_down(probs) - inf_mass))
            budget = dropped
    nonzero = np.flatnonzero(probs)
    if nonzero.size == 0:
        return DiscretePLD(h, int(indices[0]), np.zeros(1), inf_mass, dropped, dominance, direction, budget)
    grid = indices[nonzero]  # position k of the profile points sits at grid index indices[k]
    on_grid = np.zeros(int(grid[-1] - grid[0]) + 1)
    on_grid[grid - grid[0]] = probs[nonzero]
    return DiscretePLD(h, int(grid[0]), on_grid, inf_mass, dropped, dominance, direction, budget)


def _tail_coarsened(oriented: DominatingPair, j_lo: int, j_hi: int, h: float, start: float) -> np.ndarray:
    """Grid indices of the profile points: every index where both loss tails (under P of the
    REMOVE-oriented pair) exceed ``start``, spacing 2^k·step where the smaller tail is below
    start·COARSEN_RATIO^-k (k <= COARSEN_MAX_LEVEL), and both ends j_lo, j_hi.

    Both constructions are valid on any increasing subset of grid points (the module docstring's
    proofs use neighbouring points only); the subset decides tightness and cost. A cell of width W
    holding tail mass τ costs O(τ·W²) in δ after composition (chords are exact for the single
    step) where the uniform grid costs O(step²), so with ratio 10 the far tails add about
    1.7·start times the uniform grid's error (Σ_k start·10^-k·4^k). Float tail masses suffice: they
    only place points (:func:`_tail_levels`)."""
    level = _tail_levels(oriented, np.arange(j_lo, j_hi + 1, dtype=np.float64) * h, start)
    chosen = [0]
    last = level.size - 1
    while chosen[-1] < last:
        i = chosen[-1]
        k = int(level[i])
        while k > 0 and int(level[i : min(i + (1 << k), last) + 1].min()) < k:
            k -= 1
        chosen.append(min(i + (1 << k), last))
    return j_lo + np.asarray(chosen, dtype=np.int64)


#: :func:`_tail_levels` evaluates the loss tails at every TAIL_SAMPLE-th grid loss, and at every loss
#: only between samples whose levels differ.
TAIL_SAMPLE = 32


def _tail_levels(oriented: DominatingPair, losses: np.ndarray, start: float) -> np.ndarray:
    """The coarsening level ⌊log_ratio(start / τ)⌋ clipped to [0, COARSEN_MAX_LEVEL] at each loss, τ
    the smaller of the two loss tails there (floats). τ rises then falls along the grid (the lower
    tail increases, the upper decreases), so the level falls then rises: between two samples of
    equal level on one side of the turn every loss has that level. The tails are evaluated at every
    TAIL_SAMPLE-th loss and at every loss of a sample interval whose ends differ in level or that
    holds the turn (the levels only place points: any subset of the grid is valid)."""

    def levels(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore"):
            tail = np.minimum(
                oriented.loss_cdf(x, Direction.REMOVE, Measure.P), oriented.loss_sf(x, Direction.REMOVE, Measure.P)
            )
            ratio = np.log(start / np.maximum(tail, 1e-300)) / math.log(COARSEN_RATIO)
        return np.clip(np.floor(ratio), 0, COARSEN_MAX_LEVEL).astype(np.int64), tail

    n = losses.size
    samples = np.unique(np.append(np.arange(0, n, TAIL_SAMPLE), n - 1))
    at, tail = levels(losses[samples])
    out = np.repeat(at[:-1], np.diff(samples))
    out = np.append(out, at[-1])
    turn = int(np.argmax(tail))  # the sample of the largest tail: the turn lies next to it
    exact = np.flatnonzero(at[:-1] != at[1:])
    exact = np.union1d(exact, np.arange(max(0, turn - 1), min(at.size - 1, turn + 1)))
    if exact.size:
        inside = np.concatenate([np.arange(samples[i] + 1, samples[i + 1]) for i in exact])
        if inside.size:
            out[inside] = levels(losses[inside])[0]
    return out


def _grid_span(oriented: DominatingPair, h: float, tail: float) -> tuple[int, int]:
    """Grid indices covering the [tail, 1 − p_∞ − tail] quantiles of the loss under P (one point of
    margin each side); any span is valid, the span only decides tightness."""
    with with_precision(ARB_PRECISION_BITS):
        p_inf = arb_bound(oriented._infinite_loss_mass_arb(), Side.UPPER)
    finite = max(0.0, 1.0 - p_inf)
    levels = np.array([min(tail, 0.5 * finite), max(0.5 * finite, finite - tail)])
    q = np.asarray(oriented.loss_quantile(levels, Direction.REMOVE, Measure.P), dtype=float)
    lo, hi = float(q[0]), float(q[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise NumericalFailure(f"could not place a finite loss grid for {oriented!r} (quantiles {lo}, {hi})")
    lo, hi = min(lo, hi), max(lo, hi)
    j_lo = int(loss_index(np.array([lo]), h, Dominance.DOMINATED)[0]) - 1
    j_hi = int(loss_index(np.array([hi]), h, Dominance.DOMINATING)[0]) + 1
    return j_lo, j_hi


#: Profile balls remembered per pair (:func:`_ball_memo`), at most this many per pair: a refinement
#: that halves the step, or a second grid step over the same pair, meets the coarser grid's losses again.
PROFILE_BALL_CACHE = 1 << 17


#: Working precision and relative accuracy (bits) of the profile balls. A ball is rigorous at any
#: precision, so these set tightness only: the constructions use the balls' exact ends, which lie
#: within 2^-51·f of f (relative), about the float64 rounding that float profile bounds carry
#: (:func:`pld_sides_from_profile`, fed by subsampling). 72 bits reach 52 accurate bits on the
#: subsampled Gaussian profile (its erfc difference cancels a few) at about three quarters of the
#: 128-bit cost; a point that does not is evaluated again from 128 bits up. Measured on the issue-30
#: row (Poisson σ = 0.6, λ = 1e-3, T = 10⁵, δ = 1e-6): the ε bracket moves by < 1e-8 relative.
PROFILE_BITS = 72
PROFILE_ACCURACY_BITS = 52
#: ... except the first profile points, evaluated to full precision (never from the memo): the
#: dominated side's virtual start (:func:`_virtual_start_fits`) compares them at κ_v = 2^-64 next to
#: f ≈ 1, where 52 relative bits are too few (a pair with Q-mass where P = 0 then loses the start).
FULL_PRECISION_HEAD = 2


@functools.lru_cache(maxsize=2)
def _ball_memo(oriented: DominatingPair) -> dict[float, arb]:
    """Loss -> ball of δ(loss) already evaluated for ``oriented`` (pairs are frozen values: equal
    pairs have equal profiles; arb balls are immutable)."""
    return {}


def profile_balls(oriented: DominatingPair, losses: np.ndarray) -> tuple[list[arb], list[arb], arb]:
    """Balls of f(κ_i) = δ(ℓ_i) (clipped to [0, 1]) and of κ_i = e^{ℓ_i}, and of p_∞, for a REMOVE-oriented pair."""
    points = [float(ell) for ell in losses]
    head = evaluate_many(oriented._delta_arb, points[:FULL_PRECISION_HEAD])  # see FULL_PRECISION_HEAD
    memo = _ball_memo(oriented)
    rest = points[FULL_PRECISION_HEAD:]
    missing = [x for x in dict.fromkeys(rest) if x not in memo]
    fresh = dict(zip(missing, evaluate_many(oriented._delta_arb, missing, bits=PROFILE_BITS, accuracy_bits=PROFILE_ACCURACY_BITS)))
    balls = head + [fresh[x] if x in fresh else memo[x] for x in rest]
    if len(memo) + len(fresh) > PROFILE_BALL_CACHE:
        memo.clear()
    if len(fresh) <= PROFILE_BALL_CACHE:
        memo.update(fresh)
    with with_precision(ARB_PRECISION_BITS):
        kappas = [arb(float(ell)).exp() for ell in losses]
        p_inf = oriented._infinite_loss_mass_arb()
    return balls, kappas, p_inf


def _ends(ball: arb) -> tuple[arb, arb]:
    """Exact lower and upper ends of a ball of f, clipped to [0, 1]."""
    lo, hi = ball.lower(), ball.upper()
    return (lo if lo > 0 else arb(0)), (hi if hi < 1 else arb(1))


def _slope(x0: arb, y0: arb, x1: arb, y1: arb) -> arb:
    return (y1 - y0) / (x1 - x0)


def _lower_hull(xs: Sequence[arb], ys: Sequence[arb]) -> tuple[list[int], list[arb]]:
    """Indices of the lower convex hull (monotone chain) and the slopes of its edges; a middle point
    stays only if its convexity is certain (strictly increasing slopes in ball arithmetic)."""
    hull: list[int] = []
    edges: list[arb] = []  # edges[i]: slope from hull[i] to hull[i + 1]
    for c in range(len(xs)):
        slope = None
        while hull:
            b = hull[-1]
            slope = _slope(xs[b], ys[b], xs[c], ys[c])
            if len(hull) < 2 or edges[-1] < slope:
                break
            hull.pop()
            edges.pop()
        if hull:
            edges.append(slope)
        hull.append(c)
    return hull, edges


def _vertex_masses(xs: Sequence[arb], hull: list[int], edges: list[arb]) -> list[arb]:
    """p_k = κ_k·(slope after − slope before) at every hull vertex but the first (κ = 0); the slope
    after the last vertex is 0 (``edges`` may extend past the last vertex; those slopes are unused)."""
    out = []
    for pos in range(1, len(hull)):
        s_out = edges[pos] if pos + 1 < len(hull) else arb(0)
        out.append(xs[hull[pos]] * (s_out - edges[pos - 1]))
    return out


def _dominating(balls: list[arb], kappas: list[arb], p_inf: arb) -> tuple[list[tuple[int, arb]], arb, int]:
    """Connect-the-dots masses (grid index, ball), the +∞ mass ball, and the grid index of the first vertex."""
    xs = [arb(0)] + kappas
    ys = [arb(1)] + [_ends(b)[1] for b in balls]
    hull, edges = _lower_hull(xs, ys)
    # Flat after the first vertex whose outgoing slope is not certainly negative.
    for pos in range(1, len(hull) - 1):
        if not edges[pos] < 0:
            hull = hull[: pos + 1]
            break
    masses = _vertex_masses(xs, hull, edges)
    inf_mass = ys[hull[-1]] if len(hull) > 1 else arb(1)
    pairs = [(idx - 1, m) for idx, m in zip(hull[1:], masses)]
    return pairs, inf_mass, hull[1] - 1 if len(hull) > 1 else 0


def _round_dominating(
    masses: list[tuple[int, arb]], inf_mass: arb, index0: int
) -> tuple[np.ndarray, float, float]:
    """Float masses stochastically above the exact ones: lower ends (>= 0) everywhere but the first
    vertex, the deficits (upper − float) added to +∞, the first vertex topped up to a total >= 1."""
    size = (masses[-1][0] + 1) if masses else 1
    probs = np.zeros(max(size, index0 + 1))
    others = [(idx, m) for idx, m in masses if idx != index0]
    deficit = 0.0
    if others:
        where = np.array([idx for idx, _ in others], dtype=np.int64)
        lower, upper = arb_bounds_many([m for _, m in others])
        probs[where] = np.maximum(lower, 0.0)
        deficit = sum_up(np.maximum(up(upper - probs[where]), 0.0))  # each term >= its mass's upper end − float
    inf_float = up(arb_bound(inf_mass, Side.UPPER) + deficit)
    rest = up(1.0 - sum_down(probs)) - inf_float
    probs[index0] = max(0.0, up(rest))
    return probs, inf_float, deficit


def _gap_bounds(lo: list[arb], hi: list[arb], xs: list[arb], c_inf: arb, balls: list[arb]) -> list[arb]:
    """G for the intervals I_i = [xs[i−1], xs[i]], i = 1..n (xs[0] = 0): an upper bound on chord − f
    (see :func:`_ball_gap_bounds`), in floats (:func:`_float_gap_bounds`, all intervals at once), and
    in ball arithmetic where a point of the interval's formula may lie above 1/2: next to κ = 0 the
    dominated side compares f ≈ 1 at 2^-64 (:func:`_virtual_start_fits`, the bottom search), finer
    than floats resolve. ``balls`` are f's balls at xs[1:] (``lo``, ``hi`` their clipped ends)."""
    n = len(xs) - 1
    lower, upper = arb_bounds_many(balls)
    lo_f = np.concatenate([[1.0], np.maximum(lower, 0.0)])
    hi_f = np.concatenate([[1.0], np.minimum(upper, 1.0)])
    c_inf_f = float(arb_bounds_many([c_inf])[0][0])
    lo_f[-1] = max(lo_f[-1], c_inf_f)  # as lo[-1] (f >= p_∞)
    widths = arb_bounds_many([xs[i] - xs[i - 1] for i in range(1, n + 1)])
    gaps = [arb(g) for g in _float_gap_bounds(lo_f, hi_f, Intervals(*widths), c_inf_f)]
    high = np.concatenate([[False, False], hi_f > 0.5, [False]])  # high[j + 2]: point j may lie above 1/2
    touched = high[:-3] | high[1:-2] | high[2:-1] | high[3:]  # touched[i]: one of points i − 2 … i + 1
    near_one = [int(i) for i in np.flatnonzero(touched[1:]) + 1]
    for i, gap in zip(near_one, _ball_gap_bounds(lo, hi, xs, c_inf, near_one)):
        gaps[i] = gap
    return gaps


def _ball_gap_bounds(lo: list[arb], hi: list[arb], xs: list[arb], c_inf: arb, intervals: list[int]) -> list[arb]:
    """G (below) for the intervals I_i, i in ``intervals``, in ball arithmetic.

    G for the intervals I_i = [xs[i−1], xs[i]], i = 1..n (xs[0] = 0): an upper bound on chord − f.

    With c the chord through the upper ends and L, R the lower lines of the module docstring, and
    X_lo <= X_hi points of I bracketing where L and R cross (the whole interval when the crossing is
    not located): every x in I has x <= X_hi or x >= X_lo, c − max(L, R) <= c − L on [x0, X_hi] and
    <= c − R on [X_lo, x1], and linear functions peak at interval ends. So G <= the largest of
    (c − L)(x0), (c − L)(X_hi), (c − R)(X_lo), (c − R)(x1).
    """
    n = len(xs) - 1
    zero = arb(0)
    gaps = []
    for i in intervals:
        x0, x1, lo0, hi0 = xs[i - 1], xs[i], lo[i - 1], hi[i - 1]
        s_left = arb(-1) if i == 1 else (lo0 - hi[i - 2]) / (x0 - xs[i - 2])  # at I_1: f >= 1 − κ, slope −1 through (0, 1)
        if i == n:
            s_right, r_at_x1 = zero, c_inf
        else:
            s_right, r_at_x1 = (hi[i + 1] - lo[i]) / (xs[i + 1] - x1), lo[i]
        s_chord = (hi[i] - hi0) / (x1 - x0)
        x_lo, x_hi = x0, x1
        if s_right - s_left > 0 or s_right - s_left < 0:
            x_cross = (r_at_x1 - lo0 - s_right * x1 + s_left * x0) / (s_left - s_right)
            x_hi = _clamp(x_cross.upper(), x0, x1)
            x_lo = _clamp(x_cross.lower(), x0, x1)
        gap = max(
            (hi0 - lo0).upper(),
            ((hi0 - lo0) + (s_chord - s_left) * (x_hi - x0)).upper(),  # (c − L)(X_hi)
            ((hi0 + s_chord * (x_lo - x0)) - (r_at_x1 + s_right * (x_lo - x1))).upper(),  # (c − R)(X_lo)
            (hi[i] - r_at_x1).upper(),
        )
        gaps.append(gap if gap > 0 else zero)
    return gaps


def _float_gap_bounds(
    lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64], widths: Intervals, c_inf: float
) -> npt.NDArray[np.float64]:
    """:func:`_ball_gap_bounds`' G for every interval at once, in outward-rounded float interval
    arithmetic (:class:`~verifier._directed.Intervals`: each operation contains the exact result),
    from float bounds lo <= f <= hi at the points (position 0: κ = 0, f = 1), enclosures of the
    interval widths κ_i − κ_{i−1} (``widths``, i = 1..n) and p∞⁻ = ``c_inf``. Position 0 of the result
    is 0 (no interval).

    The same four candidates, in the offset t = κ − κ_{i−1} ∈ [0, w], w the width (floats keep the
    small differences exact there: no κ-sized term cancels): c(t) = hi0 + s_c·t, L(t) = lo0 + s_L·t,
    R(t) = r + s_R·(t − w); L and R cross at t* = (r − lo0 − s_R·w)/(s_L − s_R); with T_hi, T_lo the
    ends of t* clamped to [0, w] (0 or w where not certainly inside, and 0, w where s_L − s_R may
    vanish), G <= max(hi0 − lo0, hi0 − lo0 + (s_c − s_L)·T_hi, hi0 − r + s_R·w + (s_c − s_R)·T_lo,
    hi1 − r) — the upper ends of interval enclosures of each."""
    n = lo.size - 1
    at = Intervals.point
    i = np.arange(1, n + 1)
    w = widths
    lo0, hi0, lo1, hi1 = at(lo[:-1]), at(hi[:-1]), at(lo[1:]), at(hi[1:])
    s_chord = (hi1 - hi0) / w
    first, last = i == 1, i == n
    prev, nxt = np.maximum(i - 2, 0), np.minimum(i, n - 1)  # widths[i − 2], widths[i]: of I_{i−1}, I_{i+1}
    s_left = (lo0 - at(hi[np.maximum(i - 2, 0)])) / w[prev]  # the secant on the left, lower end at x0
    s_left = Intervals(np.where(first, -1.0, s_left.lo), np.where(first, -1.0, s_left.hi))  # f >= 1 − κ on I_1
    s_right = (at(hi[np.minimum(i + 1, n)]) - lo1) / w[nxt]  # the secant on the right, lower end at x1
    s_right = Intervals(np.where(last, 0.0, s_right.lo), np.where(last, 0.0, s_right.hi))  # f >= p∞⁻ on I_n
    r = Intervals(np.where(last, c_inf, lo1.lo), np.where(last, c_inf, lo1.hi))
    spread = s_left - s_right
    located = (spread.lo > 0.0) | (spread.hi < 0.0)
    t_star = (r - lo0 - s_right * w) / spread
    t_hi = _clamped(np.where(located, t_star.hi, np.inf), w)
    t_lo = _clamped(np.where(located, t_star.lo, -np.inf), w)
    gap = np.maximum.reduce(
        [
            (hi0 - lo0).hi,
            ((hi0 - lo0) + (s_chord - s_left) * t_hi).hi,  # (c − L)(T_hi)
            ((hi0 - r) + s_right * w + (s_chord - s_right) * t_lo).hi,  # (c − R)(T_lo)
            (hi1 - r).hi,
        ]
    )
    return np.concatenate([[0.0], np.where(gap > 0.0, gap, 0.0)])


def _clamped(t: npt.NDArray[np.float64], w: Intervals) -> Intervals:
    """t where it certainly lies inside (0, w), else 0 or (an enclosure of) w, the end it may cross."""
    low = ~(t > 0.0)
    high = ~(t < w.lo) & ~low
    return Intervals(np.where(low, 0.0, np.where(high, w.lo, t)), np.where(low, 0.0, np.where(high, w.hi, t)))


def _clamp(x: arb, x0: arb, x1: arb) -> arb:
    """x if it certainly lies inside (x0, x1), else the end it may cross (a ball of the interval end)."""
    if not x > x0:
        return x0
    if not x < x1:
        return x1
    return x


def _dominated(
    balls: list[arb], kappas: list[arb], p_inf: arb
) -> tuple[list[arb], arb] | None:
    """Gap-corrected chord masses (one ball per grid index) and the +∞ mass (see module docstring), or
    None where the grid admits no such construction (then the caller uses the identical pair's
    profile max(1 − κ, 0), mass 1 at loss 0, which lies below every f)."""
    n_grid = len(kappas)
    c_inf = p_inf.lower() if p_inf.lower() > 0 else arb(0)
    xs = [arb(0)] + kappas  # position 0 is κ = 0; grid index g sits at position g + 1
    ends = [(arb(1), arb(1))] + [_ends(b) for b in balls]
    lo = [e[0] for e in ends]
    hi = [e[1] for e in ends]
    lo[-1] = max(lo[-1], c_inf)  # f >= p_∞ everywhere
    gaps = _gap_bounds(lo, hi, xs, c_inf, balls)
    w = [arb(1)] + [
        lo[k] - max(gaps[k], gaps[k + 1] if k + 1 <= n_grid else arb(0)) - _MU for k in range(1, n_grid + 1)
    ]
    chosen = _top_and_points(w, lo, hi, xs, c_inf)
    if chosen is None:
        return None
    positions, px, py = chosen
    if not (c_inf >= 1 - px[-1]):
        return None
    hull, edges = _lower_hull(px, py)
    _check_removed(px, py, hull, edges)
    # A gap-corrected value may dip below p∞⁻ (coarse grids, where the gaps exceed f); the hull g then
    # falls below p∞⁻ and rises again, which no profile does. g' = max(g, p∞⁻) is convex,
    # non-increasing and <= f; it has one vertex off the grid, where g crosses p∞⁻, after the last
    # hull vertex v at or above p∞⁻. Ending the hull at v (slope 0 after it) puts that vertex's P-mass,
    # κ*·|slope|, at v instead, as κ_v·|slope| <= κ*·|slope|: moved down and partly dropped, so the
    # result is stochastically smaller than g''s PLD (the DOMINATED promise).
    dip = next((k for k in range(1, len(hull) - 1) if not py[hull[k]] >= c_inf), None)
    if dip is not None:
        hull = hull[:dip]
    masses = [arb(0)] * len(kappas)
    for pos, m in zip(hull[1:], _vertex_masses(px, hull, edges)):
        if positions[pos] > 0:  # the virtual vertex's P-mass (<= κ_v) is dropped: stochastically smaller
            masses[positions[pos] - 1] = m
    return masses, c_inf


def _top_and_points(
    w: list[arb], lo: list[arb], hi: list[arb], xs: list[arb], c_inf: arb
) -> tuple[list[int], list[arb], list[arb]] | None:
    """(positions, px, py) of the dominated profile's points (position −1: the virtual vertex), or None.

    Top: the largest position a with w_a > p∞⁻ and L of I_{a+1} still >= p∞⁻ at κ_{a+1} (the
    last segment, to (κ_{a+1}, p∞⁻), then lies below L <= f). Bottom: g = 1 − κ up to the first
    position b after which every w_i >= 1 − κ_i is certain."""
    top = None
    for a in range(len(xs) - 2, 0, -1):
        s_left = _slope(xs[a - 1], hi[a - 1], xs[a], lo[a])
        if w[a] > c_inf and lo[a] + s_left * (xs[a + 1] - xs[a]) >= c_inf:
            top = a
            break
    if top is None:
        return None
    bottom = 1
    for i in range(top, 0, -1):
        if not w[i] >= 1 - xs[i]:
            bottom = i + 1
            break
    if bottom > top:
        return None
    if bottom == 1 and top >= 2 and _virtual_start_fits(lo, hi, xs):
        # g = 1 − κ up to κ_v, then the chord to (κ_1, w_1): below R_1 (see _virtual_start_fits).
        positions = [0, -1] + list(range(1, top + 2))
        px = [xs[0], _KAPPA_V] + xs[1 : top + 2]
        py = [arb(1), 1 - _KAPPA_V] + w[1 : top + 1] + [c_inf]
    else:
        positions = [0] + list(range(bottom, top + 2))
        px = [xs[p] for p in positions]
        py = [arb(1), 1 - xs[bottom]] + w[bottom + 1 : top + 1] + [c_inf]
    return positions, px, py


def _virtual_start_fits(lo: list[arb], hi: list[arb], xs: list[arb]) -> bool:
    """Whether R_1, the secant of [κ_1, κ_2] extended left (<= f on [0, κ_1]), is certainly >= 1 − κ
    at κ_v and has slope >= −1.

    Then R_1 >= 1 − κ on all of [κ_v, κ_1], the segment from (κ_v, 1 − κ_v) to (κ_1, w_1) with
    w_1 <= f⁻_1 = R_1(κ_1) lies below R_1 <= f, and the profile needs slope −1 only on [0, κ_v]: the
    grid pair puts the Q-mass where P = 0 near loss ln κ_v, instead of forcing slope −1 up to κ_b
    (which loses O(Q(P = 0)·κ_b) when Q(P = 0) > 0).
    """
    s_right = _slope(xs[1], lo[1], xs[2], hi[2])
    at_v = lo[1] + s_right * (_KAPPA_V - xs[1])
    return bool(at_v >= 1 - _KAPPA_V and s_right >= -1)


def _check_removed(px: list[arb], py: list[arb], hull: list[int], edges: list[arb]) -> None:
    """Post-condition: every point the hull left out lies at most μ below it (certainly)."""
    for a, b, slope in zip(hull[:-1], hull[1:], edges):
        for j in range(a + 1, b):
            chord = py[a] + slope * (px[j] - px[a])
            if not chord <= py[j] + _MU:
                raise NumericalFailure("dominated PLD: a point removed from the hull lies above it by more than 2^-100")
