"""Trade-off claims ("TPR at FPR α is at most τ") decided like (ε, δ) claims, and ``verifier tradeoff``.

References are independent of verifier's conversion: the Gaussian-DP closed form Φ(Φ⁻¹(α) + μ) with
μ = √T/σ for T composed Gaussian steps (Dong, Roth & Su 2022, Cor 3.3), in mpmath. The Done-when-3
claims are placed 1% outside the certified bracket (whatever its values), so they also pin the rule:
an upper bound <= τ certifies, a lower bound > τ refutes, in every required direction.
"""

from __future__ import annotations

import json

import jsonschema
import mpmath as mp
import pytest

from verifier._types import Direction, Quantity
from verifier.certify.certificate import schema, to_certificate
from verifier.certify.claim import parse_claim
from verifier.certify.portfolio import collect_bounds
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.errors import InvalidArgument

GAUSSIAN = {"mechanism": {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0}, "scheme": {"name": "composed", "times": 4}}
POISSON = {"mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0}, "scheme": {"name": "poisson", "rate": 0.05, "steps": 50}}
FPR = 1e-2


def _gdp_tpr(alpha: float, mu: float) -> float:
    with mp.workdps(40):
        return float(mp.ncdf(-mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha)) + mu))


@pytest.fixture(scope="module")
def brackets():
    out = {}
    for name, base in (("gaussian", GAUSSIAN), ("poisson", POISSON)):
        claim = parse_claim({**base, "fpr": FPR, "tpr": 0.5})
        out[name] = collect_bounds(claim.model, Quantity.TPR, FPR, (Direction.ADD, Direction.REMOVE), only=["pld"]).brackets
    return out


def test_composed_gaussian_bracket_contains_the_gdp_closed_form(brackets):
    reference = _gdp_tpr(FPR, 1.0)  # μ = √4 / 2
    for bracket in brackets["gaussian"].values():
        assert bracket.lower <= reference <= bracket.upper
        assert bracket.relative_width < 1e-3


def test_exact_method_brackets_the_closed_form():
    """The exact method (closed-form δ in ball arithmetic on an ε grid, Lemma 4) for composed Gaussians."""
    claim = parse_claim({**GAUSSIAN, "fpr": FPR, "tpr": 0.5})
    got = collect_bounds(claim.model, Quantity.TPR, FPR, (Direction.REMOVE,), only=["exact"]).brackets[Direction.REMOVE]
    reference = _gdp_tpr(FPR, 1.0)
    assert got.lower <= reference <= got.upper and got.relative_width < 5e-3


@pytest.mark.parametrize("name", ["gaussian", "poisson"])
@pytest.mark.parametrize("neighboring", ["add", "remove", "add_or_remove"])
def test_one_percent_outside_the_bracket_decides_the_claim(brackets, name, neighboring):
    """Done-when 3: τ 1% above the upper end is CERTIFIED, 1% below the lower end VIOLATED."""
    base = GAUSSIAN if name == "gaussian" else POISSON
    wanted = (Direction.ADD, Direction.REMOVE) if neighboring == "add_or_remove" else (Direction(neighboring),)
    upper = max(float(brackets[name][d].upper) for d in wanted)
    lower = max(float(brackets[name][d].lower) for d in wanted)
    above = certify(parse_claim({**base, "neighboring": neighboring, "fpr": FPR, "tpr": 1.01 * upper}), only=["pld"])
    below = certify(parse_claim({**base, "neighboring": neighboring, "fpr": FPR, "tpr": 0.99 * lower}), only=["pld"])
    assert above.verdict is Verdict.CERTIFIED, above.decision.reasons
    assert below.verdict is Verdict.VIOLATED, below.decision.reasons


def test_certificate_follows_the_schema_and_round_trips_the_claim():
    outcome = certify(parse_claim({**GAUSSIAN, "fpr": FPR, "tpr": 0.2}), only=["pld"])
    certificate = to_certificate(outcome)
    jsonschema.validate(certificate, schema())
    assert certificate["claim"]["fpr"] == FPR and certificate["claim"]["tpr"] == 0.2
    assert set(certificate["directions"]["add"]["tpr_at_fpr"]) >= {"lower", "upper"}
    curve = certificate["tradeoff"]
    assert curve["fpr"] == [1e-4, 1e-3, 1e-2, 0.1]
    for direction in ("add", "remove"):
        for alpha, low, high in zip(curve["fpr"], curve[direction]["tpr_lower"], curve[direction]["tpr_upper"]):
            assert low <= _gdp_tpr(alpha, 1.0) <= high and high - low < 1e-3 * high
    assert curve["reading"].startswith("An attacker who wrongly flags at most 0.01 of non-members")
    assert parse_claim(outcome.claim.to_dict()) == outcome.claim


@pytest.mark.parametrize(
    ("extra", "field"),
    [({"tpr": 0.2}, "fpr"), ({"fpr": 0.01}, "tpr"), ({"fpr": 0.01, "tpr": 0.2, "epsilon": 1.0}, "tpr"), ({"fpr": 1.5, "tpr": 0.2}, "fpr"),
     ({"fpr": 0.01, "tpr": -0.1}, "tpr")],
)
def test_malformed_tradeoff_claims_name_the_field(extra, field):
    with pytest.raises(InvalidArgument) as error:
        parse_claim({**GAUSSIAN, **extra})
    assert error.value.name == field


def test_certify_cli_exit_statuses(capsys):
    flags = ["certify", "--sigma", "2", "--scheme", "composed", "--times", "4", "--fpr", "0.01"]
    reference = _gdp_tpr(0.01, 1.0)
    assert main(flags + ["--claim-tpr", str(1.01 * reference), "--method", "pld"]) == 0
    assert main(flags + ["--claim-tpr", str(0.99 * reference), "--method", "pld"]) == 1
    assert main(flags + ["--claim-tpr", "2"]) == 2
    assert main(["certify", "--sigma", "2", "--claim-tpr", "0.5"]) == 2
    assert "trade-off" in capsys.readouterr().out


@pytest.mark.slow  # ~4 s: matplotlib and a 36-point curve
def test_report_shows_the_curve_and_a_one_sentence_reading(tmp_path):
    pytest.importorskip("matplotlib")
    report = tmp_path / "r.html"
    status = main(["certify", "--sigma", "2", "--scheme", "composed", "--times", "4", "--fpr", "0.01", "--claim-tpr", "0.5", "--method", "pld", "--report", str(report)])
    assert status == 0
    page = report.read_text(encoding="utf-8")
    assert "Trade-off curve (TPR at FPR)" in page and "Reading: An attacker who wrongly flags at most 0.01" in page
    assert "data:image/png;base64," in page


def test_tradeoff_command_table_json_and_bad_input(capsys, tmp_path):
    assert main(["tradeoff", "--sigma", "2", "--scheme", "composed", "--times", "4", "--fpr", "0.001,0.01", "--json", "--method", "pld"]) == 0
    payload = json.loads(capsys.readouterr().out)
    points = {p["fpr"]: p for p in payload["points"]}
    for alpha in (0.001, 0.01):
        tpr, beta = points[alpha]["tpr"], points[alpha]["beta"]
        reference = _gdp_tpr(alpha, 1.0)
        assert tpr["lower"] <= reference <= tpr["upper"]
        assert beta["lower"] <= 1.0 - reference <= beta["upper"]
    assert main(["tradeoff", "--sigma", "2", "--method", "pld"]) == 0
    out = capsys.readouterr().out
    assert all(f"{a:g}" in out for a in (1e-4, 1e-3, 1e-2, 0.1))
    assert main(["tradeoff", "--sigma", "2", "--fpr", "1.5"]) == 2
    assert main(["tradeoff", "--sigma", "2", "--steps", "3"]) == 2  # an option the scheme does not use


def test_tradeoff_monte_carlo_estimate_beside_the_bracket(capsys):
    assert main(["tradeoff", "--sigma", "2", "--scheme", "composed", "--times", "4", "--fpr", "0.01", "--direction", "remove",
                 "--mc-samples", "10000", "--seed", "4", "--json", "--method", "pld"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["points"]
    (estimate,) = point["estimates"]
    assert estimate["quantity"] == "tpr" and estimate["lower"] <= _gdp_tpr(0.01, 1.0) <= estimate["upper"]
    assert main(["tradeoff", "--sigma", "2", "--fpr", "1e-4", "--mc-samples", "100", "--method", "pld"]) == 0
    assert "no estimate at FPR 0.0001" in capsys.readouterr().out
    assert main(["tradeoff", "--sigma", "2", "--mc-samples", "-1"]) == 2


@pytest.mark.slow  # ~3 s: matplotlib
def test_tradeoff_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "t.png"
    assert main(["tradeoff", "--sigma", "2", "--fpr", "0.01", "--plot", str(target)]) == 0
    assert target.stat().st_size > 1000


def test_checkin_lower_bound_on_tpr_is_below_the_closed_form_and_close():
    """One user checking in with probability 1 releases N(Δ, σ²) vs N(0, σ²): μ = 1, so the specific
    pair's DOMINATED PLD must give a TPR lower bound below Φ(Φ⁻¹(α) + 1) and close to it."""
    from verifier.pairs import Gaussian
    from verifier.schemes import CheckIn

    scheme = CheckIn(Gaussian(1.0), 1, 1.0)
    got = collect_bounds(scheme, Quantity.TPR, FPR, (Direction.REMOVE,), only=["checkin-lower"]).brackets[Direction.REMOVE]
    reference = _gdp_tpr(FPR, 1.0)
    assert reference * (1 - 1e-3) <= got.lower <= reference
