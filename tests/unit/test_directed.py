"""verifier._directed.arb_bounds_many: float ends outside every ball, checked in exact arb comparisons
(the ball's own exact ends are the reference), no looser than arb_bound by more than an ulp."""

from __future__ import annotations

import math

import numpy as np
from flint import arb

from verifier._directed import arb_bound, arb_bounds_many, with_precision
from verifier._types import Side


def _balls() -> list[arb]:
    with with_precision(128):
        two = arb(2)
        return [
            arb(1) / 3,  # inexact midpoint, tiny radius
            1 - two**-60,  # exact ends that no double holds: float() must round one way or the other
            1 + two**-60,
            -(1 - two**-60),
            arb(0.5),  # exact double
            (arb(1) / 7).union(arb(2) / 7),  # wide ball
            two**-1100,  # below the subnormal range
            -(two**-1100),
            arb(7.25e-300) / 3,
            (arb(1) / 3).exp() * 1e300,
        ]


def _outside(balls, lower, upper) -> bool:
    return all(arb(float(lo)) <= b.lower() and arb(float(hi)) >= b.upper() for b, lo, hi in zip(balls, lower, upper))


def test_ends_enclose_every_ball_and_stay_within_an_ulp_of_arb_bound() -> None:
    balls = _balls()
    lower, upper = arb_bounds_many(balls)
    assert _outside(balls, lower, upper)
    for b, lo, hi in zip(balls, lower, upper):  # arb_bound steps one ulp unless the end is a double
        assert math.nextafter(arb_bound(b, Side.LOWER), -math.inf) <= lo <= arb_bound(b, Side.LOWER)
        assert arb_bound(b, Side.UPPER) <= hi <= math.nextafter(arb_bound(b, Side.UPPER), math.inf)


def test_without_the_outward_step_a_ball_escapes() -> None:
    """The mutant that converts the exact ends with float() alone: 1 ± 2^-60 has ends between two
    doubles, and whichever way float() rounds, one of the two balls is left outside."""
    balls = _balls()
    lower = np.array([float(b.lower()) for b in balls])
    upper = np.array([float(b.upper()) for b in balls])
    assert not _outside(balls, lower, upper)


def test_balls_that_are_not_finite_give_infinite_ends() -> None:
    with with_precision(128):
        balls = [arb("nan"), arb(0).union(arb(1)) / 0, arb(1).log() - arb(0).log()]
    lower, upper = arb_bounds_many(balls)
    for b, lo, hi in zip(balls, lower, upper):
        assert lo == arb_bound(b, Side.LOWER) == -math.inf
        assert hi == arb_bound(b, Side.UPPER) == math.inf
