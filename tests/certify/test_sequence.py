"""Heterogeneous runs: Sequence(phases) through claims, PLD (both sides), RDP and zCDP.

Oracles: Google dp_accounting (PLDs of the two Poisson-subsampled Gaussian phases composed with its
own ``.compose()``; RDP of the phases added by its accountant), and the closed form of a composition
of Gaussians with different σ (a Gaussian with 1/σ² = Σ 1/σ_i², Steinke 2022, Cor 10 applied to
the product of shifted Gaussians).
"""

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

from verifier._types import Direction, Side
from verifier.certify.certificate import schema, to_certificate
from verifier.certify.claim import load_claim, parse_claim
from verifier.certify.methods.exact import ExactPair
from verifier.certify.methods.pld import PLDMethod
from verifier.certify.methods.rdp import RenyiAccountant
from verifier.certify.methods.zcdp import ZCDP
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import Gaussian, Laplace
from verifier.rdp import curve_for
from verifier.rdp.zcdp import rho_upper
from verifier.schemes import Composed, Poisson, PoissonReplaceOne, Sequence, Single

#: The two-phase run of the issue, scaled down to run in seconds: 300 steps at σ = 1.1, rate 0.02,
#: then 100 steps at σ = 0.9, rate 0.05.
TWO_PHASES = Sequence((Poisson(Gaussian(1.1), 0.02, 300), Poisson(Gaussian(0.9), 0.05, 100)))
DELTA = 1e-5
#: dp_accounting's value discretisation (its default is 1e-4 as well).
PEER_INTERVAL = 1e-4


def _bracket(bounds):
    by_side = {b.side: b.value for b in bounds}
    return by_side[Side.LOWER], by_side[Side.UPPER]


def _dp_accounting_epsilons():
    """ε(δ) per direction of the two phases' pessimistic (connect-the-dots) PLDs composed by hand."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    phases = [
        pld_lib.from_gaussian_mechanism(p.pair.sigma, sampling_prob=p.rate, value_discretization_interval=PEER_INTERVAL).self_compose(p.steps)
        for p in TWO_PHASES.phases
    ]
    run = phases[0].compose(phases[1])
    return {Direction.REMOVE: run._pmf_remove.get_epsilon_for_delta(DELTA), Direction.ADD: run._pmf_add.get_epsilon_for_delta(DELTA)}


def test_two_phase_poisson_pld_bracket_contains_the_peer_composition_and_beats_rdp():
    """Catches: composing only one phase, composing DOMINATING with DOMINATED, a phase built on its
    own grid step, or the phases' directions mixed up (the two directions differ by ~2 here)."""
    pytest.importorskip("dp_accounting")
    peer = _dp_accounting_epsilons()
    for direction in (Direction.ADD, Direction.REMOVE):
        lower, upper = _bracket(PLDMethod().epsilon_bounds(TWO_PHASES, DELTA, direction))
        assert lower <= peer[direction] <= upper, (direction, lower, peer[direction], upper)
        (rdp,) = [b.value for b in RenyiAccountant().epsilon_bounds(TWO_PHASES, DELTA, direction)]
        assert upper < rdp and upper - lower < rdp - upper, (direction, lower, upper, rdp)


def test_rdp_curve_is_the_sum_of_the_peer_phase_curves():
    """Catches: a phase dropped or counted twice, or its steps not multiplied (dp_accounting's RDP
    accountant composes the two Poisson-sampled Gaussian events; integer orders are exact in both)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    orders = [2.0, 3.0, 5.0, 8.0, 16.0, 32.0]
    accountant = rdp_privacy_accountant.RdpAccountant(orders)
    for p in TWO_PHASES.phases:
        accountant.compose(dp_event.PoissonSampledDpEvent(p.rate, dp_event.GaussianDpEvent(p.pair.sigma)), p.steps)
    curve = curve_for(TWO_PHASES, orders, Direction.REMOVE)
    assert curve.values == pytest.approx(accountant._rdp, rel=1e-9)
    assert curve.exact.all()


def test_composition_theorems_sum_over_heterogeneous_approx_dp_phases():
    """Steinke 2022, Thm 22 with ε_j, δ_j differing between phases (50 steps of (0.1, 1e-8)-DP, then
    50 of (0.2, 2e-8)-DP), against the formula evaluated at 50 digits; both theorems lie above the PLD
    bracket of the same run (the optimal composition). Catches: only one phase summed, Tε² in place
    of Σε_j², Σδ_j not subtracted."""
    from verifier.certify.methods.composition import AdvancedComposition, BasicComposition
    from verifier.pairs import ApproxDP

    mpmath = pytest.importorskip("mpmath")
    run = Sequence((Composed(Single(ApproxDP(0.1, 1e-8)), 50), Composed(Single(ApproxDP(0.2, 2e-8)), 50)))
    with mpmath.workdps(50):
        s = 50 * mpmath.mpf("0.1") ** 2 + 50 * mpmath.mpf("0.2") ** 2
        rest = mpmath.mpf(DELTA) - 50 * mpmath.mpf("1e-8") - 50 * mpmath.mpf("2e-8")
        reference = s / 2 + mpmath.sqrt(2 * s * mpmath.log(1 / rest))
    assert AdvancedComposition().supports(run) and not AdvancedComposition().supports(GAUSSIANS)
    (advanced,) = AdvancedComposition().epsilon_bounds(run, DELTA, Direction.REMOVE)
    assert reference <= advanced.value <= reference * (1 + 1e-12)
    (basic,) = BasicComposition().epsilon_bounds(run, DELTA, Direction.REMOVE)
    assert basic.value == pytest.approx(15.0, rel=1e-12) and basic.value >= 15.0
    lower, upper = _bracket(PLDMethod().epsilon_bounds(run, DELTA, Direction.REMOVE))
    assert upper < advanced.value < basic.value

def test_phase_order_does_not_matter_and_equal_phases_match_composed():
    """Composition commutes (Steinke 2022, Thm 9: the PLD of a product is a convolution), so the
    brackets of (A, B) and (B, A) must intersect, and two equal phases must agree with Composed(·, 2).
    Catches a builder that keeps only the first or last phase, or one side composed in the wrong order
    with the other side (directed rounding makes the brackets differ slightly, never disjoint)."""
    a, b = Composed(Single(Laplace(1.0)), 3), Poisson(Gaussian(1.0), 0.2, 5)
    method = PLDMethod()
    for direction in (Direction.ADD, Direction.REMOVE):
        ab = _bracket(method.delta_bounds(Sequence((a, b)), 1.0, direction))
        ba = _bracket(method.delta_bounds(Sequence((b, a)), 1.0, direction))
        assert max(ab[0], ba[0]) <= min(ab[1], ba[1]), (direction, ab, ba)
        twice = _bracket(method.delta_bounds(Sequence((b, b)), 1.0, direction))
        composed = _bracket(method.delta_bounds(Poisson(Gaussian(1.0), 0.2, 10), 1.0, direction))
        assert max(twice[0], composed[0]) <= min(twice[1], composed[1]), (direction, twice, composed)
        alone = _bracket(method.delta_bounds(a, 1.0, direction))
        assert ab[0] > alone[1]  # the second phase adds privacy loss

GAUSSIANS = Sequence((Single(Gaussian(2.0)), Composed(Single(Gaussian(3.0)), 4), Single(Gaussian(1.5, 0.5))))
#: 1/σ_eff² = Σ Δ_i²/σ_i² of the phases above.
GAUSSIANS_SIGMA = 1.0 / math.sqrt(1 / 4 + 4 / 9 + 0.25 / 2.25)


@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE])
def test_gaussian_phases_bracket_the_equivalent_gaussian(direction):
    """Composition of Gaussians with different σ (and sensitivities) is the Gaussian of
    1/σ² = Σ Δ_i²/σ_i²; its exact ε(δ) must lie in the PLD bracket and below the RDP and zCDP
    bounds, and ρ is the sum of the phases' ρ (Steinke 2022, Lemma 12, Thm 13)."""
    exact = Gaussian(GAUSSIANS_SIGMA).epsilon(DELTA, direction)
    lower, upper = _bracket(PLDMethod().epsilon_bounds(GAUSSIANS, DELTA, direction))
    assert lower <= exact.lower and exact.upper <= upper
    assert upper - lower < 1e-2 * upper
    (rdp,) = [b.value for b in RenyiAccountant().epsilon_bounds(GAUSSIANS, DELTA, direction)]
    assert exact.upper <= rdp <= 1.2 * exact.upper
    assert rho_upper(GAUSSIANS) == pytest.approx(1 / (2 * GAUSSIANS_SIGMA**2), rel=1e-12)
    assert rho_upper(GAUSSIANS) >= 0.5 / 4 + 4 * 0.5 / 9 + 0.125 / 2.25
    for bound in ZCDP().epsilon_bounds(GAUSSIANS, DELTA, direction):
        assert bound.value >= exact.upper


@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE])
def test_exact_method_brackets_the_mpmath_closed_form_of_gaussian_phases(direction):
    """The Gaussian of μ² = Σ Δ_i²/σ_i² (exact rational 1/4 + 4/9 + 1/9 here) has
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018, Thm 8), evaluated at 50 digits.
    Catches: a phase's multiplicity or sensitivity dropped, σ's added instead of 1/σ²'s."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.mpf(1) / 4 + mpmath.mpf(4) / 9 + mpmath.mpf(1) / 9)
        eps = mpmath.mpf(3)
        reference = mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)
    assert ExactPair().supports(GAUSSIANS)
    lower, upper = _bracket(ExactPair().delta_bounds(GAUSSIANS, 3.0, direction))
    assert lower <= reference <= upper
    assert upper - lower <= 1e-12 * upper
    assert not ExactPair().supports(Sequence((Single(Gaussian(1.0)), Single(Laplace(1.0)))))


def test_monte_carlo_interval_covers_the_exact_delta_of_gaussian_phases():
    """The sampler sums one independent loss per phase; a phase skipped or drawn under the wrong
    measure moves the 99% interval off the closed form (fixed seed: deterministic)."""
    from verifier.montecarlo.runner import estimate_delta

    result = estimate_delta(GAUSSIANS, [1.0], [Direction.REMOVE, Direction.ADD], 40_000, seed=1)
    for direction, (estimate,) in result.estimates.items():
        lower, upper = _bracket(ExactPair().delta_bounds(GAUSSIANS, 1.0, direction))
        assert estimate.lower <= lower and upper <= estimate.upper, (direction, estimate, lower)


def test_a_phase_without_rho_leaves_the_sequence_without_one():
    """Catches: skipping the Poisson phase's (unknown) ρ and reporting the Gaussian phase's alone."""
    run = Sequence((Single(Gaussian(1.0)), Poisson(Gaussian(1.0), 0.1, 10)))
    with pytest.raises(NotApplicable):
        rho_upper(run)
    assert not ZCDP().supports(run)
    assert ZCDP().supports(Sequence((Single(Gaussian(1.0)), Composed(Single(Laplace(1.0)), 2))))


def _claim(scheme, **top):
    return {"scheme": scheme, "epsilon": 3.0, "delta": DELTA, **top}


GOOD = {"name": "gaussian", "sigma": 1.0}


SEQUENCE = {
    "name": "sequence",
    "phases": [
        {"name": "composed", "times": 4, "mechanism": {"name": "gaussian", "sigma": 3.0}},
        {"name": "single"},
    ],
}


def test_phases_inherit_the_claims_mechanism_and_round_trip():
    claim = parse_claim(_claim(SEQUENCE, mechanism={"name": "gaussian", "sigma": 2.0}))
    assert claim.model == Sequence((Composed(Single(Gaussian(3.0)), 4), Single(Gaussian(2.0))))
    assert claim.scheme["phases"][1]["mechanism"] == {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0}
    assert parse_claim(claim.to_dict()) == claim
    own = {"name": "sequence", "phases": [dict(p, mechanism={"name": "laplace", "scale": 1.0}) for p in SEQUENCE["phases"]]}
    claim = parse_claim(_claim(own))  # every phase states its own: no claim-level mechanism needed
    assert claim.mechanism is None and "mechanism" not in claim.to_dict()
    assert parse_claim(claim.to_dict()) == claim


def test_replace_one_is_modelled_phase_by_phase():
    claim = parse_claim(_claim(SEQUENCE, mechanism={"name": "laplace", "scale": 1.0}, neighboring="replace_one"))
    assert claim.model == Sequence((Composed(Single(Gaussian(3.0, 2.0)), 4), Single(Laplace(1.0, 2.0))))
    poisson = {"name": "sequence", "phases": [{"name": "single"}, {"name": "poisson", "rate": 0.1, "steps": 3}]}
    claim = parse_claim(_claim(poisson, mechanism={"name": "gaussian", "sigma": 1.0}, neighboring="replace_one"))
    assert claim.model.phases[1] == PoissonReplaceOne(Gaussian(1.0), 0.1, 3)  # the substitution pair, not doubling
    bad = {"name": "sequence", "phases": [{"name": "single"}, {"name": "allocation", "steps": 10}]}
    with pytest.raises(InvalidArgument, match=r"scheme\.phases\[1\] 'allocation'") as info:
        parse_claim(_claim(bad, mechanism={"name": "gaussian", "sigma": 1.0}, neighboring="replace_one"))
    assert info.value.name == "neighboring"



@pytest.mark.parametrize(
    "scheme, top, field",
    [
        ({"name": "sequence", "phases": []}, {"mechanism": GOOD}, "scheme.phases"),
        ({"name": "sequence"}, {"mechanism": GOOD}, "scheme.phases"),
        ({"name": "sequence", "phases": {"name": "single"}}, {"mechanism": GOOD}, "scheme.phases"),
        ({"name": "sequence", "phases": [{"name": "single"}, {"name": "poisson", "rate": 1.5, "steps": 3}]}, {"mechanism": GOOD}, "scheme.phases[1].rate"),
        ({"name": "sequence", "phases": [{"name": "poisson", "rate": 0.1}]}, {"mechanism": GOOD}, "scheme.phases[0].steps"),
        ({"name": "sequence", "phases": [{"name": "sequence", "phases": [{"name": "single"}]}]}, {"mechanism": GOOD}, "scheme.phases[0].name"),
        ({"name": "sequence", "phases": [3]}, {"mechanism": GOOD}, "scheme.phases[0]"),
        ({"name": "sequence", "phases": [{"name": "single", "times": 2}]}, {"mechanism": GOOD}, "scheme.phases[0].times"),
        ({"name": "sequence", "phases": [{"name": "single", "mechanism": {"name": "gaussian"}}]}, {}, "scheme.phases[0].mechanism.sigma"),
        ({"name": "sequence", "phases": [{"name": "single"}]}, {}, "scheme.phases[0].mechanism"),
        ({"name": "sequence", "phases": [{"name": "single", "mechanism": GOOD}]}, {"mechanism": {"name": "gaussian", "sigma": -1}}, "mechanism.sigma"),
        ({"name": "single", "phases": []}, {"mechanism": GOOD}, "scheme.phases"),
        ({"name": "single"}, {}, "mechanism"),
    ],
)
def test_malformed_sequences_name_the_field(scheme, top, field):
    with pytest.raises(InvalidArgument) as info:
        parse_claim(_claim(scheme, **top))
    assert info.value.name == field
    assert "\n" not in str(info.value)


def test_scheme_rejects_empty_and_nested_phase_lists():
    with pytest.raises(InvalidArgument, match="at least one phase"):
        Sequence(())
    with pytest.raises(InvalidArgument, match="must not be a Sequence") as info:
        Sequence((Single(Gaussian(1.0)), Sequence((Single(Gaussian(1.0)),))))
    assert info.value.name == "phases[1]"
    with pytest.raises(InvalidArgument, match="must be a scheme"):
        Sequence((Gaussian(1.0),))


def test_certify_bounds_and_the_certificate_on_a_sequence_claim(tmp_path, capsys):
    """The CLI decides a sequence claim (exit status = verdict), writes its HTML report, ``bounds``
    tabulates it, and the certificate validates against the packaged schema."""
    own = {"name": "sequence", "phases": [dict(p, mechanism={"name": "gaussian", "sigma": 3.0}) for p in SEQUENCE["phases"]]}
    path = tmp_path / "claim.json"
    # five σ = 3 steps: a Gaussian with σ = 3/√5; its ε(1e-5) is 3.12465, so ε = 3.2 holds and ε = 3.0 fails
    for epsilon, verdict in ((3.2, Verdict.CERTIFIED), (3.0, Verdict.VIOLATED)):
        path.write_text(json.dumps(_claim(own, epsilon=epsilon)))
        assert main(["certify", str(path)]) == verdict.exit_status
        assert capsys.readouterr().out.startswith(f"{verdict.value}: sequence(phases=[composed(times=4, mechanism=gaussian(sigma=3")
    report = tmp_path / "report.html"
    assert main(["certify", str(path), "--report", str(report)]) == Verdict.VIOLATED.exit_status
    assert "sequence: gaussian under composed, then gaussian under single" in report.read_text(encoding="utf-8")
    assert main(["bounds", str(path), "--points", "2"]) == 0
    assert "pld add upper" in capsys.readouterr().out
    jsonschema = pytest.importorskip("jsonschema")
    cert = to_certificate(certify(parse_claim(_claim(own, epsilon=3.2))))
    jsonschema.Draft202012Validator(schema()).validate(json.loads(json.dumps(cert)))
    assert cert["claim"]["scheme"]["phases"][1]["mechanism"]["sigma"] == 3.0


def test_cli_empty_phase_list_exits_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(_claim({"name": "sequence", "phases": []}, mechanism=GOOD)))
    assert main(["certify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scheme.phases=[]" in err


def test_a_phase_monte_carlo_cannot_sample_leaves_the_sequence_to_the_rigorous_methods():
    """A check-in phase: Monte Carlo cannot sample it, so it declines the whole sequence (before, it
    claimed support and certify crashed); RDP bounds it through the check-in curve (Eq. (5)), no
    method gives a lower bound, so a claim at moderate ε is INCONCLUSIVE with a bracket from 0. (Since
    certify refines only until a verdict is settled, RDP stops at its integer orders once its floor
    shows that no order reaches the claimed δ: the δ(ε) upper end may then be the trivial 1, and what
    RDP proves through the check-in curve shows as a finite upper end on ε(δ).)"""
    from verifier.certify.methods.montecarlo import MonteCarlo

    claim = parse_claim(
        _claim(
            {"name": "sequence", "phases": [{"name": "single"}, {"name": "checkin", "users": 10, "rate": 0.5}]},
            mechanism=GOOD,
            neighboring="replace_one",
        )
    )
    assert not MonteCarlo().supports(claim.model) and MonteCarlo().supports(GAUSSIANS)
    outcome = certify(claim)
    assert outcome.verdict is Verdict.INCONCLUSIVE
    assert outcome.delta.ran == ("rdp",)
    assert all(b.lower == 0.0 and 1e-5 < b.upper <= 1.0 for b in outcome.delta.brackets.values())
    assert outcome.epsilon.ran == ("rdp",)
    assert all(3.0 < b.upper < math.inf for b in outcome.epsilon.brackets.values())
    assert all("lies in the best bracket [0, " in reason for reason in outcome.decision.reasons)


@pytest.mark.parametrize("factor, verdict", [(1.0, Verdict.CERTIFIED), (0.9, Verdict.VIOLATED)])
def test_zcdp_claim_about_gaussian_phases(factor, verdict):
    """ρ of the phases of GAUSSIANS is Σ m_i Δ_i²/(2σ_i²) = (1/4 + 4/9 + 1/9)/2 (Lemma 12, Thm 13);
    a claim of 0.9 of it is refuted by a lower bound on some D_α, the exact value is certified."""
    rho = (1 / 4 + 4 / 9 + 1 / 9) / 2
    phases = [
        {"name": "single", "mechanism": {"name": "gaussian", "sigma": 2.0}},
        {"name": "composed", "times": 4, "mechanism": {"name": "gaussian", "sigma": 3.0}},
        {"name": "single", "mechanism": {"name": "gaussian", "sigma": 1.5, "sensitivity": 0.5}},
    ]
    claim = parse_claim({"scheme": {"name": "sequence", "phases": phases}, "rho": factor * rho * (1 + 1e-12)})
    assert claim.model == GAUSSIANS
    assert certify(claim).verdict is verdict

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "two-phase-run.json"


def test_readme_shows_the_example_claim_file():
    """The docs' sequence claim (docs/theory/phases.md) is the example file (less its ``source``), and it parses."""
    readme = (ROOT / "docs" / "theory" / "phases.md").read_text(encoding="utf-8")
    assert "docs/examples/two-phase-run.json" in readme
    shown = next(block for block in re.findall(r"```json\n(.*?)```", readme, flags=re.S) if '"sequence"' in block)
    from_file = load_claim(EXAMPLE)
    assert parse_claim(json.loads(shown)) == dataclasses.replace(from_file, source="")
    assert from_file.model == Sequence((Poisson(Gaussian(1.1), 0.01, 1000), Poisson(Gaussian(0.9), 0.01, 500)))


@pytest.mark.slow
def test_readme_example_is_certified_by_pld_and_not_by_rdp_alone(capsys):
    """The README's commands: CERTIFIED (exit 0) with the PLD, INCONCLUSIVE (exit 3) with RDP only."""
    assert main(["certify", str(EXAMPLE), "--method", "rdp"]) == Verdict.INCONCLUSIVE.exit_status
    assert main(["certify", str(EXAMPLE), "--method", "rdp", "--method", "pld"]) == Verdict.CERTIFIED.exit_status
    assert "(pld, upper bound)" in capsys.readouterr().out
