"""Order-statistics sampling (Chua et al. 2024a; notes §3.9): pathwise pessimism L̃ >= L, the exact
joint law of the drawn order statistics, and upper-biased estimates."""

import numpy as np
import pytest
from scipy import stats

from verifier._types import Direction
from verifier.errors import InvalidArgument
from verifier.montecarlo import estimate_delta
from verifier.montecarlo.order_statistics import EXACT_RANKS, _top_order_statistics, pessimistic_loss, ranks
from verifier.pairs import Gaussian, Laplace
from verifier.reference.montecarlo import allocation_losses_from_normals
from verifier.schemes import Allocation

from test_mc_samplers import T2_EPS, T2_TABLE, TABLE_ATOL

#: Log-sum-exp of the same numbers in a different grouping: a few ulps of the loss.
LOSS_ATOL = 1e-12
KS_ALPHA = 1e-4


@pytest.mark.parametrize("d", [1, 2, 99, 100, 101, 1000, 123_457])
def test_ranks_keep_the_top_and_end_at_d(d):
    r = ranks(d)
    assert r[0] == 1 and r[-1] == d and np.all(np.diff(r) > 0)
    assert np.array_equal(r[: min(d, EXACT_RANKS)], np.arange(1, min(d, EXACT_RANKS) + 1))


@pytest.mark.parametrize("t", [2, 50, 1000, 4000])
@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_pessimistic_loss_bounds_the_loss_pathwise(t, direction):
    """The same coordinates, sorted, read at the ranks: L̃ >= L, with equality when every rank is kept."""
    rng = np.random.default_rng(t)
    a, n = 1.3, 300
    z = rng.standard_normal((n, t))
    exact = allocation_losses_from_normals(z, a, direction.value)
    others = z[:, 1:] if direction is Direction.REMOVE else z
    d = others.shape[1]
    r = ranks(d)
    top = -np.sort(-others, axis=1)[:, r - 1]
    tilde = pessimistic_loss(top, r, d, a, t, direction, z[:, 0] if direction is Direction.REMOVE else None)
    assert np.all(tilde >= exact - LOSS_ATOL)
    if d <= EXACT_RANKS:
        np.testing.assert_allclose(tilde, exact, atol=LOSS_ATOL, rtol=0)


def test_drawn_order_statistics_have_their_marginal_laws():
    """U_(k), the k-th largest of d uniforms, is Beta(d − k + 1, k): Kolmogorov–Smirnov on Φ(Y_k)."""
    d = 5000
    r = ranks(d)
    top = _top_order_statistics(d, r, 20_000, np.random.default_rng(3))
    for j in (0, 50, 150, len(r) - 1):
        k = int(r[j])
        assert stats.kstest(stats.norm.cdf(top[:, j]), stats.beta(d - k + 1, k).cdf).pvalue > KS_ALPHA
    assert np.all(np.diff(top, axis=1) <= 0)


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_t2_order_statistics_are_exact_and_upper_biased_in_form(direction):
    result = estimate_delta(Allocation(Gaussian(1.0), 2), T2_EPS, [direction], 100_000, seed=4, confidence=0.9999, order_statistics=True)
    for est, exact in zip(result.estimates[direction], T2_TABLE[("allocation", direction.value)]):
        assert est.lower == 0.0 and exact <= est.upper + TABLE_ATOL
        assert est.method == "montecarlo:order-statistics"
        assert abs(est.value - exact) < 0.01  # all ranks kept at t = 2: the law is exact


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_grouped_order_statistics_estimate_lies_above_the_exact_estimate(direction):
    scheme = Allocation(Gaussian(1.0), 1000)
    pessimistic = estimate_delta(scheme, [0.05], [direction], 20_000, seed=5, order_statistics=True).at(direction)
    exact = estimate_delta(scheme, [0.05], [direction], 20_000, seed=5, importance="off").at(direction)
    assert pessimistic.upper >= exact.lower


def test_order_statistics_need_a_gaussian_allocation():
    with pytest.raises(InvalidArgument, match="order_statistics"):
        estimate_delta(Allocation(Laplace(1.0), 10), [0.5], [Direction.ADD], 10, order_statistics=True)
    with pytest.raises(InvalidArgument, match="importance"):
        estimate_delta(Allocation(Gaussian(1.0), 10), [0.5], [Direction.ADD], 10, order_statistics=True, importance="on")
