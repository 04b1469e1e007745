"""``verifier audit``: the findings the issue expects, found unprompted on the audit's own grid.

Independent references: the true ε of a composition of Gaussians is the closed form of Balle & Wang
2018 (Thm 8) for μ = Δ√T/σ, evaluated here with scipy; the peers' numbers are the peers' own.
"""

from __future__ import annotations

import json
import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from verifier.audit import PeerMissing, audit
from verifier.cli import main

pytestmark = pytest.mark.peer


def gaussian_epsilon(mu: float, delta: float) -> float:
    """ε(δ) of N(μ, 1) vs N(0, 1) (Balle & Wang 2018, Thm 8)."""
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, -50, 500, xtol=1e-13)


def rows_of(report, accountant, relation):
    return {r.case: r for r in report.rows if r.accountant == accountant and r.relation == relation}


def test_dp_accounting_rdp_replace_one_is_found(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dp_accounting")
    import verifier.audit.dp_accounting as audit_module

    monkeypatch.setattr(audit_module, "_opacus_installed", lambda: False)  # Opacus's rows: test_opacus_beside_dp_accounting (slow: torch)
    out = tmp_path / "report.json"
    assert main(["audit", "dp_accounting", "--quick", "--out", str(out)]) == 1  # findings
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    rdp_replace = {r["case"]: r for r in report["rows"] if r["accountant"] == "dp_accounting RdpAccountant" and r["relation"] == "replace_one"}
    # google/differential-privacy #378: full batch (n = B = 1000), σ = 4, T = 100, δ = 1e-5.
    full = rdp_replace["gaussian(sigma=4, sensitivity=1) without_replacement(dataset_size=1000, batch_size=1000, steps=100), δ=1e-05"]
    true_eps = gaussian_epsilon(2 * math.sqrt(100) / 4, 1e-5)  # sensitivity 2C: μ = 5
    assert true_eps == pytest.approx(33.1037, abs=1e-4)
    assert full["status"] == "UNSOUND" and full["peer_epsilon"] == pytest.approx(14.1322, abs=1e-4)
    lower, upper = full["verifier_bracket"]
    assert lower <= true_eps <= upper and upper - lower < 0.01
    assert full["verdict"] == "VIOLATED" and full["reproducer"].startswith("verifier certify")
    # A single Gaussian under replace-one: the RDP accountant ignores the doubled sensitivity.
    single = rdp_replace["gaussian(sigma=1, sensitivity=1) single(), δ=1e-05"]
    assert single["status"] == "UNSOUND" and single["verifier_bracket"][0] == pytest.approx(gaussian_epsilon(2.0, 1e-5), rel=1e-9)
    # Where it does not bite: batch 1 of 1000, its loose bound stays above the truth.
    tiny = rdp_replace["gaussian(sigma=4, sensitivity=1) without_replacement(dataset_size=1000, batch_size=1, steps=100), δ=1e-05"]
    assert tiny["status"] == "sound"
    assert "does not bite (at or above verifier's upper bound) at:" in printed and "batch_size=1," in printed
    # Everything else dp_accounting says on the grid is sound (add/remove, its PLD accountant), but
    # for randomized response composed (test_dp_accounting_pld_composes_randomized_response_once).
    others = [r for r in report["rows"] if not (r["accountant"] == "dp_accounting RdpAccountant" and r["relation"] == "replace_one")]
    unsound = {r["group"] for r in others if r["status"] != "sound"}
    assert others and unsound == {"RandomizedResponseDpEvent"}
    assert "per class:" in printed and "refused by verifier" in printed
    assert "opacus is not installed" in printed and not any(r["accountant"].startswith("opacus") for r in report["rows"])
    # ZCDpEvent and RepeatAndSelectDpEvent are judged (RDP accountant only: its PLD refuses them), sound.
    groups = {r["group"] for r in report["rows"] if r["accountant"] == "dp_accounting RdpAccountant"}
    assert {"ZCDpEvent", "RepeatAndSelectDpEvent"} <= groups


@pytest.mark.slow  # imports torch (~15 s)
def test_opacus_beside_dp_accounting():
    """On a DP-SGD event Opacus's accountants run on the same history: RDP and PRV sound, the GDP
    approximation below verifier's lower bound, with a reproducer certify decides VIOLATED; a
    history of two noise levels is not given to the GDP accountant (it reads only the last phase)."""
    pytest.importorskip("dp_accounting")
    pytest.importorskip("opacus")
    from dp_accounting import dp_event

    from verifier.audit.dp_accounting import judge_event

    step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1))
    rows = {r.accountant: r for r in judge_event("add_or_remove", dp_event.SelfComposedDpEvent(step, 1000), "PoissonSampledDpEvent(GaussianDpEvent)", {})}
    assert rows["opacus RDPAccountant"].status == rows["opacus PRVAccountant"].status == "sound"
    gdp = rows["opacus GaussianAccountant"]
    assert gdp.status == "UNSOUND" and gdp.verdict == "VIOLATED" and gdp.reproducer.startswith("verifier certify")
    assert gdp.peer_epsilon == pytest.approx(1.37743, abs=1e-5) and gdp.bracket.lower > 1.514
    two = dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(step, 30), dp_event.GaussianDpEvent(4.0)])
    names = {r.accountant for r in judge_event("add_or_remove", two, "ComposedDpEvent", {})}
    assert {"opacus RDPAccountant", "opacus PRVAccountant"} <= names and "opacus GaussianAccountant" not in names


def test_jax_privacy_audit_is_skipped_without_it(monkeypatch):
    import sys

    for name in [m for m in sys.modules if m == "jax_privacy" or m.startswith("jax_privacy.")] + ["jax_privacy"]:
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError, as when not installed (also once imported)
    report = audit("jax_privacy", quick=True)
    assert "not installed" in report.skipped and "jax-privacy" in report.skipped and not report.rows


def test_dp_accounting_pld_composes_randomized_response_once(tmp_path):
    """dp_accounting 0.6's PLDAccountant drops the count of a SelfComposedDpEvent around
    RandomizedResponseDpEvent: 10 steps of binary RR at p = 1/2 (ε0 = ln 3) get ε(1e-5) = ln 3. The
    truth, from the binomial law of the composed loss (2j − 10)·ln 3 in mpmath: δ(1.1) > 0.05."""
    import mpmath

    pytest.importorskip("dp_accounting")
    from dp_accounting import NeighboringRelation, dp_event
    from dp_accounting.pld import pld_privacy_accountant

    from verifier.adapters.dp_event import claim_object_from_dp_event
    from verifier.audit import judge

    event = dp_event.SelfComposedDpEvent(dp_event.RandomizedResponseDpEvent(0.5, 2), 10)
    eps = pld_privacy_accountant.PLDAccountant(NeighboringRelation.REPLACE_ONE).compose(event).get_epsilon(1e-5)
    row = judge("dp_accounting PLDAccountant", claim_object_from_dp_event(event, epsilon=1.0, delta=1e-5, neighboring="replace_one"), eps)
    assert eps == pytest.approx(math.log(3), rel=1e-3)
    assert row.status == "UNSOUND" and row.verdict == "VIOLATED" and row.bracket.lower > 10.9
    ln3 = mpmath.log(3)
    delta = mpmath.fsum(mpmath.binomial(10, j) * mpmath.mpf(0.75) ** j * mpmath.mpf(0.25) ** (10 - j) * max(0, 1 - mpmath.e ** (1.1 - (2 * j - 10) * ln3)) for j in range(11))
    assert delta > 0.05


def test_reproducer_is_violated(capsys):
    pytest.importorskip("dp_accounting")
    args = "certify --mechanism gaussian --sigma 4.0 --scheme composed --times 100 --neighboring replace_one --epsilon 14.132226163159334 --delta 1e-05"
    assert main(args.split()) == 1
    assert capsys.readouterr().out.startswith("VIOLATED")


def test_autodp_negative_epsilon_is_found():
    pytest.importorskip("autodp")
    report = audit("autodp", quick=True)
    negative = [r for r in report.findings if r.peer_epsilon < 0]
    assert negative, "autodp returned no negative ε on the grid"
    for row in negative:
        assert row.bracket.lower > 0 and row.verdict == "VIOLATED"
    assert all("phi" in r.accountant for r in report.findings)  # the analytical route stays sound
    analytic = [r for r in report.rows if "analytical (approxDP)" in r.accountant]
    assert analytic and all(r.status == "sound" for r in analytic)


@pytest.mark.slow  # imports torch (~15 s)
def test_opacus_gdp_below_lower_bound_rdp_and_prv_sound():
    pytest.importorskip("opacus")
    report = audit("opacus", quick=True)
    by = {}
    for row in report.rows:
        by.setdefault(row.accountant, []).append(row)
    assert all(r.status == "sound" for r in by["opacus RDPAccountant"] + by["opacus PRVAccountant"])
    gdp = by["opacus GaussianAccountant"]
    assert any(r.status == "UNSOUND" and r.verdict == "VIOLATED" for r in gdp)
    # the TPR its μ implies (μ-GDP) is below verifier's rigorous lower bound on TPR (issue 26)
    tpr = by["opacus GaussianAccountant (μ-GDP)"]
    assert len(tpr) == 6 and all(r.quantity == "tpr" and r.status == "UNSOUND" and r.verdict == "VIOLATED" for r in tpr)
    # a shuffled run (poisson_sampling=False) reported as Poisson: below the shuffled lower end (issue 24)
    shuffled = [r for r in report.rows if "poisson_sampling=False" in r.accountant]
    assert len(shuffled) == 3 and all(r.status == "UNSOUND" and r.verdict == "VIOLATED" for r in shuffled)
    assert all("--scheme shuffled" in r.reproducer and r.bracket.lower > 6.28 for r in shuffled)


def test_missing_peer_is_reported_skipped(monkeypatch, capsys):
    import verifier.audit.autodp as module

    def missing(**kwargs):
        raise PeerMissing("autodp is not installed; install it with: pip install autodp")

    monkeypatch.setattr(module, "rows", missing)
    assert main(["audit", "autodp"]) == 3  # nothing checked is not a clean audit (issue 41: `audit opacus` exited 0)
    assert "autodp: skipped (autodp is not installed" in capsys.readouterr().out


def test_small_batch_fraction_still_bites_at_sigma_one():
    """At σ = 1 even one record in 1000 per batch is understated: the worst neighbours (every other
    record at −C, the replaced one C vs −C) make the step the Poisson pair with shift 2C, whose ε
    dp_accounting's own PLD accountant computes (add/remove, rate 0.001, σ = 1/2): 2.1086."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import NeighboringRelation, dp_event
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    from verifier.adapters.dp_event import claim_object_from_dp_event
    from verifier.audit import judge

    event = dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(1000, 1, dp_event.GaussianDpEvent(1.0)), 100)
    eps_rdp = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE).compose(event).get_epsilon(1e-5)
    poisson = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.001, dp_event.GaussianDpEvent(0.5)), 100)
    eps_pair = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE).compose(poisson).get_epsilon(1e-5)
    row = judge("rdp", claim_object_from_dp_event(event, epsilon=1.0, delta=1e-5, neighboring="replace_one"), eps_rdp)
    assert row.status == "UNSOUND" and eps_rdp == pytest.approx(0.6649, abs=1e-4)
    assert row.bracket.lower == pytest.approx(eps_pair, rel=1e-3)  # dp_accounting's PLD is pessimistic by ~1e-4


def test_catalogue_rows_report_the_shrunk_case():
    from verifier.audit import catalogue_rows
    from verifier.properties import Accountant
    from verifier.schemes import Single

    def scaled(scheme, delta):
        return 0.97 * gaussian_epsilon(1 / scheme.pair.sigma, delta)

    rows = catalogue_rows(Accountant("scaled", scaled, schemes=(Single,)), examples=3)
    assert [r.check for r in rows] == ["soundness"]
    assert rows[0].status == "UNSOUND" and rows[0].case == "gaussian single(sigma=0.5, sensitivity=1.0), δ=0.001"
    assert rows[0].reproducer.startswith("verifier certify --mechanism gaussian --sigma 0.5")


#: (σ, t, k, epochs, δ) cells of random allocation that both allocation peers accept.
ALLOCATION_CELL = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "allocation", "steps": 10, "k": 1, "epochs": 1}, "delta": 1e-5, "epsilon": 1.0}


def test_pld_accounting_encloses_verifier():
    """pld-accounting (an independent PLD implementation of random allocation) returns (upper, lower)
    that enclose verifier's rigorous bracket on the quick grid, and neither end is unsound."""
    pytest.importorskip("PLD_accounting")
    report = audit("pld_accounting", quick=True)
    assert len(report.rows) == 6 and not report.findings
    by_case: dict = {}
    for row in report.rows:
        by_case.setdefault(row.case, {})["upper" if row.accountant.endswith("(upper)") else "lower"] = row
    for case, ends in by_case.items():
        bracket = ends["upper"].bracket
        assert ends["lower"].peer_epsilon <= bracket.lower and bracket.upper <= ends["upper"].peer_epsilon, case
        assert ends["upper"].peer_epsilon <= 1.05 * bracket.upper, case  # informative, not vacuous


def test_random_allocation_one_cell():
    """random-allocation's RDP_DCO upper bound and its lower bound, σ = 1, t = 10, δ = 1e-5: the
    lower bound lies below verifier's upper bound and the upper bound above verifier's lower bound
    (both peer numbers are the package's own)."""
    pytest.importorskip("random_allocation")
    from random_allocation import PrivacyParams, SchemeConfig
    from random_allocation.comparisons.structs import Direction, Verbosity
    from random_allocation.random_allocation_scheme.lower_bound import allocation_epsilon_lower_bound
    from random_allocation.random_allocation_scheme.RDP_DCO import allocation_epsilon_RDP_DCO

    from verifier.audit import judge

    params, config = PrivacyParams(sigma=1.0, num_steps=10, delta=1e-5), SchemeConfig(verbosity=Verbosity.NONE)
    upper = judge("RDP_DCO", ALLOCATION_CELL, allocation_epsilon_RDP_DCO(params, config, Direction.BOTH))
    lower = judge("lower_bound", ALLOCATION_CELL, allocation_epsilon_lower_bound(params, config, Direction.BOTH), side="lower")
    assert upper.status == lower.status == "sound"
    assert lower.peer_epsilon == pytest.approx(2.1817, abs=1e-3) and upper.peer_epsilon == pytest.approx(2.8296, abs=1e-3)
    assert lower.peer_epsilon <= upper.bracket.lower <= upper.bracket.upper <= upper.peer_epsilon


@pytest.mark.slow  # every method on the quick grid (~15 s)
def test_random_allocation_audit_finds_nothing(tmp_path):
    pytest.importorskip("random_allocation")
    out = tmp_path / "report.json"
    assert main(["audit", "random_allocation", "--quick", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["findings"] == 0 and len(report["rows"]) == 18


def test_absent_allocation_peers_are_skipped(monkeypatch):
    import sys

    for module in ("random_allocation", "PLD_accounting"):
        monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError, as when not installed
    for peer in ("random_allocation", "pld_accounting"):
        report = audit(peer, quick=True)
        assert "not installed" in report.skipped and not report.rows


def test_judge_tpr_sound_at_the_exact_gdp_curve_and_unsound_below():
    """Composed Gaussians are exactly μ-GDP (μ = √T/σ): a peer stating Φ(Φ⁻¹(α) + μ) is inside
    verifier's TPR bracket (sound); 10% below the closed form is refuted and certify agrees."""
    from scipy.stats import norm

    from verifier.audit import judge_tpr

    claim = {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "composed", "times": 4}, "epsilon": 1.0, "delta": 1e-5}
    exact = float(norm.cdf(norm.ppf(1e-2) + 1.0))
    row = judge_tpr("peer", claim, 1e-2, exact)
    assert row.status == "sound" and row.bracket.lower <= exact <= row.bracket.upper * (1 + 1e-12)  # scipy's Φ is float-accurate
    assert row.to_dict()["quantity"] == "tpr" and "peer_tpr" in row.to_dict()
    low = judge_tpr("peer", claim, 1e-2, 0.9 * exact)
    assert low.status == "UNSOUND" and low.verdict == "VIOLATED" and "--claim-tpr" in low.reproducer


def test_tradeoff_rows_skip_cleanly_without_the_main_branch_api():
    """dp_accounting 0.6 (the registry's) has no get_true_positive_rates: no rows, no error (issue 40);
    with main installed (a scratch environment, not CI) the rows are judged by judge_tpr."""
    pytest.importorskip("dp_accounting")
    from verifier.audit.dp_accounting import _pld_class, tradeoff_rows

    if hasattr(_pld_class(), "get_true_positive_rates"):
        pytest.skip("dp_accounting's main branch is installed: its rows are exercised by the audit itself")
    assert tradeoff_rows(quick=True) == []


def test_kl_upper_confidence_is_the_chernoff_tail_inverted():
    """The bound p solves exp(−N·KL(mean‖p)) = level (mpmath's root of the definition), lies above the
    mean, and covers at its rate: for Bernoulli(0.05) means of N = 500 draws (exact binomial law), the
    probability that the bound falls below 0.05 is at most the level. Catches KL's arguments swapped
    (a bound below the mean) and a two-sided level (root at level/2)."""
    import mpmath
    from scipy.stats import binom

    from verifier.audit.jax_privacy import kl_upper_confidence

    mean, n, level = 0.02, 2000, 0.05
    got = kl_upper_confidence(mean, n, level)

    def kl(q, p):
        return q * mpmath.log(q / p) + (1 - q) * mpmath.log((1 - q) / (1 - p))

    ref = mpmath.findroot(lambda p: kl(mpmath.mpf(mean), p) - mpmath.log(1 / mpmath.mpf(level)) / n, (0.021, 0.2), solver="anderson")
    assert got > mean and abs(got - float(ref)) < 1e-9
    p, draws = 0.05, 500
    miss = sum(binom.pmf(k, draws, p) for k in range(draws + 1) if kl_upper_confidence(k / draws, draws, level) < p)
    assert miss <= level


@pytest.mark.slow  # 20 Monte Carlo estimates of 2000 jax_privacy samples and a PLD bracket (~30 s)
def test_jax_privacy_monte_carlo_rows_hold_their_rate():
    pytest.importorskip("jax_privacy.experimental.monte_carlo")
    from verifier.audit.jax_privacy import monte_carlo_rows

    rows = monte_carlo_rows(quick=True)
    assert {r.relation for r in rows} == {"add", "remove"} and all(r.quantity == "delta" for r in rows)
    assert all(r.status == "sound" for r in rows), [r.note for r in rows]
    ucb = [r for r in rows if "UCB" in r.accountant]
    assert all(r.peer_epsilon >= r.bracket.lower for r in ucb)  # 0 of 10 below at these parameters (measured)


def test_canary_auditor_gdp_estimate_lands_above_randomized_response_epsilon():
    """Issue 40: randomized response with ε0 = 1 is 1-DP, so every (ε, δ) lower bound must be <= 1 (closed
    form, not verifier's number). jax_privacy's epsilon_clopper_pearson stays below it; epsilon_from_gdp
    (an estimate by its docstring, read as a lower bound in audits) lands near 5.4 in every run."""
    pytest.importorskip("jax_privacy.auditing")
    from verifier.audit.jax_privacy import auditor_rows

    rows = {(r.accountant.rsplit(".", 1)[1], r.case.split("(")[0]): r for r in auditor_rows(quick=True)}
    gdp, cp = rows["epsilon_from_gdp", "rr"], rows["epsilon_clopper_pearson", "rr"]
    assert gdp.status == "UNSOUND" and gdp.peer_epsilon > 1.0 and cp.status == "sound" and cp.peer_epsilon <= 1.0
    assert rows["epsilon_from_gdp", "gaussian"].status == "sound"
