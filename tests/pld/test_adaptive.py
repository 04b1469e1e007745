"""The adaptive-composition recursion (verifier.pld.adaptive) against independent references:
exhaustive enumeration of every adaptive strategy on small exact families (T <= 3, exactly
rounded sums), and a
quadrature of the two-step optimum over the remove/add orientations of a Gaussian fixed-batch step.
Mutants (a family missing a member; the maximum over members replaced by the first member) are
shown to fall below the enumeration, so these tests would catch them. The mirror identity above the
grid (``symmetric``) is checked the same way on families closed under swapping the pair, with the
grid stopping at u = 0 so that most paths leave it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from verifier._types import Direction, Dominance, Side
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.pairs import Gaussian
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pld.adaptive import adaptive_value
from verifier.pld.construction import pld_from_pair
from verifier.pld.distribution import DiscretePLD

H = 0.25
#: Exact step pairs given by their loss laws under P on the grid k·H (Q = P·e^{−ℓ}, the rest of Q
#: where P = 0), three atoms each, the last possibly at +∞: (first grid index, masses, mass at +∞).
FAMILY = (
    (-1, (0.6, 0.0, 0.0, 0.3, 0.0, 0.1), 0.0),  # losses −0.25, 0.5, 1.0
    (0, (0.7, 0.25), 0.05),  # losses 0, 0.25, +∞
    (-1, (0.6, 0.0, 0.0, 0.0, 0.4), 0.0),  # losses −0.25, 0.75
)


def _mirrored(offset: int, probs: tuple[float, ...], infinite: float) -> tuple[int, tuple[float, ...], float]:
    """The swapped pair (Q, P): the law of ln(Q/P) under Q, masses p·e^{−ℓ} at −ℓ and Q's mass
    where P = 0 at +∞ (P's atom at +∞ has Q-mass 0)."""
    masses = [p * math.exp(-(offset + i) * H) for i, p in enumerate(probs)]
    return -(offset + len(probs) - 1), tuple(reversed(masses)), 1.0 - math.fsum(masses)


#: Members 3 and 4 are the mirrors of members 0 and 1 (their masses are floats within an ulp of the
#: exact mirror, so the enumeration and the identity agree to ~1e-16, far inside MIRROR_ATOL).
FAMILY += (_mirrored(*FAMILY[0]), _mirrored(*FAMILY[1]))
MIRROR_ATOL = 1e-14
#: The engine's float result against the enumeration (a few hundred roundings at most).
ATOL = 1e-12


def _pld(index: int, dominance: Dominance) -> DiscretePLD:
    offset, probs, infinite = FAMILY[index]
    return DiscretePLD(H, offset, np.array(probs), infinite, 0.0, dominance, Direction.REMOVE)


def _atoms(index: int) -> list[tuple[float, float]]:
    offset, probs, infinite = FAMILY[index]
    atoms = [((offset + i) * H, p) for i, p in enumerate(probs) if p > 0]
    if infinite > 0:
        atoms.append((math.inf, infinite))
    return atoms


def _leaves(members: tuple[int, ...], steps: int, choice: dict) -> list[tuple[float, float]]:
    """(total loss, probability) of every outcome path of the strategy ``choice``: history of atom
    indices -> position in ``members``."""
    paths = [((), 0.0, 1.0)]
    for _ in range(steps):
        paths = [
            (history + (i,), loss + ell, weight * p)
            for history, loss, weight in paths
            for i, (ell, p) in enumerate(_atoms(members[choice[history]]))
        ]
    return [(loss, weight) for _, loss, weight in paths]


def _payoff(leaves: list[tuple[float, float]], epsilon: float) -> float:
    """E[(1 − e^{ε − L})_+] over the leaves (a loss of +∞ pays 1), summed exactly rounded."""
    return math.fsum(w * (1.0 if loss == math.inf else max(0.0, -math.expm1(epsilon - loss))) for loss, w in leaves)


def _enumerated(members: tuple[int, ...], steps: int, epsilons: tuple[float, ...]) -> list[float]:
    """The best adaptive strategy at each ε by brute force: the maximum over every map from
    histories to members (histories through an atom the chosen member lacks never occur)."""
    width = max(len(_atoms(m)) for m in members)
    histories = [h for d in range(steps) for h in itertools.product(range(width), repeat=d)]
    best = [0.0] * len(epsilons)
    for picks in itertools.product(range(len(members)), repeat=len(histories)):
        leaves = _leaves(members, steps, dict(zip(histories, picks)))
        best = [max(b, _payoff(leaves, e)) for b, e in zip(best, epsilons)]
    return best


CASES = [((0, 1), 1), ((0, 1), 2), ((0, 1), 3), ((0, 2), 3), ((0, 1, 2), 2)]


@pytest.mark.parametrize(("members", "steps"), CASES, ids=[f"F{''.join(map(str, m))}-T{t}" for m, t in CASES])
def test_recursion_equals_exhaustive_enumeration(members, steps):
    upper = adaptive_value([_pld(m, Dominance.DOMINATING) for m in members], steps, Side.UPPER, -6.0, 6.0)
    lower = adaptive_value([_pld(m, Dominance.DOMINATED) for m in members], steps, Side.LOWER, -6.0, 6.0)
    epsilons = (-0.5, 0.0, 0.25, 0.5, 1.0, 1.5)
    for epsilon, truth in zip(epsilons, _enumerated(members, steps, epsilons)):
        assert lower.delta(epsilon) <= truth <= upper.delta(epsilon)
        assert upper.delta(epsilon) - lower.delta(epsilon) <= ATOL


MIRROR_CASES = [((0, 3), 1), ((0, 3), 2), ((0, 1, 3, 4), 2)]


@pytest.mark.parametrize(("members", "steps"), MIRROR_CASES, ids=[f"F{''.join(map(str, m))}-T{t}" for m, t in MIRROR_CASES])
def test_mirror_identity_above_a_grid_that_stops_at_zero(members, steps):
    """Families closed under the swap, on [−6, 0]: every path that ends above 0 reads the values the
    identity U(u) = 1 − e^{−u} + e^{−u}U(−u) puts above the grid. Both sides must bracket the
    enumeration and meet it (an identity with the wrong sign of u, or U(u) for U(−u), misses it by
    far more than the tolerance)."""
    upper = adaptive_value([_pld(m, Dominance.DOMINATING) for m in members], steps, Side.UPPER, -6.0, 0.0, symmetric=True)
    lower = adaptive_value([_pld(m, Dominance.DOMINATED) for m in members], steps, Side.LOWER, -6.0, 0.0, symmetric=True)
    epsilons = (0.0, 0.25, 0.5, 1.0, 1.5)
    for epsilon, truth in zip(epsilons, _enumerated(members, steps, epsilons)):
        assert lower.delta(epsilon) <= truth + MIRROR_ATOL
        assert truth <= upper.delta(epsilon) + MIRROR_ATOL
        assert upper.delta(epsilon) - lower.delta(epsilon) <= ATOL


def test_without_the_identity_a_grid_at_zero_is_loose():
    """The same grid without ``symmetric`` (1 above it, UPPER) stays valid but misses the truth by
    more than 1e-3: the identity, not the grid, makes the narrow grid tight. It refuses a top below 0."""
    members = [_pld(m, Dominance.DOMINATING) for m in (0, 3)]
    (truth,) = _enumerated((0, 3), 2, (0.5,))
    assert adaptive_value(members, 2, Side.UPPER, -6.0, 0.0).delta(0.5) > truth + 1e-3
    with pytest.raises(InvalidArgument):
        adaptive_value(members, 2, Side.UPPER, -6.0, -0.5, symmetric=True)


def test_family_missing_a_member_falls_below_the_enumeration():
    """Mutant: the recursion over {0} only. Its 'upper' value is below the best strategy over
    {0, 1}, so the enumeration test above would catch a family that lost a member."""
    mutant = adaptive_value([_pld(0, Dominance.DOMINATING)], 2, Side.UPPER, -6.0, 6.0)
    assert mutant.delta(0.5) < _enumerated((0, 1), 2, (0.5,))[0] - 1e-3


def test_adaptivity_gains_over_every_fixed_member():
    """The family's value exceeds the best member used at every step (the max is per history)."""
    (truth,) = _enumerated((0, 1), 3, (0.5,))
    fixed = max(_enumerated((m,), 3, (0.5,))[0] for m in (0, 1))
    assert truth > fixed + 1e-3
    first_only = adaptive_value([_pld(0, Dominance.DOMINATING)], 3, Side.UPPER, -6.0, 6.0)
    assert first_only.delta(0.5) < truth


def test_epsilon_query_is_on_the_safe_side():
    upper = adaptive_value([_pld(m, Dominance.DOMINATING) for m in (0, 1)], 2, Side.UPPER, -6.0, 6.0)
    lower = adaptive_value([_pld(m, Dominance.DOMINATED) for m in (0, 1)], 2, Side.LOWER, -6.0, 6.0)
    target = 0.1
    eps_up, eps_low = upper.epsilon(target), lower.epsilon(target)
    assert eps_low <= eps_up
    at_up, at_low = _enumerated((0, 1), 2, (eps_up, eps_low))
    assert at_up <= target  # δ(ε_up) <= δ: ε(δ) <= ε_up
    assert at_low > target  # δ(ε_low) > δ: ε(δ) >= ε_low


def _two_step_optimum(sigma: float, q: float, epsilon: float) -> float:
    """Best adaptive choice between the remove pair (M, N(0)) and the add pair (N(0), M),
    M = (1 − q)N(0) + qN(2), over two steps: the last step's hockey stick in closed form (monotone
    likelihood ratio), the first step's output integrated by scipy quadrature."""
    from scipy.integrate import quad
    from scipy.stats import norm

    def hockey(orientation: str, c: float) -> float:  # E_P[(1 − c·dQ/dP)_+]
        if orientation == "remove":
            if c <= 1 - q:
                return 1 - c
            y = (np.log((c - 1 + q) / q) * sigma**2 + 2.0) / 2.0
            return (1 - q - c) * norm.sf(y, 0, sigma) + q * norm.sf(y, 2.0, sigma)
        if c >= 1 / (1 - q):
            return 0.0
        y = (np.log((1 - c * (1 - q)) / (c * q)) * sigma**2 + 2.0) / 2.0
        return (1 - c * (1 - q)) * norm.cdf(y, 0, sigma) - c * q * norm.cdf(y, 2.0, sigma)

    def last(loss: float) -> float:
        return max(hockey(o, np.exp(epsilon - loss)) for o in ("remove", "add"))

    def log_ratio(y: float) -> float:
        return float(np.log1p(q * np.expm1((2.0 * y - 2.0) / sigma**2)))

    remove = quad(lambda y: ((1 - q) * norm.pdf(y, 0, sigma) + q * norm.pdf(y, 2.0, sigma)) * last(log_ratio(y)), -15, 17, limit=500)[0]
    add = quad(lambda y: norm.pdf(y, 0, sigma) * last(-log_ratio(y)), -15, 17, limit=500)[0]
    return max(remove, add)


def test_gaussian_orientations_bracket_the_two_step_quadrature():
    sigma, q, epsilon, step = 1.1, 0.1, 1.0, 2.0**-8
    pair = PoissonSubsampled(Gaussian(sigma, 2.0), q)
    values = {}
    for side, dominance in ((Side.UPPER, Dominance.DOMINATING), (Side.LOWER, Dominance.DOMINATED)):
        members = [pld_from_pair(pair, d, dominance, step) for d in (Direction.REMOVE, Direction.ADD)]
        values[side] = adaptive_value(members, 2, side, -epsilon - 4.0, 12.0).delta(epsilon)
    truth = _two_step_optimum(sigma, q, epsilon)  # 0.0274565890 (benchmarks/adaptive_orientation.md)
    assert values[Side.LOWER] <= truth <= values[Side.UPPER]
    assert values[Side.UPPER] - values[Side.LOWER] < 2e-3 * truth


@pytest.mark.parametrize("order", [(Direction.REMOVE, Direction.ADD), (Direction.ADD, Direction.REMOVE, Direction.ADD)])
def test_gaussian_orientations_on_a_grid_that_stops_at_zero(order):
    """The two-step quadrature again, on [−ε − 1, 0] with the mirror identity above (remove and add
    are each other's mirror) and the cyclic transform (kernels of ~2000 masses, FFT path; two members
    share one transform, and a third, repeated, is transformed alone): a window read at the wrong
    place, a wrapped-around term or the parts of a shared transform swapped move the values far
    outside 2e-3."""
    sigma, q, epsilon, step = 1.1, 0.1, 1.0, 2.0**-8
    pair = PoissonSubsampled(Gaussian(sigma, 2.0), q)
    values = {}
    for side, dominance in ((Side.UPPER, Dominance.DOMINATING), (Side.LOWER, Dominance.DOMINATED)):
        members = [pld_from_pair(pair, d, dominance, step) for d in order]
        values[side] = adaptive_value(members, 2, side, -epsilon - 1.0, 0.0, symmetric=True).delta(epsilon)
    truth = _two_step_optimum(sigma, q, epsilon)
    assert values[Side.LOWER] <= truth <= values[Side.UPPER]
    assert values[Side.UPPER] - values[Side.LOWER] < 2e-3 * truth


def test_refuses_mixed_sides_and_grids():
    dominating, dominated = _pld(0, Dominance.DOMINATING), _pld(1, Dominance.DOMINATED)
    with pytest.raises(IncompatibleObjects):
        adaptive_value([dominating, dominated], 1, Side.UPPER, -1.0, 1.0)
    other_grid = DiscretePLD(0.5, 0, np.array([1.0]), 0.0, 0.0, Dominance.DOMINATING, Direction.REMOVE)
    with pytest.raises(IncompatibleObjects):
        adaptive_value([dominating, other_grid], 1, Side.UPPER, -1.0, 1.0)
    with pytest.raises(InvalidArgument):
        adaptive_value([], 1, Side.UPPER, -1.0, 1.0)
    with pytest.raises(InvalidArgument):
        adaptive_value([dominating], 1, Side.UPPER, 1.0, -1.0)


def test_a_grid_too_narrow_for_the_paths_stays_on_each_side():
    """Paths leave [−0.75, 0.75] within three steps: the values assumed beyond the grid (the first
    point's below it and 1 above it for UPPER; 0 and (1 − e^{−u})_+ for LOWER) keep both sides
    valid."""
    epsilons = (-0.5, 0.0, 0.25, 0.5)
    truths = _enumerated((0, 1), 3, epsilons)
    upper = adaptive_value([_pld(m, Dominance.DOMINATING) for m in (0, 1)], 3, Side.UPPER, -0.75, 0.75)
    lower = adaptive_value([_pld(m, Dominance.DOMINATED) for m in (0, 1)], 3, Side.LOWER, -0.75, 0.75)
    for epsilon, truth in zip(epsilons, truths):
        assert lower.delta(epsilon) <= truth <= upper.delta(epsilon)
    assert upper.delta(0.5) > truths[-1] + 1e-3  # the narrow grid costs tightness, not validity


def test_tilted_fft_keeps_both_sides_and_narrows_small_deltas():
    """300 steps of the remove/add family at q = 0.02 read at δ = 1e-7: without the tilt the FFT's
    absolute error bound (set by the values near 1) leaves a bracket [14.32, 14.50] on ε; tilted by
    λ = 1 it is within 0.02. Both runs are rigorous, so each bracket must meet the other (a tilt not
    undone, or undone at the wrong u, moves the tilted values by factors e^{λu} and fails this)."""
    pair = PoissonSubsampled(Gaussian(1.1, 2.0), 0.02)
    runs = {}
    for tilt in (0.0, 1.0):
        for side, dominance in ((Side.UPPER, Dominance.DOMINATING), (Side.LOWER, Dominance.DOMINATED)):
            members = [pld_from_pair(pair, d, dominance, 2.0**-8) for d in (Direction.REMOVE, Direction.ADD)]
            runs[tilt, side] = adaptive_value(members, 300, side, -16.0, 8.0, tilt=tilt)
    for tilt, other in ((0.0, 1.0), (1.0, 0.0)):
        assert runs[tilt, Side.LOWER].epsilon(1e-7) <= runs[other, Side.UPPER].epsilon(1e-7)
        assert runs[tilt, Side.LOWER].delta(5.0) <= runs[other, Side.UPPER].delta(5.0)
    tilted = runs[1.0, Side.UPPER].epsilon(1e-7) - runs[1.0, Side.LOWER].epsilon(1e-7)
    plain = runs[0.0, Side.UPPER].epsilon(1e-7) - runs[0.0, Side.LOWER].epsilon(1e-7)
    assert tilted < 0.03 < 0.1 < plain


def test_tilt_outside_its_range_is_refused():
    with pytest.raises(InvalidArgument):
        adaptive_value([_pld(0, Dominance.DOMINATING)], 1, Side.UPPER, -1.0, 1.0, tilt=-1.0)
