"""Confidence bounds for means of [0, 1] samples: closed forms, Clopper–Pearson, and coverage."""

import math

import numpy as np
import pytest
from scipy import stats

from verifier.errors import InvalidArgument
from verifier.montecarlo.intervals import bernstein_upper, kl_lower, kl_upper, mean_interval

#: Bisection to 2^-80 plus the rounding of kl near its root: a few ulps of the root.
ROOT_RTOL = 1e-13


def test_kl_upper_at_zero_mean_is_the_closed_form():
    # n·kl(0‖p) = −n ln(1 − p) = ln(1/err)  ⇔  p = 1 − err^{1/n} = −expm1(ln(err)/n)
    for n, err in [(10, 0.05), (1000, 1e-3), (10**6, 1e-6)]:
        exact = -math.expm1(math.log(err) / n)
        assert kl_upper(0.0, n, err) == pytest.approx(exact, rel=ROOT_RTOL)
        assert kl_upper(0.0, n, err) >= exact * (1 - ROOT_RTOL)


def test_kl_bounds_solve_their_equation_on_the_safe_side():
    n, err = 500, 1e-3
    for q in [0.01, 0.3, 0.5, 0.97]:
        hi, lo = float(kl_upper(q, n, err)), float(kl_lower(q, n, err))
        kl = lambda p: q * math.log(q / p) + (1 - q) * math.log((1 - q) / (1 - p))  # noqa: E731
        assert n * kl(hi) >= math.log(1 / err) - 1e-9 and n * kl(lo) >= math.log(1 / err) - 1e-9
        assert lo < q < hi


@pytest.mark.parametrize("k, n", [(0, 50), (3, 50), (25, 50), (50, 50), (7, 10_000)])
def test_kl_bound_is_no_tighter_than_clopper_pearson_for_bernoulli_samples(k, n):
    # Clopper–Pearson is exact for Bernoulli samples; the KL–Chernoff bound holds for any [0,1]
    # samples and so cannot be narrower.
    err = 0.005
    cp_upper = 1.0 if k == n else stats.beta.ppf(1 - err, k + 1, n - k)
    cp_lower = 0.0 if k == 0 else stats.beta.ppf(err, k, n - k + 1)
    assert kl_upper(k / n, n, err) >= cp_upper - 1e-12
    assert kl_lower(k / n, n, err) <= cp_lower + 1e-12


def test_bernstein_formula():
    n, err, mean, var = 1000, 0.01, 0.2, 0.05
    expected = mean + math.sqrt(2 * var * math.log(2 / err) / n) + 7 * math.log(2 / err) / (3 * (n - 1))
    assert bernstein_upper(mean, var, n, err) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("interval", ["kl", "bernstein", "kl+bernstein"])
def test_coverage_of_beta_distributed_samples(interval):
    # 2000 independent experiments at 90% confidence: the number of misses is Binomial(2000, <= 0.1);
    # 0.1·2000 + 4 standard deviations is a bound that a correct interval exceeds with prob < 1e-4.
    rng = np.random.default_rng(2024)
    trials, n, confidence = 2000, 200, 0.9
    a, b = 0.5, 4.0
    true_mean = a / (a + b)
    x = rng.beta(a, b, size=(trials, n))
    misses = 0
    for row in x:
        _, bracket = mean_interval(n, row.sum(), (row * row).sum(), confidence, interval)
        misses += not (bracket.lower[0] <= true_mean <= bracket.upper[0])
    assert misses <= 0.1 * trials + 4 * math.sqrt(trials * 0.1 * 0.9)


def test_combined_interval_is_inside_both_halves_at_half_the_error():
    n, s, s2 = 10_000, 123.0, 30.0
    _, both = mean_interval(n, s, s2, 0.99, "kl+bernstein")
    _, kl_half = mean_interval(n, s, s2, 0.995, "kl")
    _, b_half = mean_interval(n, s, s2, 0.995, "bernstein")
    assert both.upper[0] == min(kl_half.upper[0], b_half.upper[0])
    assert both.lower[0] == max(kl_half.lower[0], b_half.lower[0])


def test_invalid_input_names_the_parameter():
    with pytest.raises(InvalidArgument, match="confidence"):
        mean_interval(10, 1.0, 1.0, 1.5)
    with pytest.raises(InvalidArgument, match="samples"):
        mean_interval(0, 0.0, 0.0, 0.9)
    with pytest.raises(InvalidArgument, match="interval"):
        mean_interval(10, 1.0, 1.0, 0.9, "hoeffding")
    with pytest.raises(InvalidArgument, match="total"):
        mean_interval(10, 11.0, 11.0, 0.9)
