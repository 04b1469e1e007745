"""Laplace and randomized-response allocations (and the Gaussian at larger t) sandwich a Monte
Carlo estimate computed here, and the method's bounds never cross any other method's.

Monte Carlo (S1 Cor 3.3 under Q^t): with X_i = P/Q of independent outputs drawn from Q and
S = Σ_t X_i, REMOVE δ(ε) = E[(S/t − e^ε)_+] (no infinite loss for these pairs) and ADD
δ(ε) = E[(1 − e^ε S/t)_+]. The estimate's standard error comes from the same draws; the check is
lower − Z·se <= estimate <= upper + Z·se.
"""

from __future__ import annotations

import numpy as np
import pytest

from verifier._types import Direction, Dominance, Measure, Quantity
from verifier.certify.portfolio import collect_bounds
from verifier.pairs import DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier.pld.allocation import allocation_bracket, allocation_loss
from verifier.schemes import Allocation

#: Standard errors allowed between the estimate and the bracket (loose: ~1e-6 two-sided per check).
Z = 5.0
SAMPLES = 200_000
STEP = 2.0**-14
EPSILONS = np.array([0.0, 0.1, 0.3, 0.6])


def _monte_carlo(pair, t: int, direction: Direction, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ratios = np.exp(pair.sample_loss(SAMPLES * t, Direction.REMOVE, Measure.Q, rng)).reshape(SAMPLES, t)
    mean_ratio = ratios.mean(axis=1)[:, None]
    kappa = np.exp(EPSILONS)[None, :]
    if direction is Direction.REMOVE:  # plus the P-mass of infinite loss (outcomes Q never draws)
        infinite = float(pair.loss_sf(1e300, Direction.REMOVE, Measure.P)[0])
        values = np.maximum(mean_ratio - kappa, 0.0) + infinite
    else:
        values = np.maximum(1.0 - kappa * mean_ratio, 0.0)
    # the float mean itself is off by up to SAMPLES·u·max (summation error), which matters where the
    # values barely vary (the standard error then is ~1e-16): counted as extra standard error
    rounding = SAMPLES * 2.0**-53 * np.max(np.abs(values), axis=0) / Z
    return values.mean(axis=0), values.std(axis=0, ddof=1) / np.sqrt(SAMPLES) + rounding


CASES = [(Laplace(1.0), 5), (Laplace(0.5), 10), (RandomizedResponse(1.0), 8), (RandomizedResponse(2.0, k=4), 6),
         (Gaussian(0.8), 16),
         # outcomes of infinite loss both ways (P = 0 < Q and Q = 0 < P)
         (DiscretePair((0.3, 0.5, 0.2, 0.0), (0.4, 0.4, 0.0, 0.2)), 5)]  # fmt: skip


@pytest.mark.parametrize("pair,t", CASES, ids=lambda x: repr(x))
@pytest.mark.parametrize("direction", list(Direction))
def test_convex_bracket_sandwiches_monte_carlo(pair, t, direction):
    estimate, se = _monte_carlo(pair, t, direction, seed=t)
    got = allocation_bracket(Allocation(pair, t), direction, STEP).delta(EPSILONS)
    assert np.all(got.lower - Z * se <= estimate), (got.lower, estimate, se)
    assert np.all(estimate <= got.upper + Z * se), (got.upper, estimate, se)


@pytest.mark.parametrize("pair,t", CASES[:3] + CASES[-1:], ids=lambda x: repr(x))
@pytest.mark.parametrize("direction", list(Direction))
def test_directed_bracket_sandwiches_monte_carlo_and_contains_the_convex_one(pair, t, direction):
    estimate, se = _monte_carlo(pair, t, direction, seed=t + 1)
    upper = allocation_loss(pair, t, direction, Dominance.DOMINATING, step_exponent=9, tail_budget=1e-14).pld()
    lower = allocation_loss(pair, t, direction, Dominance.DOMINATED, step_exponent=9, tail_budget=1e-14).pld()
    assert np.all(lower.delta(EPSILONS) - Z * se <= estimate)
    assert np.all(estimate <= upper.delta(EPSILONS) + Z * se)
    # two valid brackets of one value overlap
    convex = allocation_bracket(Allocation(pair, t), direction, STEP).delta(EPSILONS)
    assert np.all(lower.delta(EPSILONS) <= convex.upper) and np.all(convex.lower <= upper.delta(EPSILONS))


@pytest.mark.parametrize("quantity,at", [(Quantity.EPSILON, 1e-5), (Quantity.DELTA, 0.5)])
def test_bounds_never_cross_other_methods(quantity, at):
    """The portfolio raises InconsistentBounds if any lower bound exceeds any upper bound."""
    scheme = Allocation(Gaussian(1.0), 10)
    collected = collect_bounds(scheme, quantity, at, list(Direction), only=["allocation-pld", "rdp", "chua-lower", "decomposition"])
    ours = [b for b in collected.bounds if b.method == "allocation-pld"]
    assert len(ours) == 4
    for direction in Direction:
        mine = {b.side.value: b.value for b in ours if b.direction is direction}
        assert mine["lower"] <= mine["upper"]
        others_upper = [b.value for b in collected.bounds if b.direction is direction and b.side.value == "upper"]
        assert mine["lower"] <= min(others_upper)
