"""The constants of the analytic theorems against closed forms and independent computations."""

import math

import numpy as np
import pytest
import mpmath
import sympy as sp
from flint import arb
from scipy import stats

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier.analytic.decomposition import sampled_fraction
from verifier.analytic.recursive import recursion_rate, tail_coefficient
from verifier.analytic.rounds import rounds_of
from verifier.analytic.truncated_poisson import local_epsilon, truncation_rate
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import Allocation

#: notes §7.2: γ→ = 1/(1 − (1 − 1/t)^t). The notes' t = 10^6 entry (1.581976246505997) is off in
#: the 11th digit (float64 error in (1 − 1/t)^t); mpmath at 40 digits gives 1.5819762465324714661.
GAMMA_REMOVE = {1: 1.0, 2: 4 / 3, 10: 1.5353399327876296, 100: 1.5773675300856045, 1000: 1.5815163121946023,
                10**6: 1.5819762465324714661}
#: The notes quote γ→ to ~16 digits (float64).
GAMMA_RTOL = 1e-14


@pytest.mark.parametrize("t, gamma", sorted(GAMMA_REMOVE.items()))
def test_decomposition_factor(t, gamma):
    lam_v = sampled_fraction(t)
    assert arb_bound(1 / lam_v, Side.UPPER) == pytest.approx(gamma, rel=GAMMA_RTOL)
    with mpmath.workdps(40), with_precision():
        exact = 1 / (1 - (1 - mpmath.mpf(1) / t) ** t)
        assert abs(float((1 / lam_v - arb(mpmath.nstr(exact, 35))).abs_upper())) < 1e-30


def test_decomposition_factor_limit():
    assert arb_bound(1 / sampled_fraction(10**9), Side.UPPER) == pytest.approx(math.e / (math.e - 1), rel=1e-8)


def test_thm_4_6_constants_match_claim_d3():
    """ε→, ε←, γ← of Thm 4.6 follow from Claim D.3 with μ = 1/γ→ (notes §1.5, Lemma D.4): symbolic."""
    eps, g = sp.symbols("epsilon gamma", positive=True)
    mu = 1 / g
    kappa = sp.exp(eps)
    # H_κ((1−μ)Q + μP ‖ Q) = μ H_{κ'}(P‖Q), κ' = 1 + (κ−1)/μ: so H_κ(P‖Q) = γ H_{1+(κ−1)μ}(...)
    kappa_remove = 1 + (kappa - 1) * mu
    assert sp.simplify(sp.log(kappa_remove) - sp.log(1 + (sp.exp(eps) - 1) / g)) == 0
    # add: κ'' = κμ/(1 − κ + κμ) inverted at the Poisson level gives ε← = −ln(1 − (1 − e^{−ε})/γ)
    kappa_poisson = sp.symbols("k", positive=True)
    solved = sp.solve(sp.Eq(kappa_poisson * mu / (1 - kappa_poisson + kappa_poisson * mu), kappa), kappa_poisson)[0]
    assert sp.simplify(solved - 1 / (1 - (1 - sp.exp(-eps)) / g)) == 0
    beta = 1 - solved + solved * mu
    assert sp.simplify(1 / beta - (1 + sp.exp(eps) * (g - 1))) == 0


def test_sinh_is_the_range_width():
    """Thm 4.1 proof step 3: D ∈ [1 − e^{ε₀}, 1 − e^{−ε₀}] has width e^{ε₀} − e^{−ε₀} = 2 sinh ε₀ <= 2 cosh ε₀."""
    x = sp.symbols("x", positive=True)
    assert sp.simplify((1 - sp.exp(-x)) - (1 - sp.exp(x)) - 2 * sp.sinh(x)) == 0
    assert sp.simplify(sp.cosh(x) - sp.sinh(x) - sp.exp(-x)) == 0  # cosh − sinh = e^{−x} > 0


def test_truncation_rate():
    eps0, delta_az, t = 0.3, 1e-8, 10_000
    gamma = math.sinh(eps0) * math.sqrt(2 * math.log(1 / delta_az) / t)
    eta = truncation_rate(eps0, delta_az, t)
    assert eta >= 1 / (t * (1 - gamma))
    assert eta == pytest.approx(1 / (t * (1 - gamma)), rel=1e-14)
    # the Azuma tail at this γ is δ_az: exp(−tγ²/(2 sinh² ε₀)) = δ_az
    assert math.exp(-t * gamma**2 / (2 * math.sinh(eps0) ** 2)) == pytest.approx(delta_az, rel=1e-12)
    assert truncation_rate(5.0, 1e-8, 100) == 1.0  # γ capped at 1 − 1/t: η = 1
    assert truncation_rate(0.1, 1e-8, 1) == 1.0


def test_azuma_bound_by_simulation():
    """Monte Carlo check of the Thm 4.1 event bound for the Gaussian under A(⊥) (i.i.d. Q draws):
    P(max_i Σ_{j<=i} D_j > tγ) <= δ_az with the sinh constant, using a clipped (pure-DP) ratio."""
    rng = np.random.default_rng(7)
    t, sigma, eps0, delta_az = 50, 2.0, 0.9, 0.05
    gamma = math.sinh(eps0) * math.sqrt(2 * math.log(1 / delta_az) / t)
    y = rng.normal(0.0, sigma, size=(20_000, t))
    loss = np.clip((2 * y - 1) / (2 * sigma**2), -eps0, eps0)  # an ε₀-DP loss with the Gaussian's shape
    d = 1 - np.exp(loss)
    d -= np.mean(1 - np.exp(loss))  # centre to a martingale
    hits = np.mean(np.max(np.cumsum(d, axis=1), axis=1) > t * gamma)
    assert hits <= delta_az


def test_local_epsilon_of_gaussian():
    eps0 = local_epsilon(Gaussian(2.0), 1e-6)
    assert eps0 >= float(Gaussian(2.0).epsilon(1e-6, Direction.REMOVE).upper)
    assert float(Gaussian(2.0).delta(eps0, Direction.ADD).upper) <= 1e-6 * (1 + 1e-12)


def test_tail_coefficients():
    with mpmath.workdps(40):
        for e in (0.01, 0.3, 1.0, 4.0):
            tau = 1 / (mpmath.exp(e) * mpmath.expm1(e))
            assert tail_coefficient(e, Direction.REMOVE) >= tau
            assert tail_coefficient(e, Direction.REMOVE) == pytest.approx(float(tau), rel=1e-15)
            assert tail_coefficient(e, Direction.ADD) >= tau * mpmath.exp(2 * e)
            assert tail_coefficient(e, Direction.ADD) == pytest.approx(float(tau * mpmath.exp(2 * e)), rel=1e-15)


def test_recursion_rate_condition():
    assert recursion_rate(math.log(100) / 2 - 1e-9, 100) <= 1.0
    assert recursion_rate(0.5, 100) == pytest.approx(math.e / 100, rel=1e-15)
    with pytest.raises(NotApplicable, match="ln"):
        recursion_rate(math.log(100) / 2 + 1e-6, 100)


@pytest.mark.parametrize("sigma, eps", [(0.5, 0.3), (1.0, 0.7), (2.0, 0.05), (0.3, 2.0)])
def test_sharper_tail_lemma_on_gaussians(sigma, eps):
    """The set argument behind τ (recursive.py): P_P(ℓ > 2ε) <= H_{e^ε}(P‖Q)/(1 − e^{−ε}), with
    exact Gaussian quantities (ℓ ~ N(ρ, 2ρ) under P)."""
    rho = 1 / (2 * sigma**2)
    tail = stats.norm(rho, math.sqrt(2 * rho)).sf(2 * eps)
    hockey = float(Gaussian(sigma).delta(eps, Direction.REMOVE).upper)
    assert tail <= hockey / (1 - math.exp(-eps))


def test_rounds_use_the_floor():
    r = rounds_of(Allocation(Gaussian(1.0), steps=10, k=3, epochs=2))
    assert (r.steps, r.rounds) == (3, 6)
    with pytest.raises(InvalidArgument):
        rounds_of(Gaussian(1.0))
