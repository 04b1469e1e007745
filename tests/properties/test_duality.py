"""The add/remove duality property: δ_remove(ε) = 1 − e^ε + e^ε·δ_add(−ε) (and exchanged).

Correct reference accountant: closed forms, independent of verifier's code, for
- a Gaussian of sensitivity μ (composition of T steps at σ is one at √T/σ), symmetric:
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for every real ε (Balle & Wang 2018, Thm 8);
- one Poisson-subsampled Gaussian step (rate λ), asymmetric: remove P = (1−λ)N(0,σ²) + λN(1,σ²) vs
  Q = N(0,σ²); the likelihood ratio 1 − λ + λ·exp((2x − 1)/(2σ²)) is increasing in x, so each
  direction's H_{e^ε} is an integral over a half-line, written with Φ below.
Also a peer: dp_accounting's PLD, its two directions read separately, passes. Broken ones: the remove
curve returned for both directions (ours and dp_accounting's), and an add curve obtained from the
remove curve with a wrong duality (e^{−ε} in place of e^ε).
"""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.stats import norm

from verifier.pairs import Gaussian
from verifier.properties import Accountant, Case, PropertyFailure, by_name
from verifier.properties.runner import run_property
from verifier.schemes import Composed, Poisson, Single

PROP = by_name("add_remove_duality")


def gaussian_delta(mu: float, eps: float) -> float:
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def poisson_delta(sigma: float, rate: float, eps: float, direction: str) -> float:
    g = math.exp(eps)
    if direction == "remove":  # ∫ (p − g q)_+ over x > x*, where the ratio exceeds g
        if g <= 1 - rate:
            return 1 - g
        x = sigma**2 * math.log((g - 1 + rate) / rate) + 0.5
        return (1 - rate - g) * norm.sf(x / sigma) + rate * norm.sf((x - 1) / sigma)
    if 1 / g <= 1 - rate:  # add: ∫ (q − g p)_+ over x < x', where the ratio is below 1/g
        return 0.0
    x = sigma**2 * math.log((1 / g - 1 + rate) / rate) + 0.5
    return norm.cdf(x / sigma) - g * ((1 - rate) * norm.cdf(x / sigma) + rate * norm.cdf((x - 1) / sigma))


def exact(scheme, eps, direction):
    if isinstance(scheme, Poisson):
        assert scheme.steps == 1
        return poisson_delta(scheme.pair.sigma, scheme.rate, eps, direction)
    times = scheme.times if isinstance(scheme, Composed) else 1
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    return gaussian_delta(math.sqrt(times) * inner.pair.sensitivity / inner.pair.sigma, eps)


def direction_ignored(scheme, eps, direction):
    return exact(scheme, eps, "remove")


def wrong_duality(scheme, eps, direction):
    if direction == "remove":
        return exact(scheme, eps, "remove")
    return 1 - math.exp(-eps) + math.exp(-eps) * exact(scheme, -eps, "remove")


def accountant(directed, schemes=(Poisson,)):
    return Accountant("under test", None, schemes=schemes, directed_delta=directed)


def test_reference_is_the_integral():
    """The half-line closed forms agree with direct quadrature of (p − e^ε q)_+ (an independent check)."""
    sigma, rate = 0.75, 0.3
    p = lambda x: (1 - rate) * norm.pdf(x, 0, sigma) + rate * norm.pdf(x, 1, sigma)
    q = lambda x: norm.pdf(x, 0, sigma)
    for eps in (-1.5, 0.0, 0.4, 2.0):
        g = math.exp(eps)
        remove = quad(lambda x: max(0.0, p(x) - g * q(x)), -20, 20, limit=400, points=[0, 1])[0]
        add = quad(lambda x: max(0.0, q(x) - g * p(x)), -20, 20, limit=400, points=[0, 1])[0]
        assert poisson_delta(sigma, rate, eps, "remove") == pytest.approx(remove, abs=1e-9)
        assert poisson_delta(sigma, rate, eps, "add") == pytest.approx(add, abs=1e-9)


one_step_poisson = st.builds(
    lambda s, r, e: Case(Poisson(Gaussian(s / 4), r / 100, 1), 1e-5, e / 4),
    st.integers(2, 32), st.integers(1, 100), st.integers(0, 24),
)


@settings(max_examples=60, deadline=None, database=None)
@given(one_step_poisson)
def test_exact_poisson_passes(case):
    PROP.check(accountant(exact), case)


def test_exact_gaussian_passes_through_the_runner():
    run_property(PROP, accountant(exact, schemes=(Single, Composed)), max_examples=30)


@pytest.mark.parametrize("broken", [direction_ignored, wrong_duality])
def test_broken_poisson_fails(broken):
    case = Case(Poisson(Gaussian(1.0), 0.5, 1), 1e-5, 1.0)
    with pytest.raises(PropertyFailure, match="add_remove_duality"):
        PROP.check(accountant(broken), case)


def test_wrong_duality_fails_on_symmetric_gaussian_through_the_runner():
    with pytest.raises(PropertyFailure, match="add_remove_duality"):
        run_property(PROP, accountant(wrong_duality, schemes=(Single, Composed)), max_examples=30)


def test_property_only_runs_where_directed_delta_is_given():
    assert not PROP.applies_to(Accountant("eps only", lambda s, d: 1.0, schemes=(Poisson,)))
    assert PROP.applies_to(accountant(exact))


@functools.lru_cache(maxsize=None)
def _dp_accounting_pld(sigma, rate, steps):
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    pld = pld_module.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=1e-4)
    return pld.self_compose(steps) if steps > 1 else pld


def dp_accounting_directed(direction_ignored: bool = False):
    """dp_accounting's PLD for a Poisson-subsampled Gaussian, one direction at a time (its add/remove
    PLD keeps the two pmfs as ``_pmf_remove`` and ``_pmf_add``: private names, read here only)."""
    def delta(scheme, eps, direction):
        pld = _dp_accounting_pld(scheme.pair.sigma, scheme.rate, scheme.steps)
        pmf = pld._pmf_remove if direction == "remove" or direction_ignored else pld._pmf_add
        return pmf.get_delta_for_epsilon(eps)

    return delta


CELLS = [(1.0, 0.5, 1, 1.0), (1.0, 0.01, 100, 1.0), (2.0, 0.1, 10, 0.5), (0.8, 0.3, 5, 2.0)]


@pytest.mark.parametrize("sigma, rate, steps, eps", CELLS)
def test_dp_accounting_pld_directions_are_dual(sigma, rate, steps, eps):
    """A peer's two directions (pessimistic PLDs, discretisation 1e-4) satisfy the duality."""
    pytest.importorskip("dp_accounting")
    PROP.check(accountant(dp_accounting_directed()), Case(Poisson(Gaussian(sigma), rate, steps), 1e-5, eps))


def test_dp_accounting_with_direction_ignored_fails():
    pytest.importorskip("dp_accounting")
    with pytest.raises(PropertyFailure, match="add_remove_duality"):
        PROP.check(accountant(dp_accounting_directed(direction_ignored=True)), Case(Poisson(Gaussian(1.0), 0.5, 1), 1e-5, 1.0))
