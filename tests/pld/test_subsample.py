"""Subsampling an existing pair of PLD brackets (both directions) against the exact profile of the
subsampled pair (closed form through Claim D.3, and exact finite sums)."""

from __future__ import annotations

import numpy as np
import pytest

from verifier._types import Direction
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.pairs import DiscretePair, Gaussian, PoissonSubsampled
from verifier.pld import scheme_pld, subsample
from verifier.schemes import Single

STEP = 2.0**-8
EPS = np.linspace(-1.0, 3.0, 41)

#: Width of the subsampled Gaussian bracket at step 2^-8 (measured: ~3e-5; the profile is smooth).
GAUSSIAN_ATOL = 1e-4
#: Finite pairs have kinks that the input PLDs smear over O(h) (measured: 0.019 at step 2^-8).
FINITE_ATOL = 0.05


@pytest.mark.parametrize(
    "pair,rate,atol",
    [
        (Gaussian(1.0), 0.1, GAUSSIAN_ATOL),
        (Gaussian(2.0), 1.0, GAUSSIAN_ATOL),
        (DiscretePair([0.5, 0.3, 0.15, 0.05, 0.0], [0.1, 0.2, 0.3, 0.2, 0.2]), 0.3, FINITE_ATOL),
    ],
    ids=["gaussian", "gaussian-rate1", "finite"],
)
def test_both_directions_bracket_the_subsampled_pair(pair, rate, atol) -> None:
    remove = scheme_pld(Single(pair), Direction.REMOVE, step=STEP)
    add = scheme_pld(Single(pair), Direction.ADD, step=STEP)
    sub_remove, sub_add = subsample(remove, add, rate)
    exact_pair = PoissonSubsampled(pair, rate)
    for direction, bracket in ((Direction.REMOVE, sub_remove), (Direction.ADD, sub_add)):
        assert bracket.direction is direction
        exact = exact_pair.delta(EPS, direction)
        got = bracket.delta(EPS)
        assert np.all(got.lower <= exact.upper) and np.all(got.upper >= exact.lower)
        assert np.all(got.upper - got.lower <= atol)


def test_subsample_refuses_mismatched_inputs() -> None:
    remove = scheme_pld(Single(Gaussian(1.0)), Direction.REMOVE, step=STEP)
    add = scheme_pld(Single(Gaussian(1.0)), Direction.ADD, step=STEP)
    with pytest.raises(InvalidArgument, match="direction"):
        subsample(add, remove, 0.1)
    with pytest.raises(IncompatibleObjects, match="grid step"):
        subsample(remove, scheme_pld(Single(Gaussian(1.0)), Direction.ADD, step=STEP / 2), 0.1)
    with pytest.raises(InvalidArgument, match="rate"):
        subsample(remove, add, 0.0)
