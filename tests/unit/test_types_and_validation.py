"""Leaf modules: result types, direction handling, errors and the central validators."""

import math
import types

import numpy as np
import pytest

import verifier
from verifier import _validation as v
from verifier._types import Bound, Bracket, Direction, Dominance, Estimate, Quantity, Side, directions_for
from verifier.errors import InconsistentBounds, InvalidArgument


def test_public_names_match_all():
    # subpackages imported by other tests appear as attributes; they are not public names of the root
    public = {name for name in dir(verifier) if not name.startswith("_") and not isinstance(getattr(verifier, name), types.ModuleType)}
    assert public <= set(verifier.__all__) | {"annotations"}
    for name in verifier.__all__:
        assert hasattr(verifier, name)


def test_bracket_rejects_inverted_and_nan():
    with pytest.raises(InconsistentBounds):
        Bracket(2.0, 1.0)
    with pytest.raises(InvalidArgument):
        Bracket(math.nan, 1.0)
    b = Bracket(np.array([0.0, 1.0]), np.array([0.5, 2.0]))
    assert b[1] == Bracket(1.0, 2.0)
    assert b.contains([0.25, 1.5]) and not b.contains([0.25, 2.5])


def test_bracket_maximum_encloses_max_of_enclosed_values():
    a, b = Bracket(0.1, 0.2), Bracket(0.15, 0.3)
    assert a.maximum(b) == Bracket(0.15, 0.3)


def test_dominance_side_and_direction_opposite():
    assert Dominance.DOMINATING.side is Side.UPPER and Dominance.DOMINATED.side is Side.LOWER
    assert Direction.ADD.opposite is Direction.REMOVE and Side.UPPER.opposite is Side.LOWER


@pytest.mark.parametrize("name, expected", [("add", 1), ("remove", 1), ("both", 2), ("add_or_remove", 2)])
def test_directions_for(name, expected):
    assert len(directions_for(name)) == expected


def test_directions_for_rejects_unknown():
    with pytest.raises(InvalidArgument, match="neighboring"):
        directions_for("replace")


def test_bound_rejects_nan_and_serialises_infinity():
    with pytest.raises(InvalidArgument):
        Bound(math.nan, Side.UPPER, Direction.ADD, Quantity.DELTA, 1.0, "m", "c")
    b = Bound(math.inf, Side.UPPER, Direction.ADD, Quantity.EPSILON, 1e-5, "m", "c")
    assert b.to_dict()["value"] == "inf"


def test_estimate_checks_confidence_and_interval():
    with pytest.raises(InvalidArgument):
        Estimate(0.1, 0.0, 0.2, 1.5, 10, Direction.ADD, Quantity.DELTA, 1.0, "mc")
    with pytest.raises(InconsistentBounds):
        Estimate(0.1, 0.3, 0.2, 0.9, 10, Direction.ADD, Quantity.DELTA, 1.0, "mc")


@pytest.mark.parametrize(
    "check, good, bad",
    [
        (v.check_real, 1.5, [math.nan, math.inf, "abc", True, None]),
        (v.check_positive, 2.0, [0.0, -1.0, math.nan]),
        (v.check_nonnegative, 0.0, [-1e-300, math.nan]),
        (v.check_open_unit, 0.5, [0.0, 1.0, 1.5, -0.1, math.nan]),
        (v.check_unit, 1.0, [1.0000001, -0.1]),
        (v.check_rate, 1.0, [0.0, -0.0, 1.0000001, -0.1, math.nan, math.inf]),
        (v.check_half_open_unit, 0.0, [1.0, -0.1, math.nan]),
        (v.check_order, 1.5, [1.0, 0.5, math.inf]),
    ],
)
def test_scalar_validators(check, good, bad):
    assert check("x", good) == good
    for value in bad:
        with pytest.raises(InvalidArgument, match=r"^x="):
            check("x", value)


def test_check_integer():
    assert v.check_integer("t", 3.0, minimum=1) == 3
    for bad in [2.5, True, "3", 0]:
        with pytest.raises(InvalidArgument):
            v.check_integer("t", bad, minimum=1)


def test_check_probability_vector():
    assert v.check_probability_vector("p", [0.25, 0.75]).tolist() == [0.25, 0.75]
    for bad in [[0.5, 0.6], [-0.1, 1.1], [], [[0.5, 0.5]], [math.nan, 1.0]]:
        with pytest.raises(InvalidArgument):
            v.check_probability_vector("p", bad)


def test_check_sorted_and_choice():
    with pytest.raises(InvalidArgument):
        v.check_sorted("l", np.array([1.0, 0.0]))
    with pytest.raises(InvalidArgument, match="must be one of"):
        v.check_choice("m", "x", ("a", "b"))
