"""The analytic methods in the portfolio, and ``verifier compare``."""

import json

import pytest

from verifier._types import Direction, Quantity, Side
from verifier.certify.portfolio import collect_bounds
from verifier.certify.registry import all_methods, methods_for
from verifier.cli import main
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian, Laplace
from verifier.schemes import Allocation, Poisson

ANALYTIC = {"chua-lower", "decomposition", "truncated-poisson", "recursive"}


def test_registered():
    assert ANALYTIC <= {m.name for m in all_methods()}
    names = {m.name for m in methods_for(Allocation(Gaussian(1.0), 100))}
    assert ANALYTIC <= names
    # k > 1: the decomposition (a profile, not a pair) and the 1-out-of-t event bound do not apply
    names_k = {m.name for m in methods_for(Allocation(Gaussian(1.0), 100, k=2))}
    assert {"truncated-poisson", "recursive"} <= names_k and not {"decomposition", "chua-lower"} & names_k
    assert not ANALYTIC & {m.name for m in methods_for(Poisson(Gaussian(1.0), 0.1, 10))}
    assert "chua-lower" not in {m.name for m in methods_for(Allocation(Laplace(1.0), 10))}


def test_sides():
    by_name = {m.name: m for m in all_methods()}
    assert by_name["chua-lower"].sides() == frozenset({Side.LOWER})
    for name in ANALYTIC - {"chua-lower"}:
        assert by_name[name].sides() == frozenset({Side.UPPER})


def test_not_applicable_is_raised_not_infinity():
    from verifier.analytic import decomposition_epsilon, recursive_epsilon

    with pytest.raises(NotApplicable, match="k=2"):
        decomposition_epsilon(Allocation(Gaussian(1.0), 10, k=2), 1e-6, Direction.ADD)
    with pytest.raises(NotApplicable, match="t′"):
        recursive_epsilon(Allocation(Gaussian(1.0), 1), 1e-6, Direction.REMOVE)


def test_portfolio_bracket_is_consistent():
    scheme = Allocation(Gaussian(2.0), 10)
    pld = [m.name for m in methods_for(scheme) if "pld" in m.name]
    collected = collect_bounds(scheme, Quantity.EPSILON, 1e-6, (Direction.ADD, Direction.REMOVE),
                               only=["chua-lower", "decomposition", *pld])
    methods = {b.method for b in collected.bounds}
    assert {"chua-lower", "decomposition"} <= methods
    for d in (Direction.ADD, Direction.REMOVE):
        assert collected.brackets[d].lower <= collected.brackets[d].upper


def test_compare_cli(tmp_path, capsys):
    out = tmp_path / "cmp.png"
    code = main(["compare", "--sigma-min", "1", "--sigma-max", "2", "--points", "2", "--steps", "10",
                 "--delta", "1e-6", "--method", "chua-lower", "--method", "decomposition", "--out", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and out.stat().st_size > 1000
    series = {(s["label"], s["side"]): s["values"] for s in data["series"]}
    lower, upper = series[("chua-lower", "lower")], series[("decomposition", "upper")]
    assert all(lo <= up for lo, up in zip(lower, upper))
    assert series[("combined (analytic + RDP)", "upper")] == upper  # only one upper method was run
    poisson = series[("Poisson rate k/t (PLD)", "upper")]
    assert all(p > 0 for p in poisson)


@pytest.mark.parametrize("argv, name", [
    (["--sigma-min", "-1", "--sigma-max", "2", "--steps", "10", "--delta", "1e-6"], "sigma_min"),
    (["--sigma-min", "2", "--sigma-max", "1", "--steps", "10", "--delta", "1e-6"], "sigma_max"),
    (["--sigma-min", "1", "--sigma-max", "2", "--steps", "10", "--delta", "2"], "delta"),
    (["--sigma-min", "1", "--sigma-max", "2", "--steps", "10", "--k", "11", "--delta", "1e-6"], "k"),
])
def test_compare_invalid_input(capsys, argv, name):
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err
    assert name in err and len(err.strip().splitlines()) == 1
