"""The Python entry points (issue 41): ``verifier.certify``, ``verifier.epsilon``, ``verifier.delta``
and ``verifier.tradeoff`` on every kind of input, checked against closed forms at high precision
(mpmath) and against the peer dp_accounting. Each test names the broken implementation it catches."""

from __future__ import annotations

import subprocess
import sys

import mpmath
import pytest

import verifier
from verifier import InvalidArgument
from verifier.certify.verdict import Verdict

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)

POISSON = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}}


def gaussian_delta(sigma: float, eps: float) -> mpmath.mpf:
    """δ(ε) of the Gaussian mechanism at sensitivity 1 (Balle & Wang 2018, Thm 8)."""
    s = mpmath.mpf(sigma)
    return mpmath.ncdf(-eps * s + 1 / (2 * s)) - mpmath.exp(eps) * mpmath.ncdf(-eps * s - 1 / (2 * s))


def test_delta_brackets_the_gaussian_closed_form():
    # catches: verifier.delta returning another quantity (ε at δ) or an unrounded bracket
    result = verifier.delta(sigma=1.0, epsilon=1.0)
    truth = gaussian_delta(1.0, 1.0)
    assert result.bracket.lower <= truth <= result.bracket.upper
    assert result.bracket.upper - result.bracket.lower < 1e-12
    assert result.quantity is verifier.Quantity.DELTA and result.at == 1.0


def test_epsilon_brackets_the_root_of_the_closed_form():
    # catches: the keyword form building another model (e.g. sigma dropped, answering σ = default)
    truth = mpmath.findroot(lambda e: gaussian_delta(2.0, e) - mpmath.mpf("1e-5"), 2.0)
    result = verifier.epsilon(sigma=2.0, delta=1e-5)
    assert result.bracket.lower <= truth <= result.bracket.upper
    assert result.bracket.upper - result.bracket.lower < 1e-6


def test_tradeoff_brackets_the_gaussian_trade_off_function():
    # TPR(α) = Φ(Φ⁻¹(α) + 1/σ) for the Gaussian (Dong, Roth & Su 2022, Eq. 6); catches a β returned for TPR
    truth = mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf("0.05") - 1) + 1)
    result = verifier.tradeoff(sigma=1.0, fpr=0.05)
    assert result.bracket.lower <= truth <= result.bracket.upper


def test_peer_names_mean_the_same_as_ours():
    # catches: noise_multiplier/sampling_probability/num_steps ignored or mapped to the wrong field
    ours = verifier.epsilon(sigma=1.0, scheme="poisson", rate=0.01, steps=100, delta=1e-5)
    peers = verifier.epsilon(noise_multiplier=1.0, scheme="poisson", sampling_probability=0.01, num_steps=100, delta=1e-5)
    assert peers.bracket == ours.bracket
    claim = {"mechanism": {"name": "gaussian", "noise_multiplier": 1.0}, "scheme": {"name": "poisson", "sample_rate": 0.01, "num_steps": 100}}
    assert verifier.claim_of(claim, epsilon=1.0, delta=1e-5).model == verifier.claim_of(POISSON | {"scheme": {"name": "poisson", "rate": 0.01, "steps": 100}}, epsilon=1.0, delta=1e-5).model
    with pytest.raises(InvalidArgument, match="sigma a second time"):
        verifier.claim_of({"mechanism": {"name": "gaussian", "sigma": 1.0, "noise_multiplier": 2.0}, "scheme": {"name": "single"}}, epsilon=1.0, delta=1e-5)


@pytest.fixture(scope="module")
def poisson_event():
    dp = pytest.importorskip("dp_accounting")
    return dp.SelfComposedDpEvent(dp.PoissonSampledDpEvent(0.01, dp.GaussianDpEvent(1.0)), 1000)


@pytest.fixture(scope="module")
def peer_epsilon(poisson_event):
    """dp_accounting's PLD ε at δ = 1e-5 (its pessimistic estimate at a fine discretisation)."""
    import dp_accounting as dp

    accountant = dp.pld.PLDAccountant(value_discretization_interval=1e-4)
    return accountant.compose(poisson_event).get_epsilon(1e-5)


def test_dp_event_is_decided_around_the_peers_epsilon(poisson_event, peer_epsilon):
    # catches: the DpEvent read as another model (rate and σ swapped, count dropped): the verdicts
    # would not flip around dp_accounting's ε
    above = verifier.certify(poisson_event, epsilon=peer_epsilon + 0.02, delta=1e-5)
    below = verifier.certify(poisson_event, epsilon=peer_epsilon - 0.02, delta=1e-5)
    assert above.verdict is Verdict.CERTIFIED and below.verdict is Verdict.VIOLATED
    worst = max(above.epsilon.values(), key=lambda b: b.upper)
    assert worst.lower - 1e-3 <= peer_epsilon <= worst.upper + 1e-3
    assert above.certificate["verdict"] == "CERTIFIED" and above.exit_status == 0


def test_dp_accounting_accountant_is_read_through_its_ledger(poisson_event, peer_epsilon):
    # catches: an accountant refused (issue 41), or read as its empty initial ledger
    import dp_accounting as dp

    accountant = dp.pld.PLDAccountant()
    accountant.compose(poisson_event)
    assert verifier.certify(accountant, epsilon=peer_epsilon + 0.02, delta=1e-5).verdict is Verdict.CERTIFIED
    from verifier.adapters import from_dp_event

    with pytest.raises(InvalidArgument, match="accountant.ledger"):  # the adapter points to the ledger
        from_dp_event(accountant, epsilon=1.0, delta=1e-5)


def test_a_missing_claimed_value_is_refused_not_read_as_zero(poisson_event):
    # catches: the adapter's placeholder ε = 0 leaking into the claim (a VIOLATED nobody asked for)
    with pytest.raises(InvalidArgument, match="epsilon"):
        verifier.certify(poisson_event, delta=1e-5)


class _OpacusLike:
    """An accountant with Opacus's interface: a history of (noise multiplier, sample rate, steps)."""

    history = [(1.0, 0.01, 1000)]

    def get_epsilon(self, delta: float) -> float:
        return 1.9  # what an RDP accountant might report: sound, loose


def test_an_opacus_accountant_is_decided_on_its_history():
    # catches: the history read with the fields swapped (σ = 0.01 would be VIOLATED)
    result = verifier.certify(_OpacusLike(), delta=1e-5)
    assert result.claim.epsilon == 1.9 and result.verdict is Verdict.CERTIFIED


def test_a_real_opacus_accountant():
    accountants = pytest.importorskip("opacus.accountants")
    accountant = accountants.RDPAccountant()
    for _ in range(100):
        accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    assert verifier.certify(accountant, delta=1e-5).verdict is Verdict.CERTIFIED  # RDP's ε is a sound bound


def test_time_budget_cuts_and_says_so():
    # catches: a budget ignored by the API (the pld method would run) or a cut not reported
    result = verifier.epsilon(sigma=1.0, scheme="poisson", rate=0.01, steps=1000, delta=1e-5, time_budget=0)
    assert "pld" in result.cut and "pld" not in result.ran
    assert "pld" in verifier.epsilon(sigma=1.0, scheme="poisson", rate=0.01, steps=1000, delta=1e-5).ran


def test_errors_are_the_commands():
    # catches: a bad value reaching the computation (a traceback or a NaN) instead of InvalidArgument
    with pytest.raises(InvalidArgument, match="sigma"):
        verifier.epsilon(sigma=-1.0, delta=1e-5)
    with pytest.raises(InvalidArgument, match="not a flag"):
        verifier.epsilon(sgima=1.0, delta=1e-5)
    with pytest.raises(InvalidArgument, match="delta"):
        verifier.epsilon(sigma=1.0, delta=1.5)
    with pytest.raises(InvalidArgument, match="must be a Claim"):
        verifier.certify(3.0, epsilon=1.0, delta=1e-5)


def test_certify_is_both_the_package_and_the_function():
    # catches: the function shadowing the package (verifier.certify.verdict unreachable) or the reverse
    import verifier.certify.verdict as verdict

    assert verifier.certify.verdict is verdict and callable(verifier.certify)
    assert verifier.certify(POISSON, epsilon=2.0, delta=1e-5).verdict is Verdict.CERTIFIED


def test_import_verifier_loads_no_numerics():
    # catches: a return to importing numpy and the pairs at package import (issue 41: start-up)
    code = "import sys, verifier; print(sorted(m for m in ('numpy', 'flint', 'verifier.pairs', 'verifier.api') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_prv_objects_and_claim_files_give_the_hand_written_claim(tmp_path):
    # catches: a PRV's p and σ swapped, its count dropped, or a path read as something else
    import json

    prv = pytest.importorskip("prv_accountant")
    mechanism = prv.PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=0.01)
    by_hand = verifier.claim_of(POISSON, epsilon=2.0, delta=1e-5)
    assert verifier.claim_of(mechanism, num_self_compositions=1000, epsilon=2.0, delta=1e-5).model == by_hand.model
    path = tmp_path / "claim.json"
    path.write_text(json.dumps({**POISSON, "epsilon": 2.0, "delta": 1e-5}))
    assert verifier.claim_of(str(path)).model == by_hand.model and verifier.claim_of(path, epsilon=3.0).epsilon == 3.0


def test_the_documented_examples_run():
    # the docstrings' examples are the API's documentation: each must run and print what it shows
    import doctest

    import verifier.api

    failures, tried = doctest.testmod(verifier.api, verbose=False)
    assert tried >= 4 and failures == 0
