"""The "rdp" certification method (through the registry only) and the ``verifier rdp`` command."""

from __future__ import annotations

import json
import math

import mpmath
import pytest

from verifier._types import Direction, Quantity
from verifier.certify.claim import parse_claim
from verifier.certify.portfolio import collect_bounds
from verifier.certify.registry import all_methods, methods_for
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.pairs import Gaussian, Laplace
from verifier.reference.rdp import allocation_remove_renyi, gaussian_moment_function
from verifier.schemes import Allocation, Composed, Poisson, Single

OPACUS_ORDERS_NEAR_OPTIMUM = [7.0 + x / 10 for x in range(0, 20)]  # Opacus: 1 + x/10, x = 1…99, and 12…63


def _opacus_epsilon(sigma: float, rate: float, steps: int, delta: float) -> float:
    """What Opacus reports (RDP of the sampled Gaussian at its fractional orders, improved
    conversion of Balle et al. 2020), recomputed here by mpmath quadrature near the optimum."""
    best = math.inf
    with mpmath.workdps(30):
        s, p = mpmath.mpf(sigma), mpmath.mpf(rate)
        for order in OPACUS_ORDERS_NEAR_OPTIMUM:
            a = mpmath.mpf(order)
            f = lambda y: mpmath.npdf(y, 0, s) * ((1 - p + p * mpmath.exp((2 * y - 1) / (2 * s * s))) ** a - 1)  # noqa: E731
            rdp = steps * mpmath.log1p(mpmath.quad(f, [-mpmath.inf, 0, 0.5, 1, 20, mpmath.inf])) / (a - 1)
            eps = rdp - (mpmath.log(delta) + mpmath.log(a)) / (a - 1) + mpmath.log((a - 1) / a)
            best = min(best, float(eps))
    return best


def test_rdp_is_registered_for_every_scheme_type():
    assert "rdp" in {m.name for m in all_methods()}
    for scheme in (Single(Laplace(1.0)), Composed(Single(Gaussian(1.0)), 3), Poisson(Gaussian(1.0), 0.1, 5), Allocation(Gaussian(1.0), 10)):
        assert "rdp" in {m.name for m in methods_for(scheme)}


def test_opacus_style_claim_is_certified():
    """DP-SGD: σ = 1, sampling rate 0.01, 1000 steps, δ = 1e-5 (Opacus's answer ≈ 2.1014)."""
    eps_opacus = _opacus_epsilon(1.0, 0.01, 1000, 1e-5)
    assert eps_opacus == pytest.approx(2.1014, abs=1e-4)
    claim = parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}, "epsilon": eps_opacus, "delta": 1e-5}
    )
    outcome = certify(claim, only=["rdp"])
    assert outcome.verdict is Verdict.CERTIFIED


def test_rdp_alone_cannot_refute_a_claim():
    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}, "epsilon": 1.0, "delta": 1e-5})
    assert certify(claim, only=["rdp"]).verdict is Verdict.INCONCLUSIVE


def test_rdp_epsilon_is_above_the_pld_upper_bound_when_registered():
    scheme = Poisson(Gaussian(1.0), 0.01, 1000)
    if "pld" not in {m.name for m in methods_for(scheme)}:
        pytest.skip("no PLD method is registered yet")
    collected = collect_bounds(scheme, Quantity.EPSILON, 1e-5, [Direction.REMOVE], only=["rdp", "pld"])
    rdp = min(b.value for b in collected.bounds if b.method == "rdp")
    pld = min(b.value for b in collected.bounds if b.method.startswith("pld") and b.side.value == "upper")
    assert pld <= rdp <= 2.1014


def test_allocation_add_bounds_include_cor410():
    bounds = methods_for(Allocation(Gaussian(1.0), 100))
    rdp = next(m for m in bounds if m.name == "rdp")
    got = rdp.delta_bounds(Allocation(Gaussian(1.0), 100), 1.0, Direction.ADD)
    assert {b.method for b in got} == {"rdp", "rdp:cor4.10-add"}
    assert all(0 <= b.value <= 1 for b in got)


def test_cli_rdp_json(capsys):
    code = main(["rdp", "--mechanism", "gaussian", "--sigma", "1", "--scheme", "allocation", "--steps", "1000", "--orders", "2,3,8", "--direction", "remove", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["orders"] == [2.0, 3.0, 8.0]
    # t = 1000: α = 2, 3 by their closed forms (issue 30; the series' bracket at α = 2 was ~4e-12
    # wide, wider than EXACT_RTOL), α = 8 by the series, narrow enough here
    assert out["exact"] == [True, True, True]
    moment = gaussian_moment_function(1.0)
    for alpha, value in zip((2, 3, 8), out["values"]):
        exact = allocation_remove_renyi(moment, 1000, alpha)
        assert exact <= value <= exact * (1 + 1e-10)


def test_cli_rdp_table_and_errors(capsys):
    assert main(["rdp", "--sigma", "2", "--scheme", "poisson", "--rate", "0.1", "--steps", "10", "--orders", "1.5,2"]) == 0
    assert "exact" in capsys.readouterr().out
    assert main(["rdp", "--sigma", "1", "--orders", "0.5"]) == 2
    assert "orders=0.5" in capsys.readouterr().err
    assert main(["rdp", "--sigma", "1", "--orders", "two"]) == 2
