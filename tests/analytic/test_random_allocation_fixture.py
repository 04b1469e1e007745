"""Decomposition bound (Thm 4.6) against the authors' package random-allocation 1.0.5.

The fixture (fixtures/random_allocation_1_0_5.json) was produced once by
fixtures/make_random_allocation_fixture.py in a separate venv (the package pins an old numpy); the
command is recorded in the file. Its Poisson profile is dp_accounting's pessimistic PLD at
discretisation 1e-4, and its ε search stops at an absolute width of 1e-3, returning the upper end.
"""

import json
import math
from pathlib import Path

import pytest

from verifier._types import Direction
from verifier.analytic import decomposition_delta, decomposition_epsilon
from verifier.pairs import Gaussian
from verifier.schemes import Allocation

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "random_allocation_1_0_5.json").read_text())
ROWS = FIXTURE["rows"]
#: Issue #7: agreement within 1% ...
RTOL = 0.01
#: ... plus random-allocation's ε search width (epsilon_tolerance = 1e-3, upper end returned), which
#: exceeds 1% where ε < 0.1.
ATOL_EPSILON = 2 * FIXTURE["config"]["epsilon_tolerance"]
#: Below this the package's δ values are dp_accounting's floating-point floor (~1e-15), not bounds.
DELTA_FLOOR = 1e-10
#: With verifier's PLD engine as the Poisson profile, δ is compared only above this: the engine's
#: DOMINATING side carries an additive slack of ~1e-8 at σ = 0.5 (e.g. δ <= 5.4e-9 at ε = 4 for
#: Poisson(0.1) over 10 steps, add, where the exact value is 0).
DELTA_FLOOR_PLD = 1e-6
#: At σ = 0.5 the PLD engine's Poisson ε bracket is itself ~3% wide (t = 1000, δ = 6.3e-7, remove:
#: [4.421, 4.551] at step 2^-13), so the decomposition on it can sit up to that much above the package
#: (whose Poisson profile, dp_accounting's, agrees with ours to 1e-15 in the dp_accounting runs).
RTOL_PLD_SMALL_SIGMA = 0.04
#: Cheap configurations run by default with the peer profile; the rest are slow.
FAST = {(2.0, 10), (2.0, 100), (5.0, 10), (5.0, 100), (5.0, 1000), (2.0, 1000)}


def _profile_sources():
    sources = []
    try:
        from verifier.pld import scheme_pld  # noqa: F401

        sources.append(pytest.param("pld", id="pld"))
    except ImportError:
        pass
    sources.append(pytest.param("dp_accounting", id="dp_accounting", marks=pytest.mark.peer))
    return sources


def _source(name):
    if name == "pld":
        from verifier.analytic import pld_poisson_profile

        return pld_poisson_profile
    pytest.importorskip("dp_accounting")
    from poisson_references import dp_accounting_profiles

    return dp_accounting_profiles


def _rows():
    for row in ROWS:
        marks = [] if (row["sigma"], row["steps"]) in FAST else [pytest.mark.slow]
        yield pytest.param(row, id=f"sigma{row['sigma']}-t{row['steps']}", marks=marks)


@pytest.mark.parametrize("source", _profile_sources())
@pytest.mark.parametrize("row", list(_rows()))
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_decomposition_matches_random_allocation(source, row, direction):
    profiles = _source(source)
    scheme = Allocation(Gaussian(row["sigma"]), row["steps"])
    ours = decomposition_epsilon(scheme, row["delta"], direction, profiles).value
    theirs = row[f"epsilon_{direction.value}"]
    if source == "pld" and row["sigma"] < 1:
        # one-sided: never below the package by more than 1%, above it by at most the engine's width
        assert theirs * (1 - RTOL) - ATOL_EPSILON <= ours <= theirs * (1 + RTOL_PLD_SMALL_SIGMA) + ATOL_EPSILON
    else:
        assert ours == pytest.approx(theirs, rel=RTOL, abs=ATOL_EPSILON)
    floor = DELTA_FLOOR_PLD if source == "pld" else DELTA_FLOOR
    for eps, value in row[f"delta_{direction.value}"].items():
        if value > floor:
            assert decomposition_delta(scheme, float(eps), direction, profiles).value == pytest.approx(value, rel=RTOL)


def test_fixture_against_live_package():
    """If random_allocation is importable here, it still produces the fixture's numbers."""
    decomposition = pytest.importorskip("random_allocation.random_allocation_scheme.decomposition")
    from random_allocation.comparisons.definitions import Direction as RADirection
    from random_allocation.comparisons.definitions import PrivacyParams, SchemeConfig

    row = next(r for r in ROWS if (r["sigma"], r["steps"]) == (2.0, 100))
    params = PrivacyParams(sigma=2.0, num_steps=100, num_selected=1, num_epochs=1, delta=row["delta"])
    value = decomposition.allocation_epsilon_decomposition(params, SchemeConfig(), RADirection.REMOVE)
    assert value == pytest.approx(row["epsilon_remove"], rel=1e-9)


def test_fixture_covers_the_issue_grid():
    assert {(r["sigma"], r["steps"]) for r in ROWS} == {(s, t) for s in (0.5, 1.0, 2.0, 5.0) for t in (10, 100, 1000)}
    assert all(r["delta"] == 1e-6 and math.isfinite(r["epsilon_remove"]) for r in ROWS)
