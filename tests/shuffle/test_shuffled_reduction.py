"""The reduction of proofs/shuffled_reduction.py checked by brute force on tiny datasets: one epoch of
shuffled batches (n = 6, B = 2 and B = 3, one-dimensional gradients, every labelled partition,
adaptive gradient maps) has a hockey stick at most that of the reduced mechanism (F and the
placement of the other records revealed, F shuffled over the batches), with equality when every
other record equals the target's value in D; the reduced mechanism with Laplace noise lies below
FMT's clone bound for t users. Mutants: a reduction that reveals F's permutation exceeds the clone
bound (no amplification left); one that drops the adaptive step (each step's map frozen at the
empty history) falls below the true epoch's hockey stick. Both sides come from the same grid
quadrature (tests/shuffle/shuffled_enumeration.py), so only the inequalities are tested, with a margin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffled_enumeration import axes, batch_density, hockey, reduced_densities, reduced_hockey
from verifier.shuffle.clones import clone_delta_upper

EPSILONS = (0.0, 0.5, 1.0)


def identity(j, hist, x):
    return x


def damped(j, hist, x):
    """Step 1 reads the record; later steps scale it by tanh of the last output (adaptive, |g| <= 1)."""
    return x if j == 0 else x * np.tanh(2.0 * hist[-1])


def gated(j, hist, x):
    """Later steps read the record only where the previous output was large (smoothly)."""
    return x if j == 0 else x * (1.0 - np.exp(-(hist[-1] ** 2)))


def frozen(g):
    """The mutant that drops the adaptive step: every step's map at the all-zero history."""
    return lambda j, hist, x: g(j, [np.zeros(1)] * j, x)


#: (n, B, grid span, grid step) with Gaussian noise of standard deviation 1 (records in [-1, 1]).
GAUSSIAN_CASES = [(6, 3, 9.0, 0.06), (6, 2, 8.0, 0.25)]
DATASETS = [
    (1.0, -1.0, (1.0, 1.0, 1.0, 1.0, 1.0)),  # every other record = the target's value: the allocation pair
    (1.0, -1.0, (-1.0, 0.5, 0.0, 1.0, -0.3)),
    (0.2, -1.0, (0.9, 0.9, -0.8, 0.0, 0.4)),
]


def _sides(n, batch, span, step, target, other_target, others, g, noise="gaussian", scale=1.0):
    t = n // batch
    grid = axes(t, span, step)
    cell = step**t
    values = (target, *others)
    p = batch_density(values, batch, g, noise, scale, grid)
    q = batch_density((other_target, *others), batch, g, noise, scale, grid)
    rp = reduced_densities(values, target, batch, g, noise, scale, grid)
    rq = reduced_densities(values, other_target, batch, g, noise, scale, grid)
    return grid, cell, p, q, rp, rq


@pytest.mark.parametrize("n, batch, span, step", GAUSSIAN_CASES)
@pytest.mark.parametrize("g", [identity, damped, gated], ids=["identity", "damped", "gated"])
def test_epoch_below_reduced_mechanism(n, batch, span, step, g):
    """Data processing: the batch outputs are a post-processing of (R, reduced outputs); tight for
    the all-equal dataset, where R carries no information."""
    for target, other_target, others in DATASETS:
        _, cell, p, q, rp, rq = _sides(n, batch, span, step, target, other_target, others, g)
        assert abs(np.sum(p) * cell - 1) < 1e-6 and abs(np.sum(q) * cell - 1) < 1e-6
        for eps in EPSILONS:
            for forward in (True, False):
                truth = hockey(p, q, eps, cell) if forward else hockey(q, p, eps, cell)
                reduced = reduced_hockey(rp, rq, eps, cell) if forward else reduced_hockey(rq, rp, eps, cell)
                assert truth <= reduced + 1e-9, (target, others, eps, forward)
                if set(others) == {target}:
                    assert truth == pytest.approx(reduced, rel=1e-9, abs=1e-12)


def test_dropping_the_adaptive_step_falls_below_the_truth():
    """Mutant: the reduction computed with every step's map frozen at the empty history (a
    non-adaptive shuffle) is not an upper bound: with the gated map its hockey stick is below the
    true epoch's (the gated map reads nothing at history 0)."""
    n, batch, span, step = GAUSSIAN_CASES[0]
    target, other_target, others = DATASETS[1]
    _, cell, p, q, _, _ = _sides(n, batch, span, step, target, other_target, others, gated)
    _, _, _, _, mp_, mq = _sides(n, batch, span, step, target, other_target, others, frozen(gated))
    truth, mutant = hockey(p, q, 0.0, cell), reduced_hockey(mp_, mq, 0.0, cell)
    assert truth > mutant + 0.01, (truth, mutant)


#: Laplace noise of scale 4 on records in [-1, 1]: every step is eps0 = 1/2 pure DP (sensitivity 2).
LAPLACE = dict(n=6, batch=3, span=70.0, step=0.25, scale=4.0)


@pytest.mark.parametrize("g", [identity, damped], ids=["identity", "damped"])
def test_reduced_laplace_below_the_clone_bound_and_revealing_pi_is_not(g):
    """The reduced mechanism is FMT's adaptive sequential shuffle of t = 2 eps0-DP reports, so its
    hockey stick is below the clone bound for 2 users; revealing F's permutation leaves the target's
    report identifiable (for the identity map: the Laplace pair itself), above the clone bound (the
    mutant fails)."""
    n, batch, span, step, scale = (LAPLACE[k] for k in ("n", "batch", "span", "step", "scale"))
    e0 = 2.0 / scale
    grid = axes(n // batch, span, step)
    cell = step**2
    for target, other_target, others in DATASETS:
        values = (target, *others)
        rp = reduced_densities(values, target, batch, g, "laplace", scale, grid)
        rq = reduced_densities(values, other_target, batch, g, "laplace", scale, grid)
        mp_ = reduced_densities(values, target, batch, g, "laplace", scale, grid, reveal_permutation=True)
        mq = reduced_densities(values, other_target, batch, g, "laplace", scale, grid, reveal_permutation=True)
        for eps in (0.0, 0.1):
            bound = clone_delta_upper(e0, n // batch, eps)
            assert reduced_hockey(rp, rq, eps, cell) <= bound + 1e-3
            if (target, other_target) == (1.0, -1.0) and g is identity:
                # F's permutation revealed: the target's report alone, the Laplace pair at sensitivity 2
                revealed = reduced_hockey(mp_, mq, eps, cell)
                assert revealed == pytest.approx(1 - math.exp((eps - e0) / 2), abs=2e-3)
                assert revealed > bound + 0.03


def test_the_allocation_dataset_is_the_worst_of_the_small_one_dimensional_ones():
    """Evidence (not a proof) that the LOWER side's attained datasets are the worst case: n = 6, B = 3,
    Gaussian noise 1, the identity map, target +1 against -1, every multiset of the other five
    records in {-1, 0, 1}: no dataset's hockey stick (either order) exceeds the all-equal one's, at
    eps in {0, 0.5, 1, 2}; the next largest (one record flipped) is at least 7% below it."""
    import itertools

    n, batch, span, step = GAUSSIAN_CASES[0]
    grid = axes(2, span, step)
    cell = step**2
    found = {}
    for others in itertools.combinations_with_replacement((-1.0, 0.0, 1.0), 5):
        p = batch_density((1.0, *others), batch, identity, "gaussian", 1.0, grid)
        q = batch_density((-1.0, *others), batch, identity, "gaussian", 1.0, grid)
        found[others] = [max(hockey(p, q, e, cell), hockey(q, p, e, cell)) for e in (0.0, 0.5, 1.0, 2.0)]
    for k in range(4):
        attained = found[(1.0,) * 5]
        rest = max(v[k] for others, v in found.items() if len(set(others)) > 1)
        assert found[(-1.0,) * 5][k] == pytest.approx(attained[k], rel=1e-9)  # the mirror image
        assert rest < 0.93 * attained[k]
