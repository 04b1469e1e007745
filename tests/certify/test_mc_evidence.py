"""The certificate carries Monte Carlo evidence beside the verdict even when cheaper rigorous
methods decided the claim (issue: Monte Carlo checkers — "the certifier's JSON carries the MC
evidence"); the estimates never change the verdict."""

import json

from verifier.cli import main

CLAIM = ["certify", "--mechanism", "gaussian", "--sigma", "1", "--epsilon", "4.3772", "--delta", "1e-5", "--json"]


def test_decided_claim_still_reports_monte_carlo_estimates(capsys):
    assert main(CLAIM) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["verdict"] == "CERTIFIED"
    estimates = [e for e in cert["estimates"] if e["method"] == "montecarlo"]
    assert {e["direction"] for e in estimates} == {"add", "remove"}
    for e in estimates:
        assert 0.0 <= e["lower"] <= e["estimate"] <= e["upper"] <= 1.0
        assert 0.0 < e["confidence"] < 1.0 and e["samples"] > 0
        # exact δ(4.3772) for σ = 1 is 9.9991e-6: a valid interval covers it with high probability
        assert e["lower"] <= 9.9991e-6 <= e["upper"]
