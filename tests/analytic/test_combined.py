"""The combined bound: per-direction minimum over the analytic bounds, then the maximum."""

import pytest

from verifier._types import Direction, Side
from verifier.analytic import UPPER_BOUNDS, combined_epsilon
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import Allocation

SCHEME = Allocation(Gaussian(2.0), 10)
DELTA = 1e-6


#: A case where directions and theorems differ enough to tell the right combination from the wrong
#: ones: σ = 1, t = 100 (ADD: decomposition 0.716 < direct-add 0.892 < recursive 1.92; REMOVE:
#: decomposition 1.318 < recursive 3.62; exact ε(δ) ≈ 0.486 ADD, 0.858 REMOVE).
VALUE_SCHEME = Allocation(Gaussian(1.0), 100)
#: The best analytic bound is within this factor of the exact ε(δ) in each direction here (measured
#: 1.47 ADD, 1.53 REMOVE); a combination that picks a worse theorem is far above it (>= 1.84).
TIGHTNESS = 1.6


def _exact_epsilon(direction: Direction):
    """ε(δ) bracket from the allocation PLD (geometric grid, convex order): independent of the
    analytic theorems."""
    from verifier.pld.allocation import allocation_bracket

    return allocation_bracket(VALUE_SCHEME, direction, 2.0**-10).epsilon(DELTA)


def _check_combination(per_direction: dict, combined: float, exact: dict) -> None:
    """An add-or-remove upper bound must be >= the exact ε of every direction, and the per-direction
    choice must be the tightest theorem (within TIGHTNESS of exact)."""
    for direction, value in per_direction.items():
        assert exact[direction].lower <= value <= TIGHTNESS * exact[direction].upper, (direction, value)
    assert combined >= max(b.lower for b in exact.values())
    assert combined == max(per_direction.values())


def test_combined_against_exact_values():
    """Values, not wiring: the combined bound against the allocation PLD's exact bracket. The
    mutants show what the check catches: the maximum over theorems instead of the minimum, and the
    minimum over directions instead of the maximum."""
    from verifier.analytic import pld_poisson_profile

    exact = {d: _exact_epsilon(d) for d in (Direction.ADD, Direction.REMOVE)}
    result = combined_epsilon(VALUE_SCHEME, DELTA)
    assert result.bound.side is Side.UPPER
    _check_combination({d: b.value for d, b in result.per_direction.items()}, result.bound.value, exact)

    every = {d: [] for d in exact}
    for fn in UPPER_BOUNDS.values():
        for direction in exact:
            try:
                every[direction].append(fn(VALUE_SCHEME, DELTA, direction, pld_poisson_profile).value)
            except NotApplicable:
                pass
    worst_theorem = {d: max(values) for d, values in every.items()}
    with pytest.raises(AssertionError):
        _check_combination(worst_theorem, max(worst_theorem.values()), exact)
    best = {d: min(values) for d, values in every.items()}
    with pytest.raises(AssertionError):
        _check_combination(best, min(best.values()), exact)
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
