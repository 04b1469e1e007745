"""verifier.analytic._search.smallest_passing against exact dyadic arithmetic: the crossing of
``x >= 1/3`` on [0, 1] after j halvings lies between floor(2^j/3)/2^j and the next multiple of 2^-j
(exact in binary floating point for j <= 52)."""

from __future__ import annotations

import math

import pytest

from verifier.analytic._search import smallest_passing


@pytest.mark.parametrize("steps", [1, 10, 40])
def test_steps_halve_exactly_that_many_times(steps):
    """With ``tolerance=0`` and ``steps=j`` the pair is the dyadic bracket of width 2^-j around 1/3 (a
    mutant that ignores ``steps`` returns neighbouring floats; one that stops a halving early or late
    returns a bracket twice or half as wide)."""
    seen = []

    def passes(x: float) -> bool:
        seen.append(x)
        return x >= 1 / 3

    failing, passing = smallest_passing(passes, 0.0, 1.0, tolerance=0.0, steps=steps)
    k = math.floor(2**steps / 3)
    assert (failing, passing) == (k / 2**steps, (k + 1) / 2**steps)
    assert len(seen) == steps + 2  # both ends, then one evaluation a halving


def test_steps_stop_at_neighbouring_floats():
    """More halvings than the floats between the ends allow: the search stops with the ends one ulp
    apart (no endless loop, no midpoint equal to an end evaluated)."""
    failing, passing = smallest_passing(lambda x: x >= 1 / 3, 0.0, 1.0, tolerance=0.0, steps=10_000)
    assert failing < 1 / 3 <= passing
    assert passing == math.nextafter(failing, 1.0)


def test_tolerance_stops_before_steps():
    """The width still stops the search first where it is reached in fewer halvings (2^-10 < 1e-3)."""
    failing, passing = smallest_passing(lambda x: x >= 1 / 3, 0.0, 1.0, tolerance=1e-3, steps=40)
    assert (failing, passing) == (341 / 1024, 342 / 1024)
