"""zCDP claims and ``verifier zcdp`` (issue 13, "Done when" line 3), through the CLI.

A Gaussian with noise σ is exactly ρ-zCDP for ρ = Δ²/(2σ²) (Steinke 2022, Lemma 12; D_α = αρ at
every order, Lemma 33.4), so a claim ρ = 1/(2σ²) must be CERTIFIED and ρ = 0.9/(2σ²) VIOLATED (its
D_α exceeds 0.9·α/(2σ²) at every order). The σ are chosen so 1/(2σ²) is a binary64 number: for
other σ the float 1/(2σ²) a user computes may lie an ulp below the true ρ, and verifier rightly
does not certify it.
"""

import json
import subprocess
import sys

import mpmath as mp
import pytest

from verifier.certify.certificate import schema
from verifier.cli import main

SIGMAS = (0.5, 1.0, 2.0)


def _validate(cert: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(schema()).validate(cert)


def _run(*args):
    return subprocess.run([sys.executable, "-m", "verifier", *args], capture_output=True, text=True, check=False)


def _gaussian_epsilon(rho, delta) -> mp.mpf:
    """Exact ε(δ) of the Gaussian with parameter ρ (Steinke 2022, Cor 8), by bisection in mpmath."""
    with mp.workdps(40):
        rho = mp.mpf(rho)

        def excess(e):
            s = mp.sqrt(2 * rho)
            return mp.ncdf(-(e - rho) / s) - mp.exp(e) * mp.ncdf(-(e + rho) / s) - delta

        return mp.findroot(excess, (mp.mpf(0), mp.mpf(200)), solver="bisect", tol=1e-30)


@pytest.mark.parametrize("sigma", SIGMAS)
def test_zcdp_claims_certified_at_rho_and_violated_below(sigma, capsys):
    rho = 1.0 / (2.0 * sigma**2)
    flags = ["certify", "--mechanism", "gaussian", "--sigma", repr(sigma)]
    assert main([*flags, "--claim-rho", repr(rho), "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    _validate(cert)
    assert cert["verdict"] == "CERTIFIED" and cert["claim"]["rho"] == rho and "epsilon" not in cert["claim"]
    assert {d: cert["directions"][d]["rho"]["upper"] for d in ("add", "remove")} == {"add": rho, "remove": rho}
    assert main([*flags, "--claim-rho", repr(0.9 * rho), "--json"]) == 1
    cert = json.loads(capsys.readouterr().out)
    _validate(cert)
    assert cert["verdict"] == "VIOLATED" and cert["directions"]["add"]["rho"]["lower"] > 0.9 * rho


def test_zcdp_claims_through_a_subprocess_and_a_claim_file(tmp_path):
    """σ = 2, 10 compositions: ρ = 10/8 = 1.25 (Thm 13) certified, 0.9·1.25 violated (exit 1)."""
    path = tmp_path / "claim.json"
    claim = {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "composed", "times": 10}, "rho": 1.25}
    path.write_text(json.dumps(claim))
    out = _run("certify", str(path))
    assert out.returncode == 0 and out.stdout.startswith("CERTIFIED"), out.stdout + out.stderr
    path.write_text(json.dumps({**claim, "rho": 0.9 * 1.25}))
    out = _run("certify", str(path))
    assert out.returncode == 1 and out.stdout.startswith("VIOLATED"), out.stdout + out.stderr


def test_approx_dp_with_positive_delta0_is_not_zcdp(capsys):
    """D_α = +∞ when δ₀ > 0, so no ρ holds."""
    assert main(["certify", "--mechanism", "approx_dp", "--epsilon0", "1", "--delta0", "1e-9", "--claim-rho", "1000"]) == 1
    assert "ρ >= inf" in capsys.readouterr().out


@pytest.mark.parametrize("sigma", SIGMAS)
def test_zcdp_command_prints_rho_and_both_conversions(sigma):
    out = _run("zcdp", "--sigma", repr(sigma), "--delta", "1e-5", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    rho = 1.0 / (2.0 * sigma**2)
    assert got["rho"] == rho
    exact = _gaussian_epsilon(rho, 1e-5)
    assert exact <= got["epsilon_prop14"] <= got["epsilon_standard"]
    with mp.workdps(40):
        assert got["epsilon_standard"] == pytest.approx(float(rho + 2 * mp.sqrt(rho * mp.log(mp.mpf(10) ** 5))), rel=1e-13)
    text = _run("zcdp", "--sigma", repr(sigma), "--delta", "1e-5", "--epsilon", "3")
    assert text.returncode == 0 and text.stdout.startswith(f"rho <= {rho!r}") and text.stdout.count("\n") == 5


@pytest.mark.parametrize(
    "args, field",
    [(["certify", "--sigma", "1", "--claim-rho", "0"], "rho"),
     (["certify", "--sigma", "1", "--claim-rho", "-0.5"], "rho"),
     (["certify", "--sigma", "1", "--claim-rho", "0.5", "--epsilon", "1", "--delta", "1e-5"], "rho"),
     (["zcdp", "--sigma", "1", "--scheme", "poisson", "--rate", "0.1", "--steps", "3"], "scheme"),
     (["zcdp", "--mechanism", "approx_dp", "--epsilon0", "1", "--delta0", "1.5"], "delta0"),
     (["zcdp", "--sigma", "1", "--delta", "0"], "delta")],
)
def test_bad_zcdp_input_exits_2_with_one_line(args, field, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{field}=" in lines[0], err


def test_zcdp_claim_without_a_known_rho_is_inconclusive(capsys):
    """Poisson subsampling has no closed-form ρ here and no method bounds its ρ: exit 3, and every
    method that ran says why it gave no bound on ρ (none is silently dropped)."""
    argv = ["certify", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "10", "--claim-rho", "100", "--json"]
    assert main(argv) == 3
    cert = json.loads(capsys.readouterr().out)
    _validate(cert)
    assert cert["verdict"] == "INCONCLUSIVE" and cert["bounds"] == []
    assert cert["methods_run"] and all(any(s.startswith(f"ρ: {m} (") for s in cert["skipped"]) for m in cert["methods_run"])


# ---- ρ of pure-DP pairs as sup_α D_α/α (issue 33, item 5) ---------------------------------------


def _renyi_of_masses(p, q, alpha) -> mp.mpf:
    """D_α(P‖Q) of a finite pair from its masses (the definition, mpmath)."""
    return mp.log(mp.fsum(pi**alpha * qi ** (1 - alpha) for pi, qi in zip(p, q))) / (alpha - 1)


def test_laplace_rho_is_its_kl_divergence():
    """Laplace scale 1: ρ* = sup_α D_α/α = KL = ε0 + e^{−ε0} − 1 = 1/e (the limit α → 1; Prop 16's
    ε0²/2 = 0.5 is far above). A bound that stopped at ε0²/2 or a lower grid that missed α → 1 fails."""
    from verifier.pairs import Laplace
    from verifier.rdp.zcdp import rho_upper
    from verifier.schemes import Single

    truth = float(mp.e**-1)
    upper = rho_upper(Single(Laplace(1.0)))
    assert truth <= upper <= truth * (1 + 2e-4)
    assert main(["certify", "--mechanism", "laplace", "--scale", "1", "--claim-rho", repr(truth * 1.01)]) == 0
    assert main(["certify", "--mechanism", "laplace", "--scale", "1", "--claim-rho", repr(truth * 0.99)]) == 1


@pytest.mark.parametrize(("p", "q"), [((0.01, 0.99), (0.0001, 0.9999)), ((0.6, 0.3, 0.1), (0.2, 0.3, 0.5))])
def test_sup_renyi_ratio_brackets_a_dense_mpmath_maximum(p, q):
    """The first pair peaks at an interior order (a rare outcome with likelihood ratio 100): its D_α/α
    rises from the KL divergence, so a cell bound that only looked at the cell's ends would undercut
    the maximum; the second is asymmetric (both directions count). Reference: the maximum of D_α/α over
    a dense grid of α in (1, 400] in both directions, from the masses, with the tail D_∞/400 below it."""
    from verifier.pairs import DiscretePair
    from verifier.rdp.zcdp import sup_renyi_ratio

    with mp.workdps(30):
        P, Q = [mp.mpf(v) for v in p], [mp.mpf(v) for v in q]
        grid = [1 + mp.mpf(10) ** (x / 50) for x in range(-300, 131)]
        best = max(max(_renyi_of_masses(P, Q, a) / a, _renyi_of_masses(Q, P, a) / a) for a in grid)
        d_inf = max(abs(mp.log(a / b)) for a, b in zip(P, Q))
    got = sup_renyi_ratio(DiscretePair(p, q), float(d_inf) * (1 + 1e-15))
    assert got.lower <= float(best) * (1 + 1e-4)  # the grid may miss the peak by a little
    assert float(best) * (1 - 1e-12) <= got.upper <= got.lower * (1 + 2e-4)
    from verifier.rdp.zcdp import rho_upper
    from verifier.schemes import Single

    assert float(best) * (1 - 1e-12) <= rho_upper(Single(DiscretePair(p, q))) <= got.upper


def test_composed_randomized_response_rho_adds():
    """T = 20 steps of RR ε0 = 0.3: ρ* = 20·KL = 20·ε0·tanh(ε0/2) (additivity of D_α, Lemma 33.2)."""
    from verifier.pairs import RandomizedResponse
    from verifier.rdp.zcdp import rho_upper
    from verifier.schemes import Composed, Single

    truth = float(20 * mp.mpf(0.3) * mp.tanh(mp.mpf(0.3) / 2))
    assert truth <= rho_upper(Composed(Single(RandomizedResponse(0.3)), 20)) <= truth * (1 + 2e-4)
