"""Non-Gaussian random allocation at t >= 2 against exact enumeration (issue 19: these were checked
only against Monte Carlo).

For a finite pair (P, Q) with ratio r = P/Q and 1-out-of-t allocation, P̄_t = (1/t) Σ_i P_i ⊗ Q^{t−1}
(Feldman & Shenfeld, Def 2.3), so on an outcome tuple y, P̄_t(y)/Q^t(y) = (1/t) Σ_i r(y_i): only the
counts n_j of each outcome j matter. Summing over the compositions (n_0, …, n_{k−1}) of t with their
multinomial weights at 50 digits:

    REMOVE δ(ε) = Σ_n  t!/Π n_j! · Π q_j^{n_j} · ((1/t) Σ_j n_j r_j − e^ε)_+
    ADD    δ(ε) = Σ_n  t!/Π n_j! · Π q_j^{n_j} · (1 − e^ε (1/t) Σ_j n_j r_j)_+

(randomized response has no zero masses, so no infinite loss). The allocation PLD's bracket must
contain these values; the enumeration at t + 1 must fall outside it (the check tells t from t + 1).
"""

from __future__ import annotations

import math
from itertools import combinations_with_replacement

import mpmath
import numpy as np
import pytest

from verifier._types import Direction
from verifier.pairs import RandomizedResponse
from verifier.pld.allocation import allocation_bracket
from verifier.schemes import Allocation

EPSILONS = [0.0, 0.1, 0.3, 0.6]
STEP = 2.0**-14
#: The bracket must be informative, not only valid: relative width at these settings.
MAX_REL_WIDTH = 0.05


def _compositions(t: int, k: int):
    """Count vectors (n_0, …, n_{k−1}) with Σ n_j = t."""
    for picks in combinations_with_replacement(range(k), t):
        counts = [0] * k
        for j in picks:
            counts[j] += 1
        yield counts


def exact_allocation_delta(pair: RandomizedResponse, t: int, epsilon: float, direction: Direction) -> float:
    """δ(ε) of 1-out-of-t allocation of a finite pair by enumeration (module docstring)."""
    p, q = pair._masses()
    with mpmath.workdps(50):
        p = [mpmath.mpf(x) for x in p]
        q = [mpmath.mpf(x) for x in q]
        kappa = mpmath.exp(mpmath.mpf(epsilon))
        total = mpmath.mpf(0)
        for counts in _compositions(t, len(p)):
            weight = mpmath.factorial(t) / mpmath.fprod(mpmath.factorial(n) for n in counts)
            mass = weight * mpmath.fprod(qj**n for qj, n in zip(q, counts))
            mean_ratio = mpmath.fsum(n * pj / qj for n, pj, qj in zip(counts, p, q)) / t
            gain = mean_ratio - kappa if direction is Direction.REMOVE else 1 - kappa * mean_ratio
            total += mass * max(gain, 0)
        return float(total)


CASES = [(RandomizedResponse(1.0), 2), (RandomizedResponse(1.0), 3), (RandomizedResponse(1.0), 8),
         (RandomizedResponse(2.0, k=4), 6), (RandomizedResponse(0.5, k=3), 4)]  # fmt: skip


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
@pytest.mark.parametrize(("pair", "t"), CASES, ids=lambda x: repr(x))
def test_allocation_bracket_contains_the_enumeration(pair, t, direction):
    bracket = allocation_bracket(Allocation(pair, t), direction, STEP).delta(np.array(EPSILONS))
    for i, eps in enumerate(EPSILONS):
        exact = exact_allocation_delta(pair, t, eps, direction)
        lower, upper = float(bracket.lower[i]), float(bracket.upper[i])
        assert lower <= exact * (1 + 1e-12) and exact <= upper * (1 + 1e-12), (eps, lower, exact, upper)
        if exact > 1e-6:
            assert upper - lower <= MAX_REL_WIDTH * exact
    # the mutant "allocation over t + 1 steps" is told apart somewhere on the grid
    wrong = [exact_allocation_delta(pair, t + 1, eps, direction) for eps in EPSILONS]
    assert any(not (float(lo) <= w <= float(up)) for lo, w, up in zip(bracket.lower, wrong, bracket.upper))


def test_enumeration_matches_the_pair_at_t_equal_one():
    """Self-check of the oracle: at t = 1 the allocation is the pair itself (ball-arithmetic δ)."""
    pair = RandomizedResponse(1.0, k=3)
    for direction in Direction:
        for eps in EPSILONS:
            exact = pair.delta(eps, direction)
            assert exact.lower - 1e-15 <= exact_allocation_delta(pair, 1, eps, direction) <= exact.upper + 1e-15
