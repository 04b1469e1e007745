"""The combined bound: per-direction minimum over the analytic bounds, then the maximum."""

import pytest

from verifier._types import Direction, Side
from verifier.analytic import UPPER_BOUNDS, combined_epsilon
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import Allocation

SCHEME = Allocation(Gaussian(2.0), 10)
DELTA = 1e-6


def test_combined_is_per_direction_min_then_max():
    from verifier.analytic import pld_poisson_profile

    result = combined_epsilon(SCHEME, DELTA)
    for direction in (Direction.ADD, Direction.REMOVE):
        values = []
        for fn in UPPER_BOUNDS.values():
            try:
                values.append(fn(SCHEME, DELTA, direction, pld_poisson_profile).value)
            except NotApplicable:
                pass
        assert result.per_direction[direction].value == min(values)
    assert result.bound.side is Side.UPPER
    assert result.bound.value == max(b.value for b in result.per_direction.values())
    # the remove-only direct bound is never used for add and vice versa
    assert result.per_direction[Direction.REMOVE].method != "direct-add"


def test_k_equals_t_is_full_composition():
    """k = t: every step sees the element, A_{t,t} = N(σ/√t) (Lemma D.1 remark). Only Thm 4.1 applies
    (t′ = 1, η = 1) and its bound must be above the exact composition's ε."""
    import math

    result = combined_epsilon(Allocation(Gaussian(2.0), 10, k=10), DELTA, (Direction.REMOVE,))
    exact = float(Gaussian(2.0 / math.sqrt(10)).epsilon(DELTA, Direction.REMOVE).upper)
    bound = result.per_direction[Direction.REMOVE]
    assert bound.method == "truncated-poisson"
    assert exact <= bound.value <= exact * 1.05
