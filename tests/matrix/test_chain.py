"""The chain dynamic programme on the exact Lemma 2.8 pair (verifier.matrix.chain, method
"matrix-chain") against independent references: random allocation's PLD (C = I, one epoch: the
same pair, computed by verifier's allocation method from convex-order laws, another code path), the
dyadic partition (b = 3, another construction), the Monte Carlo of the full N-dimensional pair with
a confidence interval (BSR, 2 bands, b = 10), the projection lower bound and the Rényi upper bound."""

import math

import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.certify.methods.matrix_chain import MatrixChain
from verifier.errors import NotApplicable
from verifier.matrix import bsr, from_array, gram, identity, means
from verifier.matrix.chain import chain_coefficients, delta_bound, epsilon_bound
from verifier.matrix.evidence import mc_delta, projection_delta_lower
from verifier.matrix.partition import delta_bracket
from verifier.pairs import Gaussian
from verifier.rdp import delta_upper_for
from verifier.schemes import Allocation, MatrixMechanism


def _covariance(chain):
    b = len(chain.alpha)
    cov = np.diag(chain.alpha**2 + chain.beta**2 + chain.gamma**2)
    for i in range(b):
        j = (i + 1) % b
        cov[i, j] += chain.beta[i] * chain.alpha[j]
        cov[j, i] += chain.beta[i] * chain.alpha[j]
    return cov


@pytest.mark.parametrize(("batches", "epochs"), [(3, 1), (4, 2), (10, 2), (7, 3)])
def test_representation_reproduces_the_gram_matrix(batches, epochs):
    """s_i = α_i w_i + β_i w_{i+1} + γ_i u_i has covariance Γ with non-negative coefficients.
    Catches a wrong cyclic index (β paired with the wrong α) or a negative variance."""
    g = gram(bsr(batches * epochs, 2), batches, epochs) / 2.5**2
    chain = chain_coefficients(g)
    assert min(chain.alpha.min(), chain.beta.min(), chain.gamma.min()) >= 0
    np.testing.assert_allclose(_covariance(chain), g, rtol=0, atol=1e-12)


def test_three_bands_and_two_batches_are_refused():
    """A 3-band strategy has Γ_{i,i+2} > 0 (not a chain); b = 2 has no cycle of length >= 3."""
    with pytest.raises(NotApplicable):
        chain_coefficients(gram(bsr(20, 3), 10, 2))
    with pytest.raises(NotApplicable):
        chain_coefficients(gram(bsr(4, 2), 2, 2))


@pytest.mark.parametrize("direction", list(Direction))
def test_identity_one_epoch_is_random_allocation(direction):
    """C = I, one epoch: the pair is random allocation's (1 of b steps, Gaussian σ); its δ from the
    allocation method's convex-order laws must lie in the chain bracket's neighbourhood: the two
    rigorous brackets must intersect. Catches a wrong Γ_ii/2 offset or a wrong t_max."""
    sigma, b, eps = 0.9, 6, 1.0
    g = np.eye(b) / sigma**2
    low, high = delta_bound(g, eps, direction, Side.LOWER, 32, 128), delta_bound(g, eps, direction, Side.UPPER, 32, 128)
    peer = AllocationPLD().delta_bounds(Allocation(Gaussian(sigma), steps=b), eps, direction)
    peer_low = max([x.value for x in peer if x.side is Side.LOWER], default=0.0)
    peer_high = min(x.value for x in peer if x.side is Side.UPPER)
    assert low <= peer_high and peer_low <= high
    assert high - low <= 0.45 * high


@pytest.mark.parametrize("direction", list(Direction))
def test_three_batches_agree_with_the_partition(direction):
    """b = 3 (every pair of batches adjacent): both rigorous brackets of the same δ intersect."""
    g = gram(bsr(6, 2), 3, 2) / 1.5**2
    low, high = delta_bound(g, 1.0, direction, Side.LOWER, 32, 128), delta_bound(g, 1.0, direction, Side.UPPER, 32, 128)
    p_low, p_high = delta_bracket(g, 1.0, direction)
    assert low <= p_high and p_low <= high
    assert high - low <= 0.45 * high


@pytest.mark.parametrize("direction", list(Direction))
def test_bsr_ten_batches_brackets_the_monte_carlo(direction):
    """BSR, 2 bands, 10 batches × 2 epochs at σ = 2, ε = 0.5 (δ ~ 1e-2: the Monte Carlo of the full
    20-dimensional pair is precise there): the chain bracket meets the 99.9% interval, lies above the
    projection lower bound and below the Rényi upper bound, and is narrow. Catches the spread and
    the contraction swapped (upper below the truth), a dropped increment, a wrong direction."""
    sigma, eps = 2.0, 0.5
    strategy = bsr(20, 2)
    g = gram(strategy, 10, 2) / sigma**2
    low, high = delta_bound(g, eps, direction, Side.LOWER, 32, 128), delta_bound(g, eps, direction, Side.UPPER, 32, 128)
    mc = mc_delta(means(strategy, 10, 2) / sigma, eps, direction, 1 << 17, seed=7, confidence=0.999)
    assert low <= mc.upper and mc.lower <= high
    assert high - low <= 0.45 * high
    assert projection_delta_lower(g, eps, direction) <= high
    scheme = MatrixMechanism(Gaussian(sigma), strategy, 10, 2)
    assert low <= delta_upper_for(scheme, eps, direction).value


def test_finer_grids_tighten_and_stay_consistent():
    """Every grid gives a rigorous bracket of the same δ: any two intersect, and the finer one is
    narrower (catches a grid-dependent bias that moves both ends together)."""
    g = gram(bsr(20, 2), 10, 2) / 2.7**2
    coarse = [delta_bound(g, 1.0, Direction.REMOVE, side, 16, 64) for side in (Side.LOWER, Side.UPPER)]
    fine = [delta_bound(g, 1.0, Direction.REMOVE, side, 40, 160) for side in (Side.LOWER, Side.UPPER)]
    assert coarse[0] <= fine[1] and fine[0] <= coarse[1]
    assert fine[1] - fine[0] < coarse[1] - coarse[0]


def test_epsilon_bounds_are_consistent_with_the_delta_bounds():
    g = gram(bsr(20, 2), 10, 2) / 2.0**2
    up = epsilon_bound(g, 1e-3, Direction.REMOVE, Side.UPPER, cells=16, sum_cells=64)
    low = epsilon_bound(g, 1e-3, Direction.REMOVE, Side.LOWER, cells=16, sum_cells=64)
    assert 0 < low <= up
    assert delta_bound(g, up, Direction.REMOVE, Side.UPPER, 16, 64) <= 1e-3
    assert delta_bound(g, low, Direction.REMOVE, Side.LOWER, 16, 64) > 1e-3


def test_method_sides_and_support():
    method = MatrixChain()
    scheme = MatrixMechanism(Gaussian(3.0), bsr(20, 2), 10, 2)
    assert method.supports(scheme)
    assert not method.supports(MatrixMechanism(Gaussian(3.0), bsr(20, 3), 10, 2))
    assert not method.supports(MatrixMechanism(Gaussian(3.0), identity(4), 2, 2))
    signed = np.diag(np.ones(20)) - 0.5 * np.eye(20, k=-1)
    signed_scheme = MatrixMechanism(Gaussian(3.0), from_array(signed), 10, 2)
    deltas, _ = method.claim_bounds(signed_scheme, 1.0, 1e-5, Direction.REMOVE)
    assert {b.side for b in deltas} == {Side.UPPER}  # |C| is not attained: no lower bound
    deltas, epsilons = method.claim_bounds(scheme, 1.0, 1e-5, Direction.REMOVE)
    assert {b.side for b in deltas} == {Side.UPPER, Side.LOWER}
    upper = min(b.value for b in deltas if b.side is Side.UPPER)
    assert upper <= 1e-5 and [e.value for e in epsilons] == [1.0]
    assert math.isfinite(upper)


@pytest.mark.parametrize(("kappa", "kind"), [(0.0, "spread"), (0.7, "spread"), (0.0, "mean"), (0.7, "mean")])
def test_grid_keeps_each_cells_mass_and_mean(kappa, kind):
    """The discretised N(0, 1) against scipy quadrature: total mass inside [−R, R] and E f(w) over it
    (f = w, or e^{κw}) are kept (spread: exactly; mean: each point is its cell's f-mean). Catches a
    spread that keeps the mean of w where the add direction needs that of e^{κw}, or a lost cell."""
    from scipy import integrate
    from scipy.stats import norm

    from verifier.matrix.chain import _grid

    radius, cells = 4.0, 8
    points, weights, dropped = _grid(cells, radius, kappa, kind)
    f = (lambda t: t) if kappa == 0 else (lambda t: math.exp(kappa * t))
    mass = norm.cdf(radius) - norm.cdf(-radius)
    mean_f = integrate.quad(lambda t: f(t) * norm.pdf(t), -radius, radius, epsabs=1e-13)[0]
    assert weights.sum() == pytest.approx(mass, rel=1e-12)
    assert sum(wt * f(p) for p, wt in zip(points, weights)) == pytest.approx(mean_f, rel=1e-9, abs=1e-12)
    assert dropped == pytest.approx(norm.cdf(-radius), rel=1e-9)


@pytest.mark.parametrize("direction", list(Direction))
def test_dynamic_programme_equals_brute_force_over_the_grids(direction):
    """b = 3 on 6 cells per Gaussian: the DP (UPPER, fine partial-sum grid) equals the expectation of
    the integrand over every combination of the discretised variables, enumerated here, plus the
    documented tail term. Catches a wrong wrap-around (s_2 must use w_0), a mis-paired coefficient or
    weight, or an increment added at the wrong step."""
    import itertools

    from verifier.matrix import chain as chain_module

    g = gram(bsr(6, 2), 3, 2) / 3.0**2
    coeffs = chain_coefficients(g)
    eps, cells, b = 1.0, 6, 3
    remove = direction is Direction.REMOVE
    radius = chain_module._RADIUS + float(max(coeffs.alpha.max(), coeffs.beta.max(), coeffs.gamma.max()))
    w_grids = [chain_module._variable_grid(float(c), remove, "spread", cells, radius) for c in np.maximum(coeffs.alpha, np.roll(coeffs.beta, 1))]
    u_grids = [chain_module._variable_grid(float(c), remove, "spread", cells, radius) for c in coeffs.gamma]
    total = 0.0
    for ws in itertools.product(*[list(zip(*grid[:2])) for grid in w_grids]):
        for us in itertools.product(*[list(zip(*grid[:2])) for grid in u_grids]):
            weight = np.prod([p for _, p in ws]) * np.prod([p for _, p in us])
            s = [coeffs.alpha[i] * ws[i][0] + coeffs.beta[i] * ws[(i + 1) % b][0] + coeffs.gamma[i] * us[i][0] for i in range(b)]
            ratio = sum(math.exp(s[i] - g[i, i] / 2) for i in range(b)) / b
            total += weight * (max(ratio - math.exp(eps), 0.0) if remove else max(1 - math.exp(eps) * ratio, 0.0))
    got = delta_bound(g, eps, direction, Side.UPPER, cells, 1 << 15)
    if remove:
        tail = 2 * b * math.erfc((radius - float(max(coeffs.alpha.max(), coeffs.beta.max(), coeffs.gamma.max()))) / math.sqrt(2))
    else:
        tail = 2 * b * 2 * max(grid[2] for grid in w_grids + u_grids)
    assert 0 < total < 0.5  # below the cap of 1
    assert got - tail == pytest.approx(total, rel=1e-5)
