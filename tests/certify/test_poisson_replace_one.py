"""Poisson sampling under replace-one (PoissonReplaceOne): the bracket against independent
references — mpmath closed forms of the add/remove mixture, a quadrature of the antipodal pair that
dp_accounting uses for REPLACE_ONE (an attained pair of neighbours, verifier's LOWER side), the
fixed-size-batch pair the UPPER side must improve on — and dp_accounting's PLD accountant."""

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from verifier import Direction, Gaussian
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.pairs import AntipodalMixture, SubstitutionSubsampled
from verifier.pld import scheme_pld
from verifier.schemes import PoissonReplaceOne

mpmath.mp.dps = 30
SIGMA, RATE = 1.0, 0.2
#: The one-step PLD's chord error at grid step 2^-8 is O(step²) ≈ 1.5e-5 in δ.
ATOL = 6e-5


def mixture_remove(mu, q, eps):
    """H_{e^ε}(qN(μ) + (1−q)N(0) ‖ N(0)) (Balle et al. 2018, Thm 2; Steinke 2022, Cor 8), mpmath."""
    kappa = mpmath.exp(eps)
    if kappa <= 1 - q:
        return 1 - kappa
    e = mpmath.log(1 + (kappa - 1) / q)
    return q * (mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu))


def mixture_add(mu, q, eps):
    kappa = mpmath.exp(eps)
    return 1 - kappa + kappa * mixture_remove(mu, q, -eps)


def antipodal(eps, c=1.0, q=RATE, sigma=SIGMA):
    """H_{e^ε}(qN(c) + (1−q)N(0) ‖ qN(−c) + (1−q)N(0)) by quadrature (the pair is symmetric)."""
    def a(y):
        return q * stats.norm.pdf(y, c, sigma) + (1 - q) * stats.norm.pdf(y, 0, sigma)

    def b(y):
        return q * stats.norm.pdf(y, -c, sigma) + (1 - q) * stats.norm.pdf(y, 0, sigma)

    kappa = math.exp(eps)
    value, _ = integrate.quad(lambda y: max(0.0, a(y) - kappa * b(y)), -12, 12, points=[0.0], limit=400, epsabs=1e-13, epsrel=1e-12)
    return value


def test_one_step_bracket_is_the_antipodal_pair_below_and_beats_the_fixed_batch_pair_above():
    """LOWER = the attained antipodal pair (quadrature reference), both directions; UPPER >= it and
    >= both attained add/remove orientations, and strictly below the fixed-size-batch substitution
    pair (shift 2C) at ε > 0: the blanket doubling is not used."""
    scheme = PoissonReplaceOne(Gaussian(SIGMA, 1.0), RATE, 1)
    doubled = SubstitutionSubsampled(Gaussian(SIGMA, 2.0), RATE)
    brackets = {d: scheme_pld(scheme, d, step=2.0**-8) for d in Direction}
    for eps in (-0.5, -0.05, 0.0, 0.1, 0.5, 1.5):
        remove, add = float(mixture_remove(1.0, RATE, eps)), float(mixture_add(1.0, RATE, eps))
        anti = antipodal(eps)
        for direction in Direction:
            got = brackets[direction].delta(eps)
            assert anti - ATOL <= got.lower <= anti + 1e-9
            assert got.upper >= max(remove, add, anti) - 1e-9
        if eps > 0:  # at ε = 0 (β = 1) both are λ·TV of the substitution pair
            assert brackets[Direction.REMOVE].delta(eps).upper < float(doubled.delta(eps, Direction.REMOVE).lower)


def test_antipodal_pair_is_symmetric_and_matches_quadrature():
    pair = AntipodalMixture(SIGMA, 1.0, RATE)
    for eps in (-3.0, -0.2, 0.0, 0.7, 4.0):
        got = pair.delta(eps, Direction.REMOVE)
        assert got.upper - got.lower <= 1e-15 * max(1.0, got.upper)
        assert got == pair.delta(eps, Direction.ADD)
        assert abs(float(got.lower) - antipodal(eps)) <= 1e-9


dp_accounting = pytest.importorskip("dp_accounting")


def _dp_accounting_replace_one(sigma, q, steps, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.privacy_accountant import NeighboringRelation

    one = pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=1e-3, pessimistic_estimate=pessimistic,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )
    return one.self_compose(steps).get_epsilon_for_delta(1e-5)


def test_composition_lower_side_is_dp_accountings_replace_one_pld():
    """dp_accounting's PLD accountant under REPLACE_ONE composes the same antipodal pair: verifier's
    LOWER lies inside dp_accounting's optimistic/pessimistic bracket (widened by 1%), and the
    UPPER above it. σ = 1.1, q = 0.05, T = 50."""
    scheme = PoissonReplaceOne(Gaussian(1.1, 1.0), 0.05, 50)
    got = scheme_pld(scheme, Direction.REMOVE, step=2.0**-9, target_delta=1e-5).epsilon(1e-5)
    peer_low = _dp_accounting_replace_one(1.1, 0.05, 50, pessimistic=False)
    peer_high = _dp_accounting_replace_one(1.1, 0.05, 50, pessimistic=True)
    assert peer_low * 0.99 <= got.lower <= peer_high
    assert got.upper >= peer_high


@pytest.mark.slow
def test_issue_poisson_replace_one_claim_is_inconclusive():
    """σ = 1.1, q = 256/60000, T = 2344, replace-one: dp_accounting's PLD says 1.5416; verifier's
    bracket (about [1.53, 2.64]) contains it and cannot decide it."""
    claim = parse_claim(
        {
            "mechanism": {"name": "gaussian", "sigma": 1.1, "sensitivity": 1.0},
            "scheme": {"name": "poisson", "rate": 256 / 60000, "steps": 2344},
            "neighboring": "replace_one",
            "epsilon": 1.5416,
            "delta": 1e-5,
        }
    )
    outcome = certify(claim, only=["pld"])
    assert outcome.verdict is Verdict.INCONCLUSIVE
    remove = outcome.epsilon.brackets[Direction.REMOVE]
    assert 1.50 <= remove.lower <= 1.5416 <= remove.upper <= 2.7
