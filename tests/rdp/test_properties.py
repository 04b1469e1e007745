"""Property tests of the RDP engine (Hypothesis, derandomized ``ci`` profile) and ``__all__``."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verifier._types import Direction, Quantity, Side
from verifier.certify.portfolio import collect_bounds
from verifier.certify.registry import methods_for
from verifier.pairs import Gaussian
from verifier.rdp import allocation_curve, delta_upper_for, poisson_curve
from verifier.reference.pairs import gaussian_allocation_t2_delta
from verifier.schemes import Allocation

sigmas = st.floats(min_value=0.4, max_value=4.0)


@settings(max_examples=25)
@given(sigmas, st.floats(min_value=1e-4, max_value=1.0), st.integers(min_value=2, max_value=64))
def test_poisson_remove_is_monotone_and_below_the_pair(sigma, rate, top):
    """Rényi monotonicity (Lemma 33.3) and D_α(mixture‖Q) <= D_α(P‖Q) (notes §11.6 S5, S9)."""
    curve = poisson_curve(Gaussian(sigma), rate, range(2, top + 1), Direction.REMOVE)
    assert np.all(curve.values >= 0) and np.all(np.diff(curve.values) >= -1e-15)
    assert np.all(curve.values <= curve.orders / (2 * sigma**2) * (1 + 1e-12))


@settings(max_examples=25)
@given(sigmas, st.integers(min_value=1, max_value=10**7), st.integers(min_value=2, max_value=64))
def test_allocation_remove_is_monotone_and_below_the_pair(sigma, steps, top):
    curve = allocation_curve(Gaussian(sigma), steps, range(2, top + 1), Direction.REMOVE)
    assert np.all(curve.values >= 0) and np.all(np.diff(curve.values) >= -1e-15)
    assert np.all(curve.values <= curve.orders / (2 * sigma**2) * (1 + 1e-12))


@settings(max_examples=10)
@given(st.floats(min_value=0.6, max_value=3.0), st.integers(min_value=2, max_value=40), st.floats(min_value=0.0, max_value=3.0))
@example(1.0, 2, 0.5)
@example(0.8, 2, 2.0)
def test_allocation_rdp_never_below_a_registered_lower_bound(sigma, steps, epsilon):
    """RDP δ upper bound >= every rigorous lower bound of the other registered methods (the
    allocation PLD engine's, once registered); at t = 2 also >= the exact profile."""
    scheme = Allocation(Gaussian(sigma), steps)
    lower_methods = [m.name for m in methods_for(scheme) if m.name != "rdp" and Side.LOWER in m.sides()]
    for direction in Direction:
        upper = delta_upper_for(scheme, epsilon, direction).value
        if lower_methods:
            collected = collect_bounds(scheme, Quantity.DELTA, epsilon, [direction], only=lower_methods)
            lowers = [b.value for b in collected.bounds if b.side is Side.LOWER and b.rigorous]
            assert all(lo <= upper for lo in lowers)
        if steps == 2:
            assert gaussian_allocation_t2_delta(sigma, epsilon, direction.value, dps=15) <= upper
