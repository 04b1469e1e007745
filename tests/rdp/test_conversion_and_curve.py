"""RDP → (ε, δ) conversions and the curve type: one-sided checks against exact profiles, the
chapter's DP-SGD reference values (notes §10.4), and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Direction
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.pairs import Gaussian
from verifier.rdp import (
    Conversion,
    RdpCurve,
    curve_for,
    delta_upper,
    delta_upper_for,
    epsilon_upper,
    epsilon_upper_for,
    pair_curve,
)
from verifier.schemes import Composed, Poisson, Single

#: The chapter prints these values to 9 decimals (computed in float64; dp_accounting agrees to 1e-15).
REFERENCE_ATOL = 1e-9
INTEGER_ORDERS = range(2, 257)


@pytest.mark.parametrize(
    "rate, sigma, steps, delta, classical, improved",
    [
        (0.01, 1.0, 1000, 1e-5, 2.538347545, 2.107753075),
        (0.05, 1.0, 100, 1e-6, 5.31280118, 4.687298151),
        (0.001, 0.8, 10000, 1e-5, 1.821776628, 1.391182158),
    ],
)
def test_dpsgd_reference_values_integer_orders(rate, sigma, steps, delta, classical, improved):
    """notes/composition-and-subsampling.md §10.4 (orders 2…256; = dp_accounting's RDP value)."""
    curve = curve_for(Poisson(Gaussian(sigma), rate, steps), INTEGER_ORDERS, Direction.REMOVE)
    assert epsilon_upper(curve, delta, Conversion.CLASSICAL).value == pytest.approx(classical, abs=REFERENCE_ATOL)
    assert epsilon_upper(curve, delta, Conversion.IMPROVED).value == pytest.approx(improved, abs=REFERENCE_ATOL)


@pytest.mark.parametrize("direction", list(Direction))
def test_done_when_poisson_epsilon(direction):
    """Issue 6: Poisson σ=1, λ=0.01, 1000 steps, δ=1e-5: RDP ε <= 2.1014 (dp_accounting, default orders)."""
    found = epsilon_upper_for(Poisson(Gaussian(1.0), 0.01, 1000), 1e-5, direction)
    assert found.value <= 2.1014
    assert not found.order.is_integer()  # reached by a certified fractional order


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_conversions_never_below_the_exact_gaussian_epsilon(sigma, delta):
    """Single Gaussian step: any RDP conversion is an upper bound on the exact ε(δ) (Cor 8)."""
    exact = Gaussian(sigma).epsilon(delta, Direction.REMOVE)
    curve = pair_curve(Gaussian(sigma), INTEGER_ORDERS, Direction.REMOVE)
    improved = epsilon_upper(curve, delta, Conversion.IMPROVED).value
    classical = epsilon_upper(curve, delta, Conversion.CLASSICAL).value
    assert exact.upper <= improved <= classical


@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0, 5.0])
def test_delta_conversion_dominates_exact_and_inverts_epsilon(eps):
    pair = Gaussian(1.5)
    curve = pair_curve(pair, INTEGER_ORDERS, Direction.REMOVE)
    delta_improved = delta_upper(curve, eps, Conversion.IMPROVED)
    assert delta_improved.value >= pair.delta(eps, Direction.REMOVE).upper
    assert delta_improved.value <= delta_upper(curve, eps, Conversion.CLASSICAL).value
    if delta_improved.value < 1:  # ε at that δ (same order) is back at most ε
        assert epsilon_upper(curve, delta_improved.value).value <= eps + 1e-9


def test_delta_for_negative_epsilon_is_trivial_and_capped():
    curve = pair_curve(Gaussian(1.0), [2, 3], Direction.REMOVE)
    assert delta_upper(curve, -1.0).value == 1.0
    assert delta_upper(curve, 0.0).value <= 1.0


def test_composed_scheme_adds():
    single = curve_for(Single(Gaussian(2.0)), [2, 4], Direction.ADD)
    composed = curve_for(Composed(Single(Gaussian(2.0)), 9), [2, 4], Direction.ADD)
    np.testing.assert_allclose(composed.values, 9 * single.values, rtol=1e-15)
    assert delta_upper_for(Composed(Single(Gaussian(2.0)), 9), 1.0, Direction.ADD).value < 1


def test_curve_validation_and_composition():
    a = RdpCurve(np.array([2.0, 3.0]), np.array([0.1, 0.2]), np.array([True, False]), Direction.REMOVE, "x")
    b = a.compose(a)
    np.testing.assert_allclose(b.values, [0.2, 0.4])
    assert list(b.exact) == [True, False]
    assert b.values[0] >= 0.2  # rounded up
    assert a.times(3).values[1] >= 0.6
    assert a.to_dict()["orders"] == [2.0, 3.0]
    with pytest.raises(IncompatibleObjects):
        a.compose(RdpCurve(np.array([2.0, 3.0]), np.array([0.1, 0.2]), np.array([True, True]), Direction.ADD))
    with pytest.raises(IncompatibleObjects):
        a.compose(RdpCurve(np.array([2.0, 4.0]), np.array([0.1, 0.2]), np.array([True, True]), Direction.REMOVE))
    with pytest.raises(InvalidArgument, match="values"):
        RdpCurve(np.array([2.0]), np.array([-0.1]), np.array([True]), Direction.REMOVE)
    with pytest.raises(InvalidArgument, match="orders"):
        RdpCurve(np.array([3.0, 2.0]), np.array([0.1, 0.1]), np.array([True, True]), Direction.REMOVE)
    with pytest.raises(InvalidArgument, match="orders"):
        curve_for(Single(Gaussian(1.0)), [1.0], Direction.ADD)
    with pytest.raises(InvalidArgument, match="direction"):
        curve_for(Single(Gaussian(1.0)), [2.0], "add")
    with pytest.raises(InvalidArgument, match="delta"):
        epsilon_upper(a, 1.5)
    with pytest.raises(InvalidArgument, match="conversion"):
        epsilon_upper(a, 0.1, "improved")


def test_infinite_divergence_gives_trivial_bounds():
    curve = RdpCurve(np.array([2.0]), np.array([math.inf]), np.array([True]), Direction.REMOVE)
    assert epsilon_upper(curve, 1e-5).value == math.inf
    assert delta_upper(curve, 1.0).value == 1.0
