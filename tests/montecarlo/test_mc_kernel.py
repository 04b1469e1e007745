"""The compiled Monte Carlo kernels against their plain-NumPy twins (verifier.reference.montecarlo)
and against the laws they should produce."""

import math

import numpy as np
import pytest
from scipy import stats

from verifier._fast.mc_allocation import gaussian_allocation_losses, hockey_stick_moments, mean_ratio_losses, standard_normals
from verifier.reference import montecarlo as twin

#: Kernel and twin evaluate the same log-sum-exp in a different order (one pass with a running
#: maximum vs scipy's two passes): a few ulps of the loss's magnitude.
LOSS_RTOL = 1e-12
LOSS_ATOL = 1e-12
#: Neumaier-compensated sums vs math.fsum over <= 10^4 terms in [0, 1].
SUM_RTOL = 1e-14
#: Significance below which a goodness-of-fit test of the normal generator counts as a failure
#: (the test is deterministic: fixed state).
GOF_ALPHA = 1e-4


def state(seed: int) -> np.ndarray:
    return np.random.SeedSequence(seed).generate_state(4, np.uint64)


def test_normals_follow_the_standard_normal_law():
    z = np.empty(400_000)
    assert standard_normals(z, state(1)) == 0
    assert stats.kstest(z, "norm").pvalue > GOF_ALPHA
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / z.size)
    # consecutive draws are uncorrelated (pairs from one polar step included)
    assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 5 / math.sqrt(z.size)


def test_normals_have_the_normal_tails_and_bin_frequencies():
    """The ziggurat's tail branch (|Z| > R = 3.4426) and wedges, by a chi-square test on 200
    equiprobable bins plus extra tail bins, 4·10^6 draws."""
    z = np.empty(4_000_000)
    standard_normals(z, state(2))
    edges = stats.norm.ppf(np.linspace(0, 1, 201))
    edges = np.unique(np.concatenate([edges, [-4.5, -3.4426, 3.4426, 4.5]]))
    observed = np.histogram(z, bins=edges)[0]
    expected = z.size * np.diff(stats.norm.cdf(edges))
    assert stats.chisquare(observed, expected).pvalue > GOF_ALPHA
    tail = np.mean(np.abs(z) > 3.4426)
    p = 2 * stats.norm.sf(3.4426)
    assert abs(tail - p) < 6 * math.sqrt(p / z.size)


def test_normals_are_reproducible_and_the_state_advances():
    s1, s2 = state(3), state(3)
    a, b = np.empty(1001), np.empty(1001)
    standard_normals(a, s1)
    standard_normals(b, s2)
    assert np.array_equal(a, b) and np.array_equal(s1, s2)
    c = np.empty(1001)
    standard_normals(c, s1)
    assert not np.array_equal(a, c)


def test_bad_state_is_reported_by_return_code():
    out = np.empty(3)
    assert standard_normals(out, np.zeros(4, dtype=np.uint64)) == 2
    assert standard_normals(out, np.ones(3, dtype=np.uint64)) == 1
    assert gaussian_allocation_losses(out, 0, 1.0, 0.0, 0.0, 1.0, state(0)) == 3


@pytest.mark.parametrize("direction", ["add", "remove"])
@pytest.mark.parametrize("t, a", [(1, 1.0), (2, 1.0), (7, 0.3), (100, 2.5), (1000, 1.0)])
def test_allocation_kernel_matches_numpy_twin_on_the_same_normals(direction, t, a):
    n = 500
    z = np.empty(n * t)
    standard_normals(z, state(11))  # the kernel consumes the stream in the same order
    out = np.empty(n)
    remove = direction == "remove"
    status = gaussian_allocation_losses(out, t, a, a * a if remove else 0.0, -0.5 * a * a - math.log(t), 1.0 if remove else -1.0, state(11))
    assert status == 0
    expected = twin.allocation_losses_from_normals(z.reshape(n, t), a, direction)
    np.testing.assert_allclose(out, expected, rtol=LOSS_RTOL, atol=LOSS_ATOL)


def test_mean_ratio_kernel_matches_twin_including_infinities():
    rng = np.random.default_rng(5)
    ell = rng.normal(0, 3, size=(200, 9))
    ell[3, 4] = np.inf
    ell[7, :] = -np.inf
    ell[8, 2:] = -np.inf
    out = np.empty(200)
    assert mean_ratio_losses(ell, out) == 0
    np.testing.assert_allclose(out, twin.mean_ratio_losses(ell), rtol=LOSS_RTOL, atol=LOSS_ATOL)
    assert out[3] == np.inf and out[7] == -np.inf
    assert mean_ratio_losses(ell, np.empty(3)) == 1


def test_hockey_stick_moments_match_exact_sums():
    rng = np.random.default_rng(6)
    losses = np.concatenate([rng.normal(0.5, 1.0, size=10_000), [np.inf, -np.inf]])
    eps = np.array([-1.0, 0.0, 0.3, 2.0, 50.0])
    s, s2 = np.empty(5), np.empty(5)
    assert hockey_stick_moments(losses, eps, s, s2) == 0
    ref_s, ref_s2 = twin.hockey_stick_moments(losses, eps)
    np.testing.assert_allclose(s, ref_s, rtol=SUM_RTOL)
    np.testing.assert_allclose(s2, ref_s2, rtol=SUM_RTOL)
    assert s[-1] == 1.0  # only the +∞ loss counts at ε = 50
    assert hockey_stick_moments(losses, eps, np.empty(4), s2) == 1
