"""Projection lower bound and Monte Carlo evidence for matrix mechanisms, against the exact Gaussian
δ (b = 1: the projection is exact), the Rényi accountant's UPPER bounds and Monte Carlo intervals;
and the certify verdicts of issue 15 done-when 5."""

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from verifier._types import Direction
from verifier.matrix import bsr, gram, identity, means, toeplitz
from verifier.matrix.evidence import mc_delta, projection_delta_lower, projection_epsilon_lower
from verifier.pairs import Gaussian
from verifier.rdp import delta_upper_for, epsilon_upper_for
from verifier.schemes import MatrixMechanism


def _gaussian_delta(mu, eps):
    """δ(ε) of N(μ, 1) vs N(0, 1) (the standard closed form, both directions)."""
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


@pytest.mark.parametrize("direction", list(Direction))
@pytest.mark.parametrize("eps", [0.0, 0.7, 3.0])
def test_projection_is_exact_without_amplification(direction, eps):
    """b = 1: the pair is N(‖m‖/σ) vs N(0) and the projection onto m loses nothing."""
    sigma = 1.3
    g = gram(bsr(3, 3), 1, 3) / sigma**2
    truth = _gaussian_delta(math.sqrt(g[0, 0]), eps)
    lower = projection_delta_lower(g, eps, direction)
    assert lower <= truth
    assert lower == pytest.approx(truth, rel=1e-12)


def test_projection_epsilon_is_below_the_gaussian_epsilon():
    sigma = 0.9
    g = gram(identity(1), 1, 1) / sigma**2
    eps_lower = projection_epsilon_lower(g, 1e-6, Direction.REMOVE)
    exact = Gaussian(sigma).epsilon(1e-6, Direction.REMOVE)
    assert exact.lower - 1e-9 <= eps_lower <= exact.upper
    assert eps_lower == pytest.approx(float(exact.upper), rel=1e-9)


@st.composite
def small_schemes(draw):
    b = draw(st.integers(2, 6))
    k = draw(st.integers(1, 2))
    family = draw(st.sampled_from(["identity", "bsr", "toeplitz"]))
    n = b * k
    if family == "identity":
        strategy = identity(n)
    elif family == "bsr":
        strategy = bsr(n, draw(st.integers(1, 3)))
    else:
        strategy = toeplitz(n, draw(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3)))
    sigma = draw(st.sampled_from([0.6, 1.0, 2.0]))
    return MatrixMechanism(Gaussian(sigma), strategy, b, k)


@settings(max_examples=12, deadline=None)
@given(small_schemes(), st.sampled_from(list(Direction)), st.sampled_from([0.5, 1.5]))
def test_renyi_upper_is_above_projection_lower_and_monte_carlo(scheme, direction, eps):
    """Done-when 4 (Rényi part): the Rényi δ(ε) and ε(δ) UPPER bounds are >= the projection LOWER
    bounds and >= the Monte Carlo lower confidence bound (99%). Catches a Rényi value that is too
    small (e.g. the uncorrected sign of eq. 5) or a projection that overshoots."""
    gamma = gram(scheme.strategy, scheme.batches, scheme.epochs) / scheme.pair.sigma**2
    mu = means(scheme.strategy, scheme.batches, scheme.epochs) / scheme.pair.sigma
    delta_upper = delta_upper_for(scheme, eps, direction).value
    lower = projection_delta_lower(gamma, eps, direction)
    estimate = mc_delta(mu, eps, direction, 1 << 13, seed=1)
    assert lower <= delta_upper
    assert estimate.lower <= delta_upper
    assert lower <= estimate.upper  # a rigorous lower bound never exceeds the truth (99% check)
    assert projection_epsilon_lower(gamma, 1e-3, direction) <= epsilon_upper_for(scheme, 1e-3, direction).value


def _certify(tmp_path, epsilon):
    claim = {
        "mechanism": {"name": "gaussian", "sigma": 0.8},
        "scheme": {"name": "matrix", "matrix": "bsr", "bands": 2, "batches": 10, "epochs": 2},
        "epsilon": epsilon,
        "delta": 1e-5,
    }
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(claim))
    return subprocess.run([sys.executable, "-m", "verifier", "certify", str(path)], capture_output=True, text=True, timeout=300)


def test_certify_bsr_claim_certified_at_renyi_and_violated_below_projection(tmp_path):
    """Done-when 5: CERTIFIED at the Rényi ε rounded up, VIOLATED below the projection lower bound."""
    scheme = MatrixMechanism(Gaussian(0.8), bsr(20, 2), 10, 2)
    gamma = gram(scheme.strategy, 10, 2) / 0.8**2
    eps_renyi = max(epsilon_upper_for(scheme, 1e-5, d).value for d in Direction)
    eps_lower = max(projection_epsilon_lower(gamma, 1e-5, d) for d in Direction)
    assert 0 < eps_lower < eps_renyi
    certified = _certify(tmp_path, math.ceil(eps_renyi * 1000) / 1000)
    assert certified.returncode == 0, certified.stdout + certified.stderr
    assert certified.stdout.startswith("CERTIFIED")
    violated = _certify(tmp_path, math.floor(eps_lower * 1000) / 1000 - 0.01)
    assert violated.returncode == 1, violated.stdout + violated.stderr
    assert "matrix-projection" in violated.stdout
