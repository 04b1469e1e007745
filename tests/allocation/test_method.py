"""The allocation-pld certification method: registration, its bounds against exact values, the
CLI, validation and the memory limit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from verifier._types import Direction, Dominance, Side
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.certify.registry import methods_for
from verifier.cli import main
from verifier.errors import AccuracyNotReachable, IncompatibleObjects, InvalidArgument
from verifier.pairs import Gaussian, Laplace
from verifier.pld.allocation import allocation_loss, convex_allocation
from verifier.pld.geometric import convolve_convex, convex_ratio_law
from verifier.schemes import Allocation

#: notes/random-allocation.md §7.5: t = 2, σ = 1, δ(0.5), 9 digits (hence the relative slack).
EXACT_T2_AT_HALF = {Direction.REMOVE: 1.49177523e-01, Direction.ADD: 1.42686966e-01}
TABLE_RTOL = 5e-9


def test_registered_for_every_allocation():
    for scheme in (Allocation(Gaussian(1.0), 10), Allocation(Laplace(1.0), 7, k=2, epochs=3)):
        assert "allocation-pld" in [m.name for m in methods_for(scheme)]


@pytest.mark.parametrize("direction", list(Direction))
def test_delta_bounds_contain_the_t2_profile(direction):
    bounds = AllocationPLD().delta_bounds(Allocation(Gaussian(1.0), 2), 0.5, direction)
    by_side = {b.side: b.value for b in bounds}
    exact = EXACT_T2_AT_HALF[direction]
    assert by_side[Side.LOWER] <= exact * (1 + TABLE_RTOL) and exact * (1 - TABLE_RTOL) <= by_side[Side.UPPER]
    assert all(b.method == "allocation-pld" and b.direction is direction and b.note for b in bounds)


@pytest.mark.parametrize("scheme", [Allocation(Gaussian(1.0), 2), Allocation(Laplace(1.0), 5, k=1, epochs=2)], ids=repr)
def test_bounds_are_rigorous(scheme):
    """The base masses come from the pairs' ball-arithmetic loss brackets, so no accuracy is
    assumed anywhere: the certifier may decide verdicts on these bounds."""
    method = AllocationPLD()
    bounds = [*method.delta_bounds(scheme, 0.5, Direction.ADD), *method.epsilon_bounds(scheme, 1e-5, Direction.REMOVE)]
    assert bounds and all(b.rigorous for b in bounds)
    assert all("1e-13" not in b.note for b in bounds)


@pytest.mark.parametrize("scheme", [Allocation(Gaussian(1.0), 2), Allocation(Gaussian(1.0), 6, k=3)], ids=repr)
def test_epsilon_bounds_are_consistent_with_the_delta_bounds(scheme):
    """At the upper ε end the upper δ is already <= δ; at the lower end the lower δ still exceeds δ."""
    method, delta = AllocationPLD(), 1e-4
    for direction in Direction:
        eps = {b.side: b.value for b in method.epsilon_bounds(scheme, delta, direction)}
        assert eps[Side.LOWER] <= eps[Side.UPPER]
        at_upper = {b.side: b.value for b in method.delta_bounds(scheme, eps[Side.UPPER] + 1e-3, direction)}
        at_lower = {b.side: b.value for b in method.delta_bounds(scheme, eps[Side.LOWER] - 1e-3, direction)}
        assert at_upper[Side.LOWER] <= delta < at_lower[Side.UPPER]


def test_cli_epsilon_with_allocation(capsys):
    code = main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--scheme", "allocation", "--steps", "10",
                 "--delta", "1e-5", "--method", "allocation-pld", "--json"])  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    text = json.dumps(out)
    assert "allocation-pld" in text


def test_memory_limit_raises_accuracy_not_reachable():
    with pytest.raises(AccuracyNotReachable, match="max_bins"):
        convex_allocation(Gaussian(0.3), 4, Dominance.DOMINATING, step_exponent=12, tail_budget=1e-12, max_bins=1000)
    with pytest.raises(AccuracyNotReachable, match="max_bins"):
        allocation_loss(Gaussian(1.0), 4, Direction.ADD, Dominance.DOMINATED, step_exponent=12, tail_budget=1e-12, max_bins=1000)


def test_invalid_arguments_name_the_parameter():
    with pytest.raises(InvalidArgument, match="steps"):
        allocation_loss(Gaussian(1.0), 0, Direction.ADD, Dominance.DOMINATED, step_exponent=4, tail_budget=1e-12)
    with pytest.raises(InvalidArgument, match="tail_budget"):
        convex_allocation(Gaussian(1.0), 3, Dominance.DOMINATED, step_exponent=4, tail_budget=2.0)
    with pytest.raises(InvalidArgument, match="dominance"):
        allocation_loss(Gaussian(1.0), 2, Direction.ADD, "up", step_exponent=4, tail_budget=1e-12)


def test_laws_of_different_sides_or_grids_refuse_to_combine():
    up = convex_ratio_law(Gaussian(1.0), 4, (-3.0, 3.0), Dominance.DOMINATING)
    down = convex_ratio_law(Gaussian(1.0), 4, (-3.0, 3.0), Dominance.DOMINATED)
    finer = convex_ratio_law(Gaussian(1.0), 5, (-3.0, 3.0), Dominance.DOMINATING)
    with pytest.raises(IncompatibleObjects, match="dominance"):
        convolve_convex(up, down, 0.0)
    with pytest.raises(IncompatibleObjects, match="step"):
        convolve_convex(up, finer, 0.0)


def test_convex_laws_keep_mass_and_mean_through_self_convolution():
    """S_t of the spread has mean t (plus the moment moved to +∞) and unit mass; the contraction
    has mean t less the P-mass of infinite loss (zero here)."""
    t = 37
    for dominance in Dominance:
        law = convex_allocation(Gaussian(1.0), t, dominance, step_exponent=5, tail_budget=1e-12).law
        assert law.probs.sum() + law.zero_mass == pytest.approx(1.0, rel=1e-12)
        assert law.moments.sum() + law.lost_moment == pytest.approx(t, rel=1e-9)
        assert np.all(law.probs >= 0)
