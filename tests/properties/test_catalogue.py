"""Each catalogue property fails on the broken implementation it names and passes on a correct one.

The correct accountant is the exact ε of the Gaussian mechanism and its compositions (the Balle &
Wang 2018 closed form for a single Gaussian of sensitivity √T/σ, evaluated by scipy here, independent
of verifier's code); the broken ones each make one of the mistakes the catalogue lists.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from scipy.optimize import brentq
from scipy.stats import norm

from verifier.pairs import Gaussian
from verifier.properties import CATALOGUE, Accountant, Case, PropertyFailure, by_name, rigorous_epsilon
from verifier.strategies import claims
from verifier.schemes import Allocation, Composed, Poisson, Single

CASE = Case(Composed(Single(Gaussian(2.0)), 10), 1e-5)


def gaussian_delta(mu: float, eps: float) -> float:
    """δ(ε) of N(μ, 1) vs N(0, 1) (Balle & Wang 2018, Thm 8)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def exact(scheme, delta):
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    times = scheme.times if isinstance(scheme, Composed) else 1
    mu = math.sqrt(times) * inner.pair.sensitivity / inner.pair.sigma
    return brentq(lambda e: gaussian_delta(mu, e) - delta, -50, 500, xtol=1e-14)


def accountant(epsilon, schemes=(Single, Composed)):
    return Accountant("under test", epsilon, schemes=schemes)


@pytest.mark.parametrize("name", ["soundness", "epsilon_nonincreasing_in_delta", "monotone_in_steps", "monotone_in_noise"])
def test_exact_gaussian_passes(name):
    by_name(name).check(accountant(exact), CASE)


def test_exact_reference_matches_verifier():
    bracket = rigorous_epsilon(CASE.scheme, CASE.delta)
    assert bracket.lower - 1e-9 <= exact(CASE.scheme, CASE.delta) <= bracket.upper + 1e-9  # brentq xtol 1e-14


@pytest.mark.parametrize(
    "name, broken",
    [
        ("soundness", lambda s, d: 0.97 * exact(s, d)),
        ("soundness", lambda s, d: exact(Composed(Single(Gaussian(2 * s.scheme.pair.sigma)), s.times), d)),  # Δ/2
        ("epsilon_nonincreasing_in_delta", lambda s, d: exact(s, 1e-5) * (1 + d)),  # grows with δ
        ("monotone_in_steps", lambda s, d: exact(Single(s.scheme.pair), d) / s.times),  # divides by T
        ("monotone_in_noise", lambda s, d: exact(Composed(Single(Gaussian(4.0 / s.scheme.pair.sigma)), s.times), d)),  # σ ↔ 1/σ
    ],
)
def test_broken_accountant_fails(name, broken):
    with pytest.raises(PropertyFailure) as info:
        by_name(name).check(accountant(broken), CASE)
    assert info.value.finding.property == name
    assert str(CASE) in str(info.value)


def test_rate_monotone_catches_a_complemented_rate():
    def complemented(scheme, delta):
        return rigorous_epsilon(Poisson(scheme.pair, 1.0 - scheme.rate, scheme.steps), delta).upper

    case = Case(Poisson(Gaussian(2.0), 0.4, 3), 1e-5)
    with pytest.raises(PropertyFailure, match="monotone_in_rate"):
        by_name("monotone_in_rate").check(Accountant("complemented", complemented, schemes=(Poisson,)), case)


def test_identity_t1_catches_an_allocation_off_by_one():
    def off_by_one(scheme, delta):
        if isinstance(scheme, Allocation):
            return exact(Single(scheme.pair), delta) * 0.9  # allocation "amplified" even at t = 1
        return exact(scheme, delta)

    with pytest.raises(PropertyFailure, match="allocation_t1"):
        by_name("allocation_t1").check(Accountant("a", off_by_one, schemes=(Single, Allocation)), Case(Single(Gaussian(1.0)), 1e-5))


def test_catalogue_entries_state_source_and_kind():
    assert len({p.name for p in CATALOGUE}) == len(CATALOGUE)
    for prop in CATALOGUE:
        assert prop.kind in ("identity", "inequality") and prop.source and prop.catches and prop.statement


def exact_delta(scheme, eps):
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    times = scheme.times if isinstance(scheme, Composed) else 1
    return gaussian_delta(math.sqrt(times) / inner.pair.sigma, eps)


def exact_rdp(scheme, order):
    """D_α of the Gaussian mechanism: α Δ²/(2σ²) per step (Mironov 2017, Prop 7)."""
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    times = scheme.times if isinstance(scheme, Composed) else 1
    return times * order / (2 * inner.pair.sigma**2)


DELTA_CASE = Case(Composed(Single(Gaussian(2.0)), 10), 1e-5, epsilon=2.0, order=4.0)
CURVES = Accountant("curves", exact, schemes=(Single, Composed), delta=exact_delta, rdp=exact_rdp)


@pytest.mark.parametrize(
    "name",
    ["delta_soundness", "delta_nonincreasing_in_epsilon", "delta_convex_in_exp_epsilon", "round_trip", "rdp_soundness", "rdp_nondecreasing_in_order", "rdp_convexity"],
)
def test_exact_curves_pass(name):
    by_name(name).check(CURVES, DELTA_CASE)


@pytest.mark.parametrize(
    "name, field, broken",
    [
        ("delta_soundness", "delta", lambda s, e: 0.97 * exact_delta(s, e)),
        ("delta_nonincreasing_in_epsilon", "delta", lambda s, e: exact_delta(s, -e)),  # e^ε and e^-ε confused
        ("delta_convex_in_exp_epsilon", "delta", lambda s, e: exact_delta(s, max(e, 2.5))),  # flat, then the curve: a concave splice
        ("round_trip", "delta", lambda s, e: exact_delta(s, e - 0.1)),  # δ read off a shifted grid
        ("rdp_soundness", "rdp", lambda s, a: exact_rdp(s, a) / 2),  # α/(4σ²)
        ("rdp_nondecreasing_in_order", "rdp", lambda s, a: exact_rdp(s, 1 / a)),
        ("rdp_convexity", "rdp", lambda s, a: exact_rdp(s, min(a, 5.0))),  # capped at α = 5
    ],
)
def test_broken_curves_fail(name, field, broken):
    accountant = dataclasses.replace(CURVES, **{field: broken})
    with pytest.raises(PropertyFailure) as info:
        by_name(name).check(accountant, DELTA_CASE)
    assert info.value.finding.property == name


def test_delta_only_accountant_gets_only_delta_properties():
    only_delta = Accountant("d", None, schemes=(Single, Composed), delta=exact_delta)
    names = {p.name for p in CATALOGUE if p.applies_to(only_delta)}
    assert names == {"delta_soundness", "delta_nonincreasing_in_epsilon", "delta_convex_in_exp_epsilon"}


@settings(max_examples=5, deadline=None, database=None)
@given(claims())
def test_claim_strategy_gives_valid_claims(claim):
    assert claim.model is not None and 0 < claim.delta < 1 and claim.directions
