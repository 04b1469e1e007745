"""The exact method on compositions of Gaussian steps: σ/√m is not a float, so it is rounded both
ways; each end of the bracket must hold against the 50-digit closed form. Regression: σ = 4, m = 10
rounded σ/√10 to nearest, upward, and gave an "upper" bound on ε(1e-5) 6e-17 below the true value."""

import mpmath
import pytest

from verifier._types import Direction
from verifier.certify.methods.exact import ExactPair
from verifier.pairs import Gaussian
from verifier.schemes import Composed, Single


def reference_delta(sigma, times, epsilon):
    """δ(ε) of m composed Gaussians = one Gaussian of σ/√m, sensitivity 1 (Balle & Wang 2018, Thm 8), at 50 digits."""
    with mpmath.workdps(50):
        s = mpmath.mpf(sigma) / mpmath.sqrt(times)
        e = mpmath.mpf(epsilon)
        return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)


def reference_epsilon(sigma, times, delta):
    with mpmath.workdps(50):
        low, high = mpmath.mpf(0), mpmath.mpf(10) ** 4
        for _ in range(230):  # δ(ε) decreases in ε
            middle = (low + high) / 2
            low, high = (middle, high) if reference_delta(sigma, times, middle) > delta else (low, middle)
        return low


@pytest.mark.parametrize("sigma, times", [(4.0, 10), (2.0, 10), (8.0, 10), (1.0, 3), (3.0, 7), (0.7, 1000)])
def test_composed_gaussian_bracket_holds_at_50_digits(sigma, times):
    scheme = Composed(Single(Gaussian(sigma)), times)
    method = ExactPair()
    for direction in Direction:
        lower, upper = sorted(b.value for b in method.epsilon_bounds(scheme, 1e-5, direction))
        assert lower <= reference_epsilon(sigma, times, 1e-5) <= upper
        lower, upper = sorted(b.value for b in method.delta_bounds(scheme, 1.0, direction))
        assert lower <= reference_delta(sigma, times, 1.0) <= upper
