"""Monte Carlo evidence for Thm 3 / Eq. (8) (an independent estimate with a confidence interval),
the shuffle claim's lower bound against the existing samplers, and the labelled listing of every
check-in result in ``verifier bounds``."""

import json
import math

import numpy as np
import pytest

from verifier._types import Direction
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.montecarlo import estimate_delta
from verifier.pairs import Gaussian
from verifier.rdp.shuffle import shuffle_lower
from verifier.schemes import Allocation


def test_eq8_moment_agrees_with_monte_carlo():
    """E_{x~N(0,σ²I_n)}[((1/n) Σ_i e^{(2x_i − 1)/(2σ²)})^λ] = e^{(λ−1)G} (notes §7 item 20); the
    sample mean must be within 5 standard errors (a wrong argument order or constant is far off)."""
    n, sigma, lam, samples = 5, 2.0, 3, 400_000
    rng = np.random.default_rng(14)
    x = rng.normal(0.0, sigma, size=(samples, n))
    ratio = np.mean(np.exp((2 * x - 1) / (2 * sigma**2)), axis=1) ** lam
    want = math.exp((lam - 1) * float(shuffle_lower(Gaussian(sigma), n, [lam])[0]))
    assert abs(ratio.mean() - want) <= 5 * ratio.std() / math.sqrt(samples)


def test_shuffle_claim_lower_bound_sits_below_the_sampled_estimate():
    """The shuffle pair is the allocation remove pair: the existing sampler's 99% interval for its δ(ε)
    must reach the rigorous lower bound of the shuffle claim; a claim below it is VIOLATED, above it
    INCONCLUSIVE (no upper bound on the shuffled Gaussian is known), never CERTIFIED."""
    n, sigma, eps = 4, 0.8, 0.5
    claim = {"mechanism": {"name": "gaussian", "sigma": sigma, "sensitivity": 0.5}, "scheme": {"name": "shuffle", "users": n},
             "neighboring": "replace_one", "epsilon": eps, "delta": 1e-6}
    outcome = certify(parse_claim(claim))
    assert outcome.verdict is Verdict.VIOLATED
    lower = max(b.lower for b in outcome.delta.brackets.values())
    est = estimate_delta(Allocation(Gaussian(sigma, 1.0), n), [eps], [Direction.REMOVE], 200_000, seed=3, confidence=0.99)
    e = est.estimates[Direction.REMOVE][0]
    assert lower <= e.upper
    generous = certify(parse_claim({**claim, "delta": min(0.99, 2 * e.upper)}))
    assert generous.verdict is Verdict.INCONCLUSIVE


def test_bounds_lists_every_result_with_its_label(capsys):
    argv = ["bounds", "--sigma", "1", "--sensitivity", "2", "--scheme", "checkin", "--users", "50", "--rate", "0.1",
            "--aggregation", "sum", "--epsilon-max", "1", "--points", "2", "--method", "rdp", "--json"]
    assert main(argv) == 0
    results = {r["result"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    labels = {r["label"] for r in results.values()}
    assert {"UPPER", "LOWER", "published_formula"} <= labels
    printed = results["Thm 4 as printed (k from 1)"]["values"]
    restored = results["Thm 4 with the k = 0 term restored"]["values"]
    assert all(p <= r for p, r in zip(printed, restored))
