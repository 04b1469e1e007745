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


def _exact(op, a: float, b: float):
    from fractions import Fraction

    x, y = Fraction(a), Fraction(b)
    return {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op]


def test_interval_operations_contain_the_exact_results() -> None:
    """Intervals (outward-rounded float interval arithmetic): for random ends, every operation's
    interval contains the exact rational result at every pair of ends (reference: fractions), and
    a quotient whose divisor straddles 0 is the whole line. The point operands make most results
    inexact, so a version without the outward step (the mutant below) leaves them out."""
    from fractions import Fraction

    from verifier._directed import Intervals

    rng = np.random.default_rng(30)
    a_lo = rng.normal(size=400) * 10.0 ** rng.integers(-8, 8, 400)
    a_hi = a_lo + np.abs(rng.normal(size=400)) * 10.0 ** rng.integers(-20, 2, 400) * (rng.random(400) < 0.5)
    b_lo = rng.normal(size=400) * 10.0 ** rng.integers(-8, 8, 400)
    b_hi = b_lo + np.abs(rng.normal(size=400)) * 10.0 ** rng.integers(-20, 2, 400) * (rng.random(400) < 0.5)
    a, b = Intervals(a_lo, a_hi), Intervals(b_lo, b_hi)
    for op, got in (("+", a + b), ("-", a - b), ("*", a * b), ("/", a / b)):
        for k in range(400):
            if op == "/" and b_lo[k] <= 0.0 <= b_hi[k]:
                assert got.lo[k] == -math.inf and got.hi[k] == math.inf
                continue
            for x in (a_lo[k], a_hi[k]):
                for y in (b_lo[k], b_hi[k]):
                    assert Fraction(got.lo[k]) <= _exact(op, x, y) <= Fraction(got.hi[k]), (op, x, y)


def test_intervals_without_the_outward_step_miss_exact_results() -> None:
    """The mutant that rounds to nearest only: 0.1 + 0.2 and 1/3 as point intervals leave the exact
    result outside, which the outward step keeps inside."""
    from fractions import Fraction

    from verifier._directed import Intervals

    x, y = Intervals.point([0.1, 1.0]), Intervals.point([0.2, 3.0])
    naive = [0.1 + 0.2, 1.0 / 3.0]
    assert Fraction(naive[0]) != _exact("+", 0.1, 0.2) and Fraction(naive[1]) != _exact("/", 1.0, 3.0)
    total, ratio = x + y, x / y
    assert Fraction(total.lo[0]) <= _exact("+", 0.1, 0.2) <= Fraction(total.hi[0])
    assert Fraction(ratio.lo[1]) <= _exact("/", 1.0, 3.0) <= Fraction(ratio.hi[1])


def test_intervals_with_infinite_or_nan_ends_stay_unbounded() -> None:
    from verifier._directed import Intervals

    a = Intervals(np.array([-np.inf, 0.0]), np.array([np.inf, 0.0]))
    b = Intervals(np.array([0.0, np.inf]), np.array([1.0, np.inf]))
    product = a * b  # (−∞, ∞)·[0, 1] and 0·∞: NaN candidates
    assert np.all(product.lo == -np.inf) and np.all(product.hi == np.inf)
    difference = b - b  # ∞ − ∞
    assert difference.lo[1] == -np.inf and difference.hi[1] == np.inf


def test_binned_sum_contains_the_exact_sums() -> None:
    """binned_sum: for random non-negative point intervals spread over 7 bins (thousands of terms a
    bin, magnitudes over 30 decades, some subnormal), every bin's interval contains the exact
    rational sum of its terms (reference: fractions). The mutant without the Higham widening (plain
    np.bincount sums) leaves the exact sum outside in at least one bin."""
    from fractions import Fraction

    from verifier._directed import Intervals, binned_sum

    rng = np.random.default_rng(42)
    x = rng.random(20000) * 10.0 ** rng.integers(-30, 1, 20000)
    x[:50] = 5e-324 * rng.integers(1, 9, 50)
    bins = rng.integers(0, 7, 20000)
    got = binned_sum(bins, Intervals.point(x))
    naive = np.bincount(bins, weights=x)
    exact = [sum((Fraction(v) for v in x[bins == b]), Fraction(0)) for b in range(7)]
    assert all(Fraction(got.lo[b]) <= exact[b] <= Fraction(got.hi[b]) for b in range(7))
    assert any(Fraction(naive[b]) != exact[b] for b in range(7))
