"""Hypothesis properties of the PLD bracket (one-sided against the exact profile, monotone in ε, σ
and the number of compositions), the public names, the certification method and the CLI."""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import verifier.pld
from verifier._types import Direction, Quantity
from verifier.certify.portfolio import collect_bounds
from verifier.certify.registry import methods_for
from verifier.cli import main
from verifier.pairs import Gaussian, Laplace
from verifier.pld import scheme_pld
from verifier.schemes import Composed, Poisson, Single

STEP = 2.0**-7
sigmas = st.floats(min_value=0.5, max_value=4.0)
epsilons = st.floats(min_value=-1.0, max_value=4.0)
directions = st.sampled_from([Direction.ADD, Direction.REMOVE])


@settings(max_examples=12)
@given(sigma=sigmas, eps=epsilons, direction=directions)
def test_bracket_contains_the_exact_gaussian_profile(sigma: float, eps: float, direction: Direction) -> None:
    bracket = scheme_pld(Single(Gaussian(sigma)), direction, step=STEP)
    got, exact = bracket.delta(eps), Gaussian(sigma).delta(eps, direction)
    assert got.lower <= exact.upper and got.upper >= exact.lower


@settings(max_examples=8)
@given(scale=st.floats(min_value=0.3, max_value=3.0), eps=epsilons, direction=directions)
def test_bracket_contains_the_exact_laplace_profile(scale: float, eps: float, direction: Direction) -> None:
    bracket = scheme_pld(Single(Laplace(scale)), direction, step=STEP)
    got, exact = bracket.delta(eps), Laplace(scale).delta(eps, direction)
    assert got.lower <= exact.upper and got.upper >= exact.lower


@settings(max_examples=8)
@given(sigma=sigmas, direction=directions, eps=st.lists(epsilons, min_size=2, max_size=6))
def test_both_sides_non_increasing_in_epsilon(sigma: float, direction: Direction, eps: list[float]) -> None:
    bracket = scheme_pld(Composed(Single(Gaussian(sigma)), 3), direction, step=STEP)
    grid = np.sort(np.asarray(eps))
    got = bracket.delta(grid)
    assert np.all(np.diff(got.upper) <= 0) and np.all(np.diff(got.lower) <= 0)


@settings(max_examples=8)
@given(s1=sigmas, s2=sigmas, eps=epsilons)
def test_non_increasing_in_sigma(s1: float, s2: float, eps: float) -> None:
    """Noisier mechanism, smaller δ: the upper bound at the smaller σ is >= the lower bound at the
    larger σ (sound for any one-sided objects), and each side is monotone up to the bracket width."""
    small, large = sorted((s1, s2))
    a = scheme_pld(Single(Gaussian(small)), Direction.REMOVE, step=STEP).delta(eps)
    b = scheme_pld(Single(Gaussian(large)), Direction.REMOVE, step=STEP).delta(eps)
    assert a.upper >= b.lower
    slack = max(a.upper - a.lower, b.upper - b.lower) + 1e-15
    assert a.upper >= b.upper - slack and a.lower >= b.lower - slack


@settings(max_examples=6)
@given(sigma=sigmas, m=st.integers(min_value=1, max_value=6), eps=epsilons)
def test_composition_monotone_in_m(sigma: float, m: int, eps: float) -> None:
    scheme = Single(Gaussian(sigma))
    fewer = scheme_pld(Composed(scheme, m), Direction.REMOVE, step=STEP).delta(eps)
    more = scheme_pld(Composed(scheme, m + 1), Direction.REMOVE, step=STEP).delta(eps)
    assert more.upper >= fewer.lower
    assert more.upper >= fewer.upper - (fewer.upper - fewer.lower) - 1e-15


def test_public_names() -> None:
    public = {
        name for name in dir(verifier.pld) if not name.startswith("_") and not inspect.ismodule(getattr(verifier.pld, name))
    }
    assert set(verifier.pld.__all__) == public


def test_pld_method_is_registered_for_every_scheme_it_builds() -> None:
    for scheme in (Single(Gaussian(1.0)), Composed(Single(Gaussian(1.0)), 3), Poisson(Gaussian(1.0), 0.1, 3)):
        assert "pld" in {m.name for m in methods_for(scheme)}


def test_portfolio_agrees_with_the_exact_method() -> None:
    scheme = Composed(Single(Gaussian(2.0)), 4)
    got = collect_bounds(scheme, Quantity.EPSILON, 1e-6, (Direction.REMOVE,), only=["pld"]).brackets[Direction.REMOVE]
    exact = Gaussian(1.0).epsilon(1e-6, Direction.REMOVE)
    assert got.lower <= exact.upper and got.upper >= exact.lower
    assert got.relative_width <= 1e-3


def test_cli_poisson_epsilon(capsys) -> None:
    argv = ["epsilon", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "1000"]
    code = main(argv + ["--delta", "1e-5", "--method", "pld", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["lower"] <= 1.8282 <= data["upper"]
    assert (data["upper"] - data["lower"]) / data["upper"] <= 2e-3
    assert {b["method"] for b in data["bounds"]} == {"pld"}
    assert all(math.isfinite(b["value"]) for b in data["bounds"])
