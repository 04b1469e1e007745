"""Bounds from losses rounded down (LOWER) and up (UPPER) onto a lattice (issue 33, item 2), held against truths computed
outside verifier by benchmarks/one_percent.py (a numpy/scipy loss-law convolution whose rounded-up and
rounded-down values bracket the truth).

Would catch: rounding the wrong way on either side (the bound would cross the truth), putting the mass above the lattice anywhere but +∞ for UPPER, the wrong
orientation of a Poisson step (ADD vs REMOVE: off by far more than the slack), and a lower bound that
stays trivially 0 where δ > 0 (the issue's Poisson-sampled Laplace examples)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from verifier._types import Direction, Side
from verifier.certify.methods.lattice import LatticeMethod
from verifier.schemes import Poisson
from verifier.pairs import Laplace

_SPEC = importlib.util.spec_from_file_location("one_percent", Path(__file__).resolve().parents[2] / "benchmarks" / "one_percent.py")
one_percent = sys.modules.setdefault("one_percent", importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(one_percent)  # registered first: its dataclasses look their module up


@pytest.fixture(autouse=True)
def _coarser_truth(monkeypatch):
    """2^16 bins keep the reference fast; its rounded-up/down half-width (~1e-4 relative) is reported
    with every value and enters each assertion."""
    monkeypatch.setattr(one_percent, "BINS", 2**16)

#: How far below the truth the lattice may land (its cells are ~1e-6 wide near these ε).
TIGHTNESS = 2e-3


@pytest.mark.parametrize(
    ("direction", "epsilon"),
    [
        (Direction.ADD, 0.12925),  # the default run keeps this one (~2 s); the others are slow-marked
        pytest.param(Direction.ADD, 0.05, marks=pytest.mark.slow),
        pytest.param(Direction.REMOVE, 0.31375, marks=pytest.mark.slow),
        pytest.param(Direction.REMOVE, 0.1, marks=pytest.mark.slow),
    ],
)
def test_poisson_laplace_two_steps_lower_bound_is_below_and_near_the_truth(direction, epsilon):
    law = one_percent.poisson_law("laplace", 1.0, 0.1, direction is Direction.ADD)
    truth, half = one_percent.convolved_delta(law, 2)(epsilon)
    lower, upper = LatticeMethod().delta_bounds(Poisson(Laplace(1.0), 0.1, 2), epsilon, direction)
    assert lower.side is Side.LOWER and upper.side is Side.UPPER
    assert (truth - half) * (1 - TIGHTNESS) <= lower.value <= truth + half
    assert truth - half <= upper.value <= (truth + half) * (1 + TIGHTNESS)
    assert lower.value > 0


@pytest.mark.slow
def test_epsilon_lower_bound_is_below_the_truth():
    law = one_percent.poisson_law("laplace", 1.0, 0.1, True)
    delta_of = one_percent.convolved_delta(law, 2)
    lower, upper = LatticeMethod().epsilon_bounds(Poisson(Laplace(1.0), 0.1, 2), 1e-5, Direction.ADD)
    truth_delta, half = delta_of(lower.value)
    assert truth_delta - half > 1e-5  # the true δ at the lower ε still exceeds δ: ε(δ) is above it
    assert delta_of(lower.value * 1.002)[0] < 1e-5  # and it is within 0.2% of ε(δ)
    truth_delta, half = delta_of(upper.value)
    assert truth_delta + half <= 1e-5  # at the upper ε the true δ is already below δ
    assert delta_of(upper.value * 0.998)[0] > 1e-5
