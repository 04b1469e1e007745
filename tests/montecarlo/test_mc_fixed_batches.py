"""Monte Carlo for fixed-size batches: an estimate of δ of the attained pair of neighbours (the PLD
LOWER construction), checked against that pair's exact δ(ε) by quadrature (scipy), independent of
verifier's engines."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, stats

from verifier._types import Direction
from verifier.certify.methods.montecarlo import MonteCarlo
from verifier.pairs import ApproxDP, Gaussian
from verifier.schemes import WithoutReplacement


def _attained_delta(sigma: float, shift: float, rate: float, epsilon: float, direction: Direction) -> float:
    """H_{e^ε}(M‖Q) (REMOVE) or H_{e^ε}(Q‖M) (ADD), M = rate·N(shift, σ²) + (1 − rate)·N(0, σ²), Q = N(0, σ²)."""
    q = stats.norm(0.0, sigma).pdf
    m = lambda x: rate * stats.norm(shift, sigma).pdf(x) + (1 - rate) * q(x)  # noqa: E731
    first, second = (m, q) if direction is Direction.REMOVE else (q, m)
    value, _ = integrate.quad(lambda x: max(first(x) - math.exp(epsilon) * second(x), 0.0), -12 * sigma, shift + 12 * sigma, limit=200)
    return value


@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_one_step_estimate_covers_the_attained_pair(direction):
    # catches a wrong simulated scheme: rate 1 instead of B/n (δ 0.675), the shift Δ/2 instead of
    # the replace-one Δ (0.026), or the orientations swapped (REMOVE 0.0614 vs ADD 0.0307 at ε = 0.05)
    scheme = WithoutReplacement(Gaussian(1.0, 2.0), 100, 10, 1)
    (estimate,) = MonteCarlo().delta_estimates(scheme, 0.05, direction)
    exact = _attained_delta(1.0, 2.0, 0.1, 0.05, direction)
    assert estimate.lower <= exact <= estimate.upper
    assert estimate.upper - estimate.lower < 0.3 * exact
    assert "attained pair" in estimate.citation


def test_supports_additive_noise_only():
    method = MonteCarlo()
    assert method.supports(WithoutReplacement(Gaussian(1.0, 2.0), 100, 10, 3))
    assert not method.supports(WithoutReplacement(ApproxDP(1.0, 1e-6), 100, 10, 3))


def test_certify_says_what_the_estimate_is_of(capsys):
    # the summary must not present the attained pair's δ as the worst case's
    from verifier.cli import main

    argv = ["certify", "--scheme", "without_replacement", "--sigma", "1", "--dataset-size", "100", "--batch-size", "10",
            "--steps", "3", "--neighboring", "replace_one", "--epsilon", "0.5", "--delta", "0.05"]  # fmt: skip
    main(argv)
    lines = [line for line in capsys.readouterr().out.splitlines() if "estimate (not a bound)" in line]
    assert lines and all("of the attained pair of neighbours" in line for line in lines)
