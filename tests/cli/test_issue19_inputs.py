"""The inputs of issue 19's first list, rerun: each exits 2 with one line or returns a verdict or a
bound with its reason; none crashes (status 4) and none exits 1 without a VIOLATED verdict.

Oracles: the Gaussian closed form δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) (scipy, independent
of verifier's ball arithmetic) and elementary limits (σ → 0: δ → 1; σ → ∞: ε(δ) → ln(1 − δ)).
Broken implementations these catch: the pre-issue code (ZeroDivisionError/OverflowError in
Gaussian.rho, log1p(−1) in the Poisson sampler, an unbounded ε(δ) bisection at σ = 1e-300, a
Monte Carlo estimate run outside the time budget, a claim reader that only knows UTF-8).
"""

from __future__ import annotations

import json
import math

import pytest

from verifier.cli import main

#: The claim flags shared by the cases: δ = 1e-5 at ε = 1.
CLAIM = ["--epsilon", "1", "--delta", "1e-5"]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _gaussian_delta(sigma: float, epsilon: float) -> float:
    from scipy.special import ndtr

    a, b = 1.0 / (2.0 * sigma), epsilon * sigma
    return float(ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b))


@pytest.mark.parametrize("sigma", ["1e-300", "1e-320"])
def test_vanishing_sigma_is_violated_with_reason(capsys, sigma):
    """σ → 0: δ(ε) → 1 for every finite ε, so the claim is VIOLATED (a lower bound near 1), and the
    float methods say why they did not run."""
    status, out, err = _run(capsys, "certify", "--sigma", sigma, *CLAIM, "--json")
    certificate = json.loads(out)
    assert status == 1 and certificate["verdict"] == "VIOLATED", err
    for entry in certificate["directions"].values():
        assert entry["delta_at_epsilon"]["lower"] > 1.0 - 1e-12
        assert entry["epsilon_at_delta"]["upper"] == "inf"
    assert any("overflows" in reason for reason in certificate["skipped"])


def test_huge_sigma_is_certified_near_the_limit(capsys):
    """σ → ∞: P ≈ Q, δ(ε) → max(0, 1 − e^ε), ε(δ) → ln(1 − δ) < 0."""
    status, out, _ = _run(capsys, "certify", "--sigma", "1e300", *CLAIM, "--json")
    certificate = json.loads(out)
    assert status == 0 and certificate["verdict"] == "CERTIFIED"
    limit = math.log1p(-1e-5)
    for entry in certificate["directions"].values():
        assert entry["delta_at_epsilon"]["upper"] <= 1e-300
        assert entry["epsilon_at_delta"]["lower"] <= limit + 1e-12 and entry["epsilon_at_delta"]["upper"] >= limit - 1e-12


def test_poisson_rate_one_is_the_composition(capsys):
    """Rate 1 samples every step: Poisson(σ, 1, t) is the t-fold composition, a Gaussian σ/√t."""
    status, out, err = _run(capsys, "delta", "--scheme", "poisson", "--rate", "1", "--steps", "4", "--sigma", "2",
                            "--epsilon", "0.5", "--method", "pld", "--direction", "remove", "--json")
    assert status == 0, err
    result = json.loads(out)
    exact = _gaussian_delta(2.0 / math.sqrt(4), 0.5)
    assert result["lower"] <= exact <= result["upper"]
    assert result["upper"] - result["lower"] <= 1e-3 * exact  # informative, not just [0, 1]


@pytest.mark.parametrize("rate", ["0", "-0.0", "2", "nan"])
def test_rate_message_matches_what_is_accepted(capsys, rate):
    status, _, err = _run(capsys, "certify", "--scheme", "poisson", "--rate", rate, "--steps", "10", "--sigma", "1", *CLAIM)
    assert status == 2 and err.count("\n") == 1
    assert "rate" in err and ("(0, 1]" in err or "NaN" in err)


def test_astronomical_steps_decline_with_reasons(capsys):
    """t = 1e30: far beyond the 2**32 compositions the PLD power's round-off bound covers; it says so,
    RDP still gives an upper bound."""
    status, out, err = _run(capsys, "certify", "--scheme", "poisson", "--rate", "0.01", "--steps", str(10**30),
                            "--sigma", "1", *CLAIM, "--json", "--time-budget", "30")
    certificate = json.loads(out)
    assert status == 3 and certificate["verdict"] == "INCONCLUSIVE", err
    # pld declines at once in the scheme's count (issue 41), before its cost estimate or window search
    assert any(r.startswith("δ: pld") and (f"the scheme has {10**30}" in r or "no Chernoff window" in r or "memory" in r) for r in certificate["skipped"])
    assert any("montecarlo" in reason and "skipped: needs" in reason for reason in certificate["skipped"])
    upper = certificate["directions"]["remove"]["epsilon_at_delta"]["upper"]
    assert 1e24 < upper < 1e27  # ε ≈ t·λ²·(e^{1/σ²} − 1)-scale: huge but finite


@pytest.mark.parametrize("times", [10**9, 10**20])
def test_huge_compositions_decide_by_the_closed_form_within_budget(capsys, times):
    """σ/√m: exact in ball arithmetic; Monte Carlo declines by its cost estimate instead of running."""
    status, out, err = _run(capsys, "certify", "--scheme", "composed", "--times", str(times), "--sigma", "1", *CLAIM,
                            "--time-budget", "5", "--json")
    certificate = json.loads(out)
    assert status == 1 and certificate["verdict"] == "VIOLATED", err
    assert "montecarlo" not in certificate["methods_run"]
    assert any("montecarlo" in reason and "skipped: needs" in reason for reason in certificate["skipped"])


def test_allocation_with_a_billion_steps_declines_instead_of_running_out_of_memory(capsys):
    status, out, err = _run(capsys, "certify", "--scheme", "allocation", "--steps", str(10**9), "--sigma", "1", *CLAIM,
                            "--method", "montecarlo", "--method", "rdp", "--time-budget", "10", "--json")
    certificate = json.loads(out)
    assert status == 0 and certificate["verdict"] == "CERTIFIED", err
    assert any("montecarlo" in reason and "skipped: needs" in reason for reason in certificate["skipped"])


def test_negative_epsilon_for_allocation_gives_bounds(capsys):
    """The analytic theorems are stated for ε >= 0; at ε < 0 they extend by δ(ε) <= δ(0) + 1 − e^ε
    (and δ(ε) >= 1 − e^ε, the total-variation floor every pair satisfies)."""
    status, out, err = _run(capsys, "delta", "--scheme", "allocation", "--steps", "10", "--sigma", "1", "--epsilon", "-1",
                            "--json", "--direction", "remove", "--method", "decomposition", "--method", "chua-lower")
    assert status == 0, err
    result = json.loads(out)
    assert -math.expm1(-1.0) * (1 - 1e-15) <= result["lower"] <= result["upper"] <= 1.0  # lower rounded down
    by_method = {(b["method"], b["side"]): b["value"] for b in result["bounds"]}
    assert by_method[("decomposition", "upper")] >= result["lower"]


def _claim_text() -> str:
    claim = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "single"}, "epsilon": 5.0,
             "delta": 1e-5, "source": "café"}
    return json.dumps(claim, ensure_ascii=False)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_claim_files_in_unicode_encodings_are_read(capsys, tmp_path, encoding):
    path = tmp_path / "claim.json"
    path.write_bytes(_claim_text().encode(encoding))
    status, out, err = _run(capsys, "certify", str(path))
    assert status == 0 and out.startswith("CERTIFIED"), err


def test_latin1_claim_file_is_refused_in_one_line(capsys, tmp_path):
    path = tmp_path / "claim.json"
    path.write_bytes(_claim_text().encode("latin-1"))
    status, _, err = _run(capsys, "certify", str(path))
    assert status == 2 and err.count("\n") == 1 and "UTF-8" in err and "0xe9" in err
