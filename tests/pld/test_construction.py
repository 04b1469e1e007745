"""PLDs of pairs lie on their promised side of the exact profile, both directions, and are tight
(O(h²)); the grid pair is a valid PLD (masses >= 0, total 1 / <= 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Direction, Dominance, Measure
from verifier.errors import AccuracyNotReachable, InvalidArgument
from verifier.pairs import DiscretePair, Gaussian, Laplace, PoissonSubsampled, RandomizedResponse
from verifier.pld import DiscretePLD, pld_from_pair
from verifier.pld.bracket import PLDBracket
from verifier.pld.construction import pld_sides_from_pair

PAIRS = [
    Gaussian(1.0),
    Gaussian(3.0, 2.0),
    Laplace(1.0),
    RandomizedResponse(1.0),
    RandomizedResponse(0.7, k=3),
    DiscretePair([0.5, 0.3, 0.2, 0.0], [0.25, 0.25, 0.25, 0.25]),
    PoissonSubsampled(Gaussian(1.0), 0.1),
    PoissonSubsampled(Laplace(0.5), 0.3),
]

STEP = 2.0**-7

#: Width allowed between the PLD sides where δ >= 1e-6, relative to δ, for the Gaussian: the chord
#: error of a step-2^-7 grid (h² ≈ 6e-5) times the profile's curvature scale (measured: 1.7e-3).
SMOOTH_RTOL = 5e-3
#: Absolute width allowed for profiles with kinks (atoms of RR / Laplace, the subsampled pairs'
#: κ = 1 − λ and κ = 1/(1 − λ)): there the gap bound is O(h) (measured: 5.5e-3).
KINK_ATOL = 0.02


#: ε(1e-6) of the Poisson-subsampled Gaussian σ=1, λ=0.01, 300 steps: dp_accounting 0.6.0 (PLD,
#: value_discretization_interval=1e-5) gives 1.3088772, prv_accountant 0.2 (eps_error=1e-3) 1.3088772.
REFERENCE_EPS_300 = 1.3088772


def _epsilons() -> np.ndarray:
    return np.concatenate([np.linspace(-2.0, 4.0, 97), [0.0, 0.5, 1.0, 1e-3, -1e-3]])


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: repr(p)[:40])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_sides_bracket_the_exact_profile(pair, direction) -> None:
    dominating, dominated = pld_sides_from_pair(pair, direction, STEP)
    eps = _epsilons()
    exact = pair.delta(eps, direction)
    upper = dominating.delta(eps)
    lower = dominated.delta(eps)
    assert (upper >= exact.lower).all()
    assert (lower <= exact.upper).all()
    if isinstance(pair, Gaussian):
        large = exact.upper >= 1e-6
        assert np.all((upper - lower)[large] <= SMOOTH_RTOL * exact.upper[large])
    assert np.all(upper - lower <= KINK_ATOL)


@pytest.mark.parametrize("pair", PAIRS[:3] + PAIRS[6:7], ids=lambda p: repr(p)[:40])
def test_masses_form_valid_plds(pair) -> None:
    dominating, dominated = pld_sides_from_pair(pair, Direction.REMOVE, STEP)
    assert dominating.dominance is Dominance.DOMINATING and dominated.dominance is Dominance.DOMINATED
    assert dominating.total_mass >= 1.0 - 1e-15
    assert dominated.total_mass <= 1.0 + 1e-15
    assert math.isclose(dominated.total_mass + dominated.dropped_mass, 1.0, abs_tol=1e-12)
    # E_P[e^{-L}] <= 1 (the Q-mass of the grid pair) for the dominated pair built from a real pair.
    q_mass = math.fsum(dominated.probs * np.exp(-dominated.losses()))
    assert q_mass <= 1.0 + 1e-12


def test_error_shrinks_quadratically_for_the_gaussian() -> None:
    """Halving the step divides the bracket width by about four (chords of a smooth profile)."""
    pair, eps = Gaussian(1.0), np.array([0.5, 1.0, 2.0])
    widths = []
    for step in (2.0**-5, 2.0**-6):
        up_, lo_ = pld_sides_from_pair(pair, Direction.REMOVE, step)
        widths.append(up_.delta(eps) - lo_.delta(eps))
    ratio = widths[0] / widths[1]
    assert np.all(ratio > 3.0)


def test_invalid_arguments_are_named() -> None:
    with pytest.raises(InvalidArgument, match="step"):
        pld_from_pair(Gaussian(1.0), Direction.REMOVE, Dominance.DOMINATING, 0.001)
    with pytest.raises(InvalidArgument, match="dominance"):
        pld_from_pair(Gaussian(1.0), Direction.REMOVE, "dominating", 2.0**-6)
    with pytest.raises(AccuracyNotReachable, match="max_grid"):
        pld_from_pair(Gaussian(1.0), Direction.REMOVE, Dominance.DOMINATING, 2.0**-12, max_grid=100)


def test_result_type() -> None:
    pld = pld_from_pair(Gaussian(2.0), Direction.ADD, Dominance.DOMINATED, 2.0**-6)
    assert isinstance(pld, DiscretePLD)
    assert pld.direction is Direction.ADD and pld.dropped_mass >= 0


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: repr(p)[:40])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_coarsened_tails_stay_on_their_side(pair, direction) -> None:
    """Thinning the profile points in the far tails keeps both promises against the exact profile
    (ball arithmetic), and the masses stay on the step grid."""
    dominating, dominated = pld_sides_from_pair(pair, direction, STEP, coarsen_below=0.05)
    eps = _epsilons()
    exact = pair.delta(eps, direction)
    assert (dominating.delta(eps) >= exact.lower).all()
    assert (dominated.delta(eps) <= exact.upper).all()
    assert dominating.total_mass >= 1.0 - 1e-15
    assert dominated.total_mass <= 1.0 + 1e-15


def test_coarsening_thins_the_tails_only() -> None:
    """Far fewer profile points, every point of the bulk kept, and the composed bracket of a many-step
    Poisson scheme barely wider (it is rigorous either way; coarsening only trades tightness)."""
    pair = PoissonSubsampled(Gaussian(1.0), 0.01)
    full = pld_sides_from_pair(pair, Direction.REMOVE, 2.0**-9)
    thin = pld_sides_from_pair(pair, Direction.REMOVE, 2.0**-9, coarsen_below=1e-3)
    assert np.count_nonzero(thin[0].probs) < np.count_nonzero(full[0].probs) / 3
    q = pair.loss_quantile([1e-2, 1 - 1e-2], Direction.REMOVE, Measure.P)  # both tails above 1e-3 here
    bulk = (full[0].losses() > q[0]) & (full[0].losses() < q[1])
    assert bulk.sum() > 10 and np.count_nonzero(thin[0].probs[bulk]) == bulk.sum()
    widths = []
    for sides in (full, thin):
        bracket = PLDBracket(*sides).self_compose(300)
        got = bracket.epsilon(1e-6)
        assert got.contains(REFERENCE_EPS_300)
        widths.append(got.width)
    assert widths[1] <= 1.5 * widths[0]


@pytest.mark.parametrize(
    ("pair", "step", "start"),
    [
        (PoissonSubsampled(Gaussian(0.6), 1e-3), 2.0**-13, 6.7e-5),  # the issue-30 row's fine grid
        (PoissonSubsampled(Gaussian(1.0), 0.01), 2.0**-9, 1e-3),
        (Gaussian(2.0), 2.0**-8, 1e-4),
        (Laplace(1.0), 2.0**-8, 1e-2),
    ],
    ids=["poisson-0.6", "poisson-1.0", "gaussian", "laplace"],
)
def test_sampled_tail_levels_are_the_dense_ones(pair, step, start) -> None:
    """_tail_levels evaluates the tails at every TAIL_SAMPLE-th loss and fills equal-level stretches:
    it gives the level of the dense evaluation at every grid loss (reference: min(CDF, SF) at every
    loss, as the coarsening computed it before). Catches a fill across a level change or the turn."""
    from verifier.pld.construction import COARSEN_MAX_LEVEL, COARSEN_RATIO, _grid_span, _tail_levels

    j_lo, j_hi = _grid_span(pair, step, 1e-15)
    losses = np.arange(j_lo, j_hi + 1, dtype=np.float64) * step
    with np.errstate(divide="ignore"):
        tail = np.minimum(pair.loss_cdf(losses, Direction.REMOVE, Measure.P), pair.loss_sf(losses, Direction.REMOVE, Measure.P))
        dense = np.clip(np.floor(np.log(start / np.maximum(tail, 1e-300)) / math.log(COARSEN_RATIO)), 0, COARSEN_MAX_LEVEL)
    got = _tail_levels(pair, losses, start)
    assert got.max() > 0  # the case has a coarsened tail
    np.testing.assert_array_equal(got, dense.astype(np.int64))


def _gap_inputs(pair, direction, step):
    """(lo, hi, xs, c_inf, balls) of the dominated construction on the full grid (construction._dominated)."""
    from flint import arb

    from verifier._directed import with_precision
    from verifier.pld import construction

    oriented = pair.oriented(direction)
    j_lo, j_hi = construction._grid_span(oriented, step, 1e-15)
    balls, kappas, p_inf = construction.profile_balls(oriented, np.arange(j_lo, j_hi + 1) * step)
    with with_precision():
        c_inf = p_inf.lower() if p_inf.lower() > 0 else arb(0)
        ends = [(arb(1), arb(1))] + [construction._ends(b) for b in balls]
        lo, hi = [e[0] for e in ends], [e[1] for e in ends]
        lo[-1] = max(lo[-1], c_inf)
    return lo, hi, [arb(0)] + kappas, c_inf, balls


@pytest.mark.parametrize(
    "pair",
    [Gaussian(1.0), Laplace(1.0), PoissonSubsampled(Gaussian(0.6), 1e-3), PoissonSubsampled(Gaussian(1.0), 0.1), DiscretePair((0.5, 0.3, 0.2, 0.0), (0.25, 0.25, 0.25, 0.25))],
    ids=lambda p: repr(p)[:40],
)
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_float_gap_bounds_enclose_the_ball_ones(pair, direction) -> None:
    """The dominated side's chord gaps G (an upper bound on chord − f per grid interval, the module
    docstring's c − max(L, R)) in float interval arithmetic: on every interval at least the exact
    maximum of c − max(L, R) (reference: mpmath at 40 digits from the same ends and κ, the crossing
    of L and R solved exactly; the float inputs are rounded outward, which only raises it), and above
    the ball-arithmetic computation of the same bound by at most 1e-12 of f (tightness). Catches an
    inward rounding, a lost candidate or a misplaced crossing in the float formula."""
    import mpmath

    from verifier.pld import construction

    lo, hi, xs, c_inf, balls = _gap_inputs(pair, direction, 2.0**-7)
    n = len(xs) - 1
    ball = np.array([float(g.upper()) for g in construction._ball_gap_bounds(lo, hi, xs, c_inf, list(range(1, n + 1)))])
    mixed = np.array([float(g.upper()) for g in construction._gap_bounds(lo, hi, xs, c_inf, balls)[1:]])
    f_upper = np.array([float(v.upper()) for v in hi[1:]])
    assert np.all(mixed <= ball + 1e-12 * f_upper + 1e-300)
    with mpmath.workdps(40):
        x = [mpmath.mpf(v.mid().str(45, radius=False)) for v in xs]
        low = [mpmath.mpf(v.mid().str(45, radius=False)) for v in lo]
        high = [mpmath.mpf(v.mid().str(45, radius=False)) for v in hi]
        floor = mpmath.mpf(c_inf.mid().str(45, radius=False))
        for i in range(1, n + 1):
            s_left = -1 if i == 1 else (low[i - 1] - high[i - 2]) / (x[i - 1] - x[i - 2])
            s_right, r = (0, floor) if i == n else ((high[i + 1] - low[i]) / (x[i + 1] - x[i]), low[i])

            def gap(t, i=i, s_left=s_left, s_right=s_right, r=r):
                chord = high[i - 1] + (high[i] - high[i - 1]) * (t - x[i - 1]) / (x[i] - x[i - 1])
                return chord - max(low[i - 1] + s_left * (t - x[i - 1]), r + s_right * (t - x[i]))

            points = [x[i - 1], x[i]]
            if s_left != s_right:
                cross = (r - low[i - 1] - s_right * x[i] + s_left * x[i - 1]) / (s_left - s_right)
                points.append(min(max(cross, x[i - 1]), x[i]))
            exact = max(gap(t) for t in points)
            assert mixed[i - 1] >= exact - mpmath.mpf(10) ** -30, (i, mixed[i - 1], exact)


@pytest.mark.parametrize(
    ("pair", "direction"),
    [(PoissonSubsampled(Gaussian(1.0), 0.1), Direction.REMOVE), (Laplace(1.0), Direction.ADD), (Gaussian(0.5), Direction.REMOVE)],
    ids=["poisson", "laplace", "gaussian"],
)
def test_float_gap_bounds_hold_between_the_grid_points(pair, direction) -> None:
    """Independent of either computation: at 9 points inside every interval, the chord through the
    upper ends minus f (its ball's upper end there, so a lower bound on chord − f) stays below G."""
    from verifier._directed import with_precision
    from verifier.pld import construction

    lo, hi, xs, c_inf, balls = _gap_inputs(pair, direction, 2.0**-5)
    oriented = pair.oriented(direction)
    gaps = construction._gap_bounds(lo, hi, xs, c_inf, balls)
    with with_precision():
        for i in range(2, len(xs)):  # I_1 starts at κ = 0
            for t in range(1, 10):
                x = xs[i - 1] + (xs[i] - xs[i - 1]) * t / 10
                chord = hi[i - 1] + (hi[i] - hi[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])
                f_upper = oriented._delta_arb(x.log()).upper()
                assert (chord - f_upper).lower() <= gaps[i].upper(), (i, t)


def test_coarsen_below_is_validated() -> None:
    with pytest.raises(InvalidArgument, match="coarsen_below"):
        pld_sides_from_pair(Gaussian(1.0), Direction.REMOVE, STEP, coarsen_below=2.0)


@pytest.mark.parametrize("step", [2.0**-5, 2.0**-7, 2.0**-9])
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_dominated_side_is_a_sub_probability_on_coarse_grids(step: float, direction: Direction) -> None:
    """λ = 0.001: next to the kink at κ = 1 − λ the gap bounds exceed the profile on coarse grids and
    the gap-corrected values dip below p∞⁻. The dominated PLD must still be a sub-probability whose
    δ lies below the exact profile (a dip once produced masses summing to 1.0003 and δ(1) = 23)."""
    pair = PoissonSubsampled(Gaussian(0.8), 0.001)
    dominating, dominated = pld_sides_from_pair(pair, direction, step)
    assert dominated.total_mass <= 1.0
    eps = _epsilons()
    exact = pair.delta(eps, direction)
    assert (dominated.delta(eps) <= exact.upper).all()
    assert (dominating.delta(eps) >= exact.lower).all()


def test_remembered_profile_balls_are_the_pairs_own() -> None:
    """The ball memo (construction._ball_memo) is keyed by the pair: after building Gaussian(1.0) at
    step h and h/2 (the finer grid meets the coarser one's losses), Gaussian(2.0) on the same grid
    still gets its own profile, and a rebuild equals the cold build bit for bit. Catches a memo keyed
    by loss alone (the second pair would get the first pair's balls) or one that returns stale balls."""
    from verifier.pld import construction

    def build(pair: Gaussian, step: float) -> list[DiscretePLD]:
        return pld_sides_from_pair(pair, Direction.REMOVE, step)

    construction._ball_memo.cache_clear()
    cold = [build(Gaussian(2.0), STEP / 2)]
    construction._ball_memo.cache_clear()
    build(Gaussian(1.0), STEP)
    build(Gaussian(1.0), STEP / 2)
    warm = [build(Gaussian(2.0), STEP / 2)]
    for a, b in zip(cold[0], warm[0]):
        assert a.offset == b.offset and a.infinite_mass == b.infinite_mass
        np.testing.assert_array_equal(a.probs, b.probs)
    exact = Gaussian(2.0).delta(np.array([0.0, 0.5]), Direction.REMOVE)
    assert (warm[0][0].delta(np.array([0.0, 0.5])) >= exact.lower).all()
