"""Issue #7 "Done when": for σ ∈ {0.5, 1, 2, 5} × t ∈ {10, 100, 1000} at δ = 1e-6, every analytic
UPPER bound on ε(δ) is >= the PLD engine's LOWER bound (allocation PLD, dominated side), and the
Chua et al. LOWER bound is <= the PLD engine's UPPER bound, in each direction."""

import pytest

import verifier.pld.allocation  # noqa: F401  (registers the allocation PLD builder)
from verifier._types import Direction, Side
from verifier.analytic import (
    chua_lower_epsilon,
    decomposition_epsilon,
    recursive_epsilon,
    truncated_poisson_epsilon,
)
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.pld import scheme_pld
from verifier.schemes import Allocation

DELTA = 1e-6
UPPER_BOUNDS = {"decomposition": decomposition_epsilon, "truncated-poisson": truncated_poisson_epsilon,
                "recursive": recursive_epsilon}
#: Default run: the cheapest configurations; the whole grid runs with -m slow.
FAST = {(2.0, 10), (5.0, 100)}


def _grid():
    for sigma in (0.5, 1.0, 2.0, 5.0):
        for t in (10, 100, 1000):
            marks = [] if (sigma, t) in FAST else [pytest.mark.slow]
            yield pytest.param(sigma, t, id=f"sigma{sigma}-t{t}", marks=marks)


@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
@pytest.mark.parametrize("sigma, steps", list(_grid()))
def test_bounds_bracket_the_allocation_pld(sigma, steps, direction):
    scheme = Allocation(Gaussian(sigma), steps)
    pld = scheme_pld(scheme, direction).epsilon(DELTA)
    applied = []
    for name, bound_of in UPPER_BOUNDS.items():
        try:
            bound = bound_of(scheme, DELTA, direction)
        except NotApplicable:
            continue
        assert bound.side is Side.UPPER and bound.direction is direction
        assert bound.value >= pld.lower, f"{name}: {bound.value} < PLD lower {pld.lower}"
        applied.append(name)
    assert "decomposition" in applied
    chua = chua_lower_epsilon(scheme, DELTA, direction)
    assert chua.side is Side.LOWER
    assert chua.value <= pld.upper
